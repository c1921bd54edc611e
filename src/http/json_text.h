#pragma once

#include <boost/json/value.hpp>
#include <string>

namespace hookrelay::http {

// JSON text as boost::json::serialize writes it, except numbers: a double with an integral value
// (|v| < 2^53) is written as an integer ("50", not "5E1"), any other as a plain decimal
// ("0.25", "0.016666666666666666", never an exponent). Every JSON the API answers and the CLI
// prints goes through here, so no reader sees scientific notation.
std::string SerializeJson(const boost::json::value& v);

}  // namespace hookrelay::http
