#include "api/json_util.h"

#include <boost/json.hpp>

#include "common/time_format.h"

namespace hookrelay::api {

namespace json = boost::json;

json::value TimeOrNull(const std::optional<TimePoint>& t) {
  if (!t) return nullptr;
  return json::string(FormatRfc3339(*t));
}

// The length of the longest prefix of `s` that is valid UTF-8 (RFC 3629: no overlongs,
// surrogates or code points past U+10FFFF).
size_t ValidUtf8Prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
    if (c < 0x80) {
      n = 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
      n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 3;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 4;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else {
      return i;
    }
    if (i + n > s.size()) return i;
    for (size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf)) return i;
    }
    i += n;
  }
  return i;
}

json::value StringOrNull(const std::optional<std::string>& s) {
  if (!s) return nullptr;
  return json::string(*s);
}

json::object List(json::array items, json::value next_cursor) {
  return {{"items", std::move(items)}, {"next_cursor", std::move(next_cursor)}};
}

}  // namespace hookrelay::api
