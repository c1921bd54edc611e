#pragma once

namespace CLI {
class App;
}

namespace hookrelay::cli {

// Registers `replay ID [--destination D] [--json]` (POST /api/v1/events/ID/replay); prints what
// was replayed. `exit_code` is set after parsing: 0, 1 for an API error (past the replay window,
// unknown event, …), 2 for bad usage.
void AddReplayCommand(CLI::App& app, int& exit_code);

}  // namespace hookrelay::cli
