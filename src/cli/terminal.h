#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

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

}  // namespace hookrelay::cli
