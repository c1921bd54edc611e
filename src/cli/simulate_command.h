#pragma once

namespace CLI {
class App;
}

namespace hookrelay::cli {

// `hookrelay simulate herd`: what each retry policy does to an endpoint recovering from an outage.
// The flags are parsed by sim::ParseHerdScenario and sim::ParseHerdStrategies, as the query of
// GET /api/v1/simulate is.

void AddSimulateCommand(CLI::App& app, int& exit_code);

}  // namespace hookrelay::cli
