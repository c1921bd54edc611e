// hookrelay: one binary for the server and its command-line tools.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/catalog_commands.h"
#include "cli/events_command.h"
#include "cli/help_formatter.h"
#include "cli/replay_command.h"
#include "cli/schedule_command.h"
#include "cli/serve_command.h"
#include "cli/simulate_command.h"
#include "cli/terminal.h"

int main(int argc, char** argv) {
  CLI::App app{
      "hookrelay: record every webhook durably, deliver it with retries, replay what "
      "failed"};
  app.name("hookrelay");
  app.set_version_flag("--version", std::string("hookrelay ") + HOOKRELAY_VERSION);
  app.require_subcommand(1);
  // Before the subcommands are added: each takes its parent's formatter.
  app.formatter(hookrelay::cli::MakeHelpFormatter(hookrelay::cli::TerminalWidth()));
  int exit_code = 0;
  hookrelay::cli::AddServeCommand(app, exit_code);
  hookrelay::cli::AddScheduleCommand(app, exit_code);
  hookrelay::cli::AddSimulateCommand(app, exit_code);
  hookrelay::cli::AddEventsCommand(app, exit_code);
  hookrelay::cli::AddCatalogCommands(app, exit_code);
  hookrelay::cli::AddAuditCommand(app, exit_code);
  hookrelay::cli::AddReplayCommand(app, exit_code);
  if (argc <= 1) {  // no command: what there is to run, not only "a subcommand is required"
    std::cerr << app.help() << "\nGive a command; `hookrelay COMMAND --help` tells more.\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::RequiredError& e) {
    // `hookrelay events`: the usage of the command given, with its subcommands.
    const CLI::App* deepest = &app;
    while (!deepest->get_subcommands().empty()) deepest = deepest->get_subcommands().front();
    if (deepest != &app && deepest->get_require_subcommand_min() > 0 &&
        deepest->get_subcommands().empty() &&
        std::string(e.what()).find("subcommand") != std::string::npos) {
      std::cerr << deepest->help() << "\n" << e.what() << "\n";
      return 2;
    }
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2, as documented; --help and --version exit 0.
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}
