#pragma once

#include "cli/args.h"

namespace hookrelay::cli {

// `hookrelay keys list | rotate --new-key-file F | retire ID`: the master keys that open the
// store's data key (GET/POST/DELETE /api/v1/keys; an admin token without a scope is needed).
void AddKeyCommands(Command app, int& exit_code);

}  // namespace hookrelay::cli
