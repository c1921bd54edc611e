#include "cli/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <sstream>
#include <string>

namespace hookrelay::cli {

std::optional<size_t> ParseColumns(std::string_view text) {
  if (text.empty() || text.size() > 5) return std::nullopt;
  size_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  if (n < 1 || n > 10000) return std::nullopt;
  return n;
}

size_t TerminalWidth() {
  if (const char* columns = std::getenv("COLUMNS")) {
    if (std::optional<size_t> n = ParseColumns(columns)) return *n;
  }
  if (isatty(STDOUT_FILENO)) {
    winsize ws{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  }
  return kDefaultTerminalWidth;
}

namespace {

size_t Chars(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// `name` in the left column of `column` characters and `description` wrapped to the rest of
// `width`: CLI11's layout (detail::format_help), with the right-hand column wrapped at spaces.
std::string HelpLine(const std::string& name, const std::string& description, size_t column,
                     size_t width) {
  std::string out = "  " + name;
  if (description.empty()) return out + "\n";
  size_t used = Chars(out);
  if (used >= column) {
    out += "\n";
    used = 0;
  }
  out += std::string(column - used, ' ');
  used = column;
  // At least 20 columns for the description, however narrow the terminal.
  const size_t room = width > column + 20 ? width - column : 20;
  std::istringstream lines(description);
  std::string paragraph;
  bool first_paragraph = true;
  while (std::getline(lines, paragraph)) {
    if (!first_paragraph) {
      out += "\n" + std::string(column, ' ');
      used = column;
    }
    first_paragraph = false;
    std::istringstream words(paragraph);
    std::string word;
    bool line_empty = true;
    while (words >> word) {
      const size_t w = Chars(word);
      if (!line_empty && used - column + 1 + w > room) {
        out += "\n" + std::string(column, ' ');
        used = column;
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
  }
  return out + "\n";
}

// `text` wrapped at spaces into lines of at most `width` characters.
std::string WrapParagraph(const std::string& text, size_t width) {
  std::istringstream words(text);
  std::string out, word;
  size_t used = 0;
  while (words >> word) {
    const size_t w = Chars(word);
    if (used > 0 && used + 1 + w > width) {
      out += "\n";
      used = 0;
    }
    if (used > 0) {
      out += " ";
      ++used;
    }
    out += word;
    used += w;
  }
  return out + "\n";
}

class WrappingFormatter : public CLI::Formatter {
 public:
  explicit WrappingFormatter(size_t width) : width_(width) {
    // A narrow terminal gets a narrower name column, so descriptions keep some room.
    if (width_ < 70) column_width(width_ > 40 ? width_ - 40 : 10);
  }

  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    return HelpLine(make_option_name(opt, is_positional) + make_option_opts(opt),
                    make_option_desc(opt), column_width_, width_);
  }

  std::string make_description(const CLI::App* app) const override {
    std::istringstream lines(CLI::Formatter::make_description(app));
    std::string out, line;
    while (std::getline(lines, line)) out += WrapParagraph(line, width_);
    return out;
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    std::string out =
        HelpLine(sub->get_display_name(true), sub->get_description(), column_width_, width_);
    const std::vector<std::string>& aliases = sub->get_aliases();
    if (!aliases.empty()) {
      std::string list;
      for (const std::string& a : aliases) list += (list.empty() ? "" : ", ") + a;
      out += HelpLine("   aliases:", list, column_width_, width_);
    }
    return out;
  }

 private:
  size_t width_;
};

}  // namespace

std::shared_ptr<CLI::Formatter> MakeHelpFormatter(size_t width) {
  return std::make_shared<WrappingFormatter>(width);
}

}  // namespace hookrelay::cli
