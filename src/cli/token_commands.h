#pragma once

#include "cli/args.h"

namespace hookrelay::cli {

// `hookrelay tokens create NAME --role R [--expires D] | list | revoke NAME`: the named API
// tokens (POST/GET/DELETE /api/v1/tokens; an admin token is needed).
void AddTokenCommands(Command app, int& exit_code);

}  // namespace hookrelay::cli
