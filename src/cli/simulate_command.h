#pragma once

#include "cli/args.h"

namespace hookrelay::cli {

// `hookrelay simulate herd`: what each retry policy does to an endpoint recovering from an outage.
// The flags are parsed by sim::ParseHerdScenario and sim::ParseHerdStrategies, as the query of
// GET /api/v1/simulate is.

void AddSimulateCommand(Command app, int& exit_code);

}  // namespace hookrelay::cli
