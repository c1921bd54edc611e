// hookrelay: one binary for the server and its command-line tools.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/catalog_commands.h"
#include "cli/events_command.h"
#include "cli/replay_command.h"
#include "cli/schedule_command.h"
#include "cli/serve_command.h"

int main(int argc, char** argv) {
  CLI::App app{
      "hookrelay: record every webhook durably, deliver it with retries, replay what "
      "failed"};
  app.set_version_flag("--version", std::string("hookrelay ") + HOOKRELAY_VERSION);
  app.require_subcommand(1);
  int exit_code = 0;
  hookrelay::cli::AddServeCommand(app, exit_code);
  hookrelay::cli::AddScheduleCommand(app, exit_code);
  hookrelay::cli::AddEventsCommand(app, exit_code);
  hookrelay::cli::AddCatalogCommands(app, exit_code);
  hookrelay::cli::AddReplayCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2, as documented; --help and --version exit 0.
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}
