#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <string>
#include <string_view>

// How values are shown in reasons and validation errors: JSON-like, short, always valid UTF-8.
// Internal to the routing module (its tests use it too).
namespace hookrelay::routing {

// How much of a value a reason shows before cutting it with "…".
inline constexpr size_t kShownValueBytes = 60;

// `v` as compact JSON with ", " and ": " separators (`{"a": [1, 2]}`), numbers as written by
// std::to_chars (1000.0 is `1000`, 0.5 is `0.5`), cut after `limit` bytes with "…". The work done
// is bounded by `limit`, not by the size or depth of `v`.
std::string RenderValue(const boost::json::value& v, size_t limit = kShownValueBytes);

// `s` as a JSON string literal (quoted, escaped), cut like RenderValue. Bytes that are not valid
// UTF-8 are shown as U+FFFD.
std::string RenderString(std::string_view s, size_t limit = kShownValueBytes);

// `s` unquoted, with control characters escaped and invalid UTF-8 shown as U+FFFD, cut like
// RenderValue: for names that are shown bare (event types).
std::string RenderText(std::string_view s, size_t limit = kShownValueBytes);

// True when `s` is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool IsValidUtf8(std::string_view s);

}  // namespace hookrelay::routing
