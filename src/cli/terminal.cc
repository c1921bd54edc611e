#include "cli/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
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

}  // namespace hookrelay::cli
