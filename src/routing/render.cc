#include "routing/render.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <charconv>
#include <cstdint>

namespace hookrelay::routing {
namespace {

namespace json = boost::json;

// The length of the valid UTF-8 sequence starting at s[i], or 0 when there is none (overlong
// forms, surrogates and code points past U+10FFFF are invalid).
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return n;
}

class Renderer {
 public:
  explicit Renderer(size_t limit) : limit_(limit) {}

  bool Full() const { return out_.size() > limit_; }

  void Value(const json::value& v) {
    if (Full()) return;
    switch (v.kind()) {
      case json::kind::null: out_ += "null"; break;
      case json::kind::bool_: out_ += v.get_bool() ? "true" : "false"; break;
      case json::kind::int64: Number(v.get_int64()); break;
      case json::kind::uint64: Number(v.get_uint64()); break;
      case json::kind::double_: Number(v.get_double()); break;
      case json::kind::string: String(v.get_string(), true); break;
      case json::kind::array: {
        out_ += '[';
        bool first = true;
        for (const json::value& e : v.get_array()) {
          if (Full()) return;
          if (!first) out_ += ", ";
          first = false;
          Value(e);
        }
        out_ += ']';
        break;
      }
      case json::kind::object: {
        out_ += '{';
        bool first = true;
        for (const auto& [key, e] : v.get_object()) {
          if (Full()) return;
          if (!first) out_ += ", ";
          first = false;
          String(key, true);
          out_ += ": ";
          Value(e);
        }
        out_ += '}';
        break;
      }
    }
  }

  void String(std::string_view s, bool quoted) {
    if (quoted) out_ += '"';
    for (size_t i = 0; i < s.size() && !Full();) {
      const char c = s[i];
      const auto u = static_cast<unsigned char>(c);
      if (u >= 0x80) {
        const size_t n = Utf8Length(s, i);
        if (n == 0) {
          out_ += "\xEF\xBF\xBD";  // U+FFFD
          ++i;
        } else {
          out_.append(s.substr(i, n));
          i += n;
        }
        continue;
      }
      ++i;
      if (c == '"' && quoted) {
        out_ += "\\\"";
      } else if (c == '\\' && quoted) {
        out_ += "\\\\";
      } else if (c == '\n') {
        out_ += "\\n";
      } else if (c == '\r') {
        out_ += "\\r";
      } else if (c == '\t') {
        out_ += "\\t";
      } else if (u < 0x20 || u == 0x7F) {
        static constexpr char kHex[] = "0123456789abcdef";
        out_ += "\\u00";
        out_ += kHex[u >> 4];
        out_ += kHex[u & 0xF];
      } else {
        out_ += c;
      }
    }
    if (quoted) out_ += '"';
  }

  std::string Take() && {
    if (Full()) {
      size_t cut = limit_;
      // Never split a UTF-8 sequence.
      while (cut > 0 && (static_cast<unsigned char>(out_[cut]) & 0xC0) == 0x80) --cut;
      out_.resize(cut);
      out_ += "…";
    }
    return std::move(out_);
  }

 private:
  template <typename T>
  void Number(T n) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n);
    if (ec == std::errc()) out_.append(buf, end);
  }

  size_t limit_;
  std::string out_;
};

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8Length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string RenderValue(const boost::json::value& v, size_t limit) {
  Renderer r(limit);
  r.Value(v);
  return std::move(r).Take();
}

std::string RenderString(std::string_view s, size_t limit) {
  Renderer r(limit);
  r.String(s, true);
  return std::move(r).Take();
}

std::string RenderText(std::string_view s, size_t limit) {
  Renderer r(limit);
  r.String(s, false);
  return std::move(r).Take();
}

}  // namespace hookrelay::routing
