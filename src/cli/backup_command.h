#pragma once

#include "cli/args.h"

namespace hookrelay::cli {

// `hookrelay backup FILE [--data DIR | --config F]` and `hookrelay restore FILE --data DIR`:
// the embedded store's online backup and its restore (docs/operations.md#backups). With a
// PostgreSQL store both say what to use instead.
void AddBackupCommands(Command app, int& exit_code);

}  // namespace hookrelay::cli
