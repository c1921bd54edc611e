#include "http/json_text.h"

#include <boost/json.hpp>
#include <charconv>
#include <cmath>

namespace hookrelay::http {

namespace json = boost::json;

namespace {

void AppendNumber(std::string& out, double d) {
  if (!std::isfinite(d)) {  // JSON has no infinity or NaN; boost::json writes null-like tokens
    out += "null";
    return;
  }
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (d == std::trunc(d) && std::fabs(d) < kExact) {
    out += std::to_string(static_cast<int64_t>(d));
    return;
  }
  char buf[400];  // fixed notation of the largest double fits in 309 digits plus sign and point
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
  if (ec != std::errc()) {
    out += json::serialize(json::value(d));
    return;
  }
  out.append(buf, end);
}

void Append(std::string& out, const json::value& v) {
  switch (v.kind()) {
    case json::kind::double_: AppendNumber(out, v.get_double()); return;
    case json::kind::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.get_object()) {
        if (!first) out += ',';
        first = false;
        out += json::serialize(json::string_view(key));
        out += ':';
        Append(out, value);
      }
      out += '}';
      return;
    }
    case json::kind::array: {
      out += '[';
      bool first = true;
      for (const json::value& item : v.get_array()) {
        if (!first) out += ',';
        first = false;
        Append(out, item);
      }
      out += ']';
      return;
    }
    default: out += json::serialize(v);
  }
}

}  // namespace

std::string SerializeJson(const json::value& v) {
  std::string out;
  Append(out, v);
  return out;
}

}  // namespace hookrelay::http
