#pragma once

// The command line's declarations, without CLI11. Each command file declares its subcommands,
// options and callback through Command and Option; args.cc is the one file (with the help
// formatter) that includes <CLI/CLI.hpp>, which is header-only and costs about a minute of
// compile time in each file that includes it (docs/development.md, "Where compile time goes").

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace hookrelay::cli {

// Thrown by a command's own checks (in a callback, or while it reads its options): a usage
// error, exit 2 with "NAME: MESSAGE" (or MESSAGE), as CLI11's parse errors.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
  UsageError(const std::string& name, const std::string& message)
      : std::runtime_error(name + ": " + message) {}
};

// Thrown by a command's own checks when something required is missing: "WHAT is required".
class MissingError : public std::runtime_error {
 public:
  explicit MissingError(const std::string& what) : std::runtime_error(what) {}
};

// One option or positional argument of a command: a handle, cheap to copy.
class Option {
 public:
  Option& Required();
  // Left out of --help (old spellings, test hooks).
  Option& Hidden();
  Option& OneOf(const std::vector<std::string>& choices);
  Option& InRange(int64_t min, int64_t max);
  // The two cannot be given together (each side declares it).
  Option& Excludes(Option other);
  // A repeatable option takes one value per occurrence (`--policy a --policy b`).
  Option& OneValueEach();
  // Given on the command line (after the parse).
  bool Given() const;
  bool operator==(const Option& other) const { return option_ == other.option_; }

 private:
  friend class Command;
  explicit Option(CLI::Option* option) : option_(option) {}
  CLI::Option* option_;
};

// A command or subcommand: a handle, cheap to copy.
class Command {
 public:
  explicit Command(CLI::App* app) : app_(app) {}

  Command Subcommand(const std::string& name, const std::string& description);
  const std::string& Name() const;
  // Adds an option ("--name") or a positional argument ("name") that fills `target`. T is one
  // of std::string, int, int64_t, uint64_t, double, std::optional<int64_t>,
  // std::vector<std::string>.
  template <typename T>
  Option Add(const std::string& name, T& target, const std::string& description = "");
  Option Flag(const std::string& name, bool& target, const std::string& description);
  Command& RequireSubcommand();
  // Runs after a successful parse of this command. UsageError and MissingError thrown from it
  // become usage errors (exit 2).
  Command& Callback(std::function<void()> callback);
  // A subcommand of this one was given.
  bool SubcommandGiven() const;
  // The options as they were given, in order (an option given twice appears twice).
  std::vector<Option> ParseOrder() const;

 private:
  CLI::App* app_;
};

// The whole program: builds the root command, lets `add` declare the commands, parses argv.
// Returns the exit code: 2 for a usage error, 0 for --help and --version, otherwise what the
// commands' callbacks left in `exit_code`.
int RunCommandLine(const std::string& description, const std::string& version, int argc,
                   char** argv, const std::function<void(Command root)>& add, const int& exit_code);

}  // namespace hookrelay::cli
