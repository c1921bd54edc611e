#pragma once

#include "cli/args.h"

namespace hookrelay::cli {

// Registers `sources`, `destinations` and `routes` with list|show (and pause|resume|
// reset-breaker for destinations) plus the commands of catalog_edit.h (add|update|rm).
// `sources rejections NAME` lists a source's rejected requests. `exit_code` is set after parsing.
void AddCatalogCommands(Command app, int& exit_code);

// Registers `audit list`: the audit trail (GET /api/v1/audit), newest first.
void AddAuditCommand(Command app, int& exit_code);

}  // namespace hookrelay::cli
