#include "cli/wrap.h"

#include <sstream>

namespace hookrelay::cli {

size_t DisplayWidth(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string Wrap(const std::string& text, const std::string& first, size_t indent, size_t width) {
  std::string out = first;
  size_t used = DisplayWidth(first);
  bool line_empty = true;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    const size_t w = DisplayWidth(word);
    if (!line_empty && used + 1 + w > width) {
      out += "\n" + std::string(indent, ' ');
      used = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += " ";
      ++used;
    }
    out += word;
    used += w;
    line_empty = false;
  }
  return out + "\n";
}

}  // namespace hookrelay::cli
