#include "cli/check_config_command.h"

#include <iostream>
#include <memory>
#include <string>

#include "app/config_check.h"

namespace hookrelay::cli {

void AddCheckConfigCommand(Command app, int& exit_code) {
  auto path = std::make_shared<std::string>();
  Command cmd = app.Subcommand(
      "check-config",
      "Check a config file as serve would (syntax, fields, catalog), without starting");
  cmd.Add("file", *path, "TOML config file (hookrelay.toml)").Required();
  cmd.Callback([path, &exit_code] {
    Result<std::string> checked = app::CheckConfigFile(*path);
    if (!checked.ok()) {
      std::cerr << "hookrelay check-config: " << checked.status().message() << std::endl;
      exit_code = 2;
      return;
    }
    std::cout << *checked << std::endl;
    exit_code = 0;
  });
}

}  // namespace hookrelay::cli
