#pragma once

namespace CLI {
class App;
}

namespace hookrelay::cli {

// Registers `sources`, `destinations` and `routes` with list|show (and pause|resume|
// reset-breaker for destinations) plus the commands of catalog_edit.h (add|update|rm).
// `exit_code` is set after parsing.
void AddCatalogCommands(CLI::App& app, int& exit_code);

}  // namespace hookrelay::cli
