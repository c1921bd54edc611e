#include "http/request.h"

#include <boost/json.hpp>

#include "http/json_text.h"

namespace hookrelay::http {
namespace {

char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

std::optional<std::string_view> RequestHead::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) return std::string_view(v);
  }
  return std::nullopt;
}

std::optional<std::string> RequestHead::QueryParam(std::string_view name) const {
  std::string_view rest = query;
  std::string key, value;
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    size_t eq = pair.find('=');
    std::string_view raw_key = pair.substr(0, eq);
    key.clear();
    if (!PercentDecode(raw_key, true, key) || key != name) continue;
    value.clear();
    if (eq != std::string_view::npos && !PercentDecode(pair.substr(eq + 1), true, value)) {
      continue;
    }
    return value;
  }
  return std::nullopt;
}

Response JsonError(int status, std::string_view code, std::string_view message,
                   std::string_view field) {
  boost::json::object error;
  error["code"] = code;
  error["message"] = message;
  if (!field.empty()) error["field"] = field;
  boost::json::object root;
  root["error"] = std::move(error);
  Response r;
  r.status = status;
  r.body = SerializeJson(root);  // the message may quote outside bytes
  return r;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

bool PercentDecode(std::string_view in, bool plus_is_space, std::string& out) {
  out.reserve(out.size() + in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;  // needs two hex digits
      int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return true;
}

bool DecodePathSegments(std::string_view path, std::vector<std::string>& segments) {
  segments.clear();
  if (path.empty() || path.front() != '/') return path == "*" || path.empty();
  path.remove_prefix(1);
  if (path.empty()) return true;
  while (true) {
    size_t slash = path.find('/');
    segments.emplace_back();
    if (!PercentDecode(path.substr(0, slash), false, segments.back())) return false;
    if (slash == std::string_view::npos) return true;
    path.remove_prefix(slash + 1);
  }
}

}  // namespace hookrelay::http
