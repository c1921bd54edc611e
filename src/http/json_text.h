#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

namespace hookrelay::http {

// JSON text as boost::json::serialize writes it, except numbers: a double with an integral value
// (|v| < 2^53) is written as an integer ("50", not "5E1"), any other as a plain decimal
// ("0.25", "0.016666666666666666", never an exponent). Every JSON the API answers and the CLI
// prints goes through here, so no reader sees scientific notation.
//
// Strings (and object keys) that are not valid UTF-8 are repaired on the way out (ValidUtf8), so
// bytes from outside (a received header value, a URL path, an endpoint's reason phrase) can never
// make the answer invalid JSON.
std::string SerializeJson(const boost::json::value& v);

// `text` if it is valid UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above
// U+10FFFF); otherwise a copy where every byte that is not part of a valid sequence is read as
// Latin-1 (ISO 8859-1, as HTTP's obs-text historically is): 0xFF becomes "\u00ff" (U+00FF, "ÿ"),
// a lone 0x80 becomes U+0080. Valid sequences are kept as they are. For display only: the original
// bytes are what is stored and forwarded. Pure.
std::string ValidUtf8(std::string_view text);
bool IsValidUtf8(std::string_view text);

}  // namespace hookrelay::http
