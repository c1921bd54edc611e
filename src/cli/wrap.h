#pragma once

#include <cstddef>
#include <string>
#include <string_view>

// Laying text out in lines of a given width, for tables, detail views and --help. Pure.
namespace hookrelay::cli {

// How many characters `s` shows: its UTF-8 code points.
size_t DisplayWidth(std::string_view s);

// `text` in lines of at most `width` characters, broken at spaces: the first line after `first`
// (already on it), the others after `indent` spaces. A word longer than a line stays whole.
// Ends with a newline.
std::string Wrap(const std::string& text, const std::string& first, size_t indent, size_t width);

}  // namespace hookrelay::cli
