#pragma once

namespace CLI {
class App;
}

namespace hookrelay::cli {

// Registers `sources list|show NAME`, `destinations list|show NAME` and `routes list` (read-only
// views of the API; add/rm come later). `exit_code` is set after parsing.
void AddCatalogCommands(CLI::App& app, int& exit_code);

}  // namespace hookrelay::cli
