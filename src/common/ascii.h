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

}  // namespace hookrelay
