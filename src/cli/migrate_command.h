#pragma once

#include "cli/args.h"

namespace hookrelay::cli {

// `hookrelay migrate [--dry-run] [--data DIR | --store URL | --config F]`: shows, or applies,
// the schema migrations the store is behind this build by (docs/operations.md#upgrades).
void AddMigrateCommand(Command app, int& exit_code);

}  // namespace hookrelay::cli
