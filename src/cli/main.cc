// hookrelay: one binary for the server and its command-line tools.
#include <string>

#include "cli/args.h"
#include "cli/backup_command.h"
#include "cli/catalog_commands.h"
#include "cli/check_config_command.h"
#include "cli/events_command.h"
#include "cli/healthcheck_command.h"
#include "cli/key_commands.h"
#include "cli/migrate_command.h"
#include "cli/replay_command.h"
#include "cli/schedule_command.h"
#include "cli/serve_command.h"
#include "cli/simulate_command.h"
#include "cli/token_commands.h"
#include "cli/transform_command.h"

int main(int argc, char** argv) {
  using namespace hookrelay::cli;
  int exit_code = 0;
  return RunCommandLine(
      "hookrelay: record every webhook durably, deliver it with retries, replay what failed",
      std::string("hookrelay ") + HOOKRELAY_VERSION, argc, argv,
      [&exit_code](Command app) {
        AddServeCommand(app, exit_code);
        AddCheckConfigCommand(app, exit_code);
        AddHealthcheckCommand(app, exit_code);
        AddBackupCommands(app, exit_code);
        AddMigrateCommand(app, exit_code);
        AddScheduleCommand(app, exit_code);
        AddSimulateCommand(app, exit_code);
        AddEventsCommand(app, exit_code);
        AddCatalogCommands(app, exit_code);
        AddAuditCommand(app, exit_code);
        AddTokenCommands(app, exit_code);
        AddKeyCommands(app, exit_code);
        AddReplayCommand(app, exit_code);
        AddTransformCommand(app, exit_code);
      },
      exit_code);
}
