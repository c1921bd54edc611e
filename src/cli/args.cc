#include "cli/args.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/help_formatter.h"
#include "cli/terminal.h"

namespace hookrelay::cli {

Option& Option::Required() {
  option_->required();
  return *this;
}

Option& Option::Hidden() {
  option_->group("");
  return *this;
}

Option& Option::OneOf(const std::vector<std::string>& choices) {
  option_->check(CLI::IsMember(choices));
  return *this;
}

Option& Option::InRange(int64_t min, int64_t max) {
  option_->check(CLI::Range(min, max));
  return *this;
}

Option& Option::Excludes(Option other) {
  option_->excludes(other.option_);
  return *this;
}

Option& Option::OneValueEach() {
  option_->allow_extra_args(false);
  return *this;
}

bool Option::Given() const { return option_->count() > 0; }

Command Command::Subcommand(const std::string& name, const std::string& description) {
  return Command(app_->add_subcommand(name, description));
}

const std::string& Command::Name() const { return app_->get_name(); }

template <typename T>
Option Command::Add(const std::string& name, T& target, const std::string& description) {
  return Option(app_->add_option(name, target, description));
}

template Option Command::Add<std::string>(const std::string&, std::string&, const std::string&);
template Option Command::Add<int>(const std::string&, int&, const std::string&);
template Option Command::Add<int64_t>(const std::string&, int64_t&, const std::string&);
template Option Command::Add<uint64_t>(const std::string&, uint64_t&, const std::string&);
template Option Command::Add<double>(const std::string&, double&, const std::string&);
template Option Command::Add<std::optional<int64_t>>(const std::string&, std::optional<int64_t>&,
                                                     const std::string&);
template Option Command::Add<std::vector<std::string>>(const std::string&,
                                                       std::vector<std::string>&,
                                                       const std::string&);

Option Command::Flag(const std::string& name, bool& target, const std::string& description) {
  return Option(app_->add_flag(name, target, description));
}

Command& Command::RequireSubcommand() {
  app_->require_subcommand(1);
  return *this;
}

Command& Command::Callback(std::function<void()> callback) {
  // The commands' own usage errors become CLI11's, so they are reported (and exit 2) exactly as
  // a parse error is.
  app_->callback([callback = std::move(callback)] {
    try {
      callback();
    } catch (const UsageError& e) {
      throw CLI::ValidationError(e.what());
    } catch (const MissingError& e) {
      throw CLI::RequiredError(e.what());
    }
  });
  return *this;
}

bool Command::SubcommandGiven() const { return !app_->get_subcommands().empty(); }

std::vector<Option> Command::ParseOrder() const {
  std::vector<Option> order;
  for (CLI::Option* o : app_->parse_order()) order.push_back(Option(o));
  return order;
}

int RunCommandLine(const std::string& description, const std::string& version, int argc,
                   char** argv, const std::function<void(Command root)>& add,
                   const int& exit_code) {
  CLI::App app{description};
  app.name("hookrelay");
  app.set_version_flag("--version", version);
  app.require_subcommand(1);
  // Before the subcommands are added: each takes its parent's formatter.
  app.formatter(MakeHelpFormatter(TerminalWidth()));
  add(Command(&app));
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

}  // namespace hookrelay::cli
