#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

// Small JSON helpers the API's views share (internal to src/api/).

namespace hookrelay::api {

// RFC 3339 UTC with milliseconds, or null.
boost::json::value TimeOrNull(const std::optional<TimePoint>& t);

// The length of the longest prefix of `s` that is valid UTF-8 (RFC 3629: no overlongs,
// surrogates or code points past U+10FFFF).
size_t ValidUtf8Prefix(std::string_view s);

// The string, or null.
boost::json::value StringOrNull(const std::optional<std::string>& s);

// A list's shape: {"items": […], "next_cursor": … (null when it is the last page)}.
boost::json::object List(boost::json::array items, boost::json::value next_cursor = nullptr);

}  // namespace hookrelay::api
