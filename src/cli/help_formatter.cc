#include "cli/help_formatter.h"

#include <CLI/CLI.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/wrap.h"

namespace hookrelay::cli {

namespace {

// `name` in the left column of `column` characters and `description` wrapped to the rest of
// `width`: CLI11's layout (detail::format_help), with the right-hand column wrapped at spaces.
std::string HelpLine(const std::string& name, const std::string& description, size_t column,
                     size_t width) {
  std::string out;  // the lines before the description's first
  std::string first = "  " + name;
  if (description.empty()) return first + "\n";
  if (const size_t used = DisplayWidth(first); used >= column) {
    out = first + "\n";  // a long name takes a line of its own
    first = std::string(column, ' ');
  } else {
    first += std::string(column - used, ' ');
  }
  // At least 20 columns for the description, however narrow the terminal.
  const size_t room = width > column + 20 ? width - column : 20;
  std::istringstream lines(description);
  std::string paragraph;
  bool first_paragraph = true;
  while (std::getline(lines, paragraph)) {
    out +=
        Wrap(paragraph, first_paragraph ? first : std::string(column, ' '), column, column + room);
    first_paragraph = false;
  }
  return out;
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
    while (std::getline(lines, line)) out += Wrap(line, "", 0, width_);
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
