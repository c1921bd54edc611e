#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

namespace CLI {
class Formatter;
}

// The width the CLI's human output is laid out for. The lookup is here, at the edge; the
// renderers (render.h, sim/herd_report.h) take the width as an argument and do no I/O.

namespace hookrelay::cli {

// The width when nothing says otherwise (not a terminal, no COLUMNS).
inline constexpr size_t kDefaultTerminalWidth = 80;

// `COLUMNS` parsed: a whole number from 1 to 10000, else nullopt ("", "abc", "0", "-5").
std::optional<size_t> ParseColumns(std::string_view text);

// The output width: COLUMNS when it is set and valid, else the width of the terminal on stdout
// (TIOCGWINSZ), else kDefaultTerminalWidth.
size_t TerminalWidth();

// A help formatter whose option and subcommand lines fit in `width` columns: descriptions are
// wrapped at spaces into the right-hand column.
std::shared_ptr<CLI::Formatter> MakeHelpFormatter(size_t width);

}  // namespace hookrelay::cli
