#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace hookrelay {

// `s` with ASCII letters lowered (HTTP header names, schemes; not locale text).
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// `a` and `b` are equal with ASCII letters compared case-insensitively (header names), without
// allocating.
inline bool AsciiEqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// True when `s` is an HTTP token (RFC 9110 5.6.2: a header field's name, a method): one or more
// letters, digits and !#$%&'*+-.^_`|~.
inline bool IsHttpToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) continue;
    if (std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) return false;
  }
  return true;
}

}  // namespace hookrelay
