#include "http/json_text.h"

#include <boost/json.hpp>
#include <charconv>
#include <cmath>

namespace hookrelay::http {

namespace json = boost::json;

namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 if none starts there.
size_t ValidSequence(std::string_view text, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // continuation byte, C0/C1 (overlong) or F5..FF
  }
  if (i + n > text.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  }
  return n;
}

void AppendString(std::string& out, std::string_view s) {
  if (IsValidUtf8(s)) {
    out += json::serialize(json::string_view(s.data(), s.size()));
  } else {
    const std::string fixed = ValidUtf8(s);
    out += json::serialize(json::string_view(fixed));
  }
}

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
        AppendString(out, std::string_view(key.data(), key.size()));
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
    case json::kind::string: {
      const json::string& s = v.get_string();
      AppendString(out, std::string_view(s.data(), s.size()));
      return;
    }
    default: out += json::serialize(v);
  }
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = ValidSequence(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string ValidUtf8(std::string_view text) {
  if (IsValidUtf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + text.size() / 2);
  for (size_t i = 0; i < text.size();) {
    const size_t n = ValidSequence(text, i);
    if (n > 0) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    const auto c = static_cast<unsigned char>(text[i++]);  // >= 0x80: Latin-1 to UTF-8
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

std::string SerializeJson(const json::value& v) {
  std::string out;
  Append(out, v);
  return out;
}

}  // namespace hookrelay::http
