#pragma once

#include "cli/args.h"

namespace hookrelay::cli {

// `hookrelay check-config FILE`: the config checked as `serve` would check it, nothing started
// (exit 0 and what it defines; exit 2 and serve's message).
void AddCheckConfigCommand(Command app, int& exit_code);

}  // namespace hookrelay::cli
