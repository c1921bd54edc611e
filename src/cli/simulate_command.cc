#include "cli/simulate_command.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/terminal.h"
#include "http/json_text.h"
#include "policy/policy_argument.h"
#include "sim/herd_input.h"
#include "sim/herd_report.h"

namespace hookrelay::cli {

namespace {

// "--fail-window: …" for an error of sim/herd_input.h naming "fail_window".
Status HerdFlagError(const Status& st) {
  if (st.field().empty()) return st;
  std::string flag = "--" + st.field();
  for (char& c : flag) c = c == '_' ? '-' : c;  // fail_window → --fail-window
  return Status::InvalidArgument(flag + ": " + st.message(), flag);
}

}  // namespace

void AddSimulateCommand(CLI::App& app, int& exit_code) {
  struct Flags {
    sim::HerdInput input;
    std::string events, fail_window, recover_at, capacity, seed;
    std::vector<std::string> names, texts;  // --policy, --policy-json
    bool json = false;
    std::string svg;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* simulate =
      app.add_subcommand("simulate", "Simulate what retry policies do (no server needed)");
  simulate->require_subcommand(1);
  CLI::App* cmd = simulate->add_subcommand(
      "herd", "Show what each retry policy sends to an endpoint that recovers from an outage");
  CLI::Option* events =
      cmd->add_option("--events", flags->events, "Events whose first attempt fails (default 500)");
  CLI::Option* fail_window = cmd->add_option(
      "--fail-window", flags->fail_window,
      "The first attempts fail at random within this time (default 60s; 1s: a burst)");
  CLI::Option* recover_at =
      cmd->add_option("--recover-at", flags->recover_at,
                      "The endpoint refuses connections until then (default 4m)");
  CLI::Option* capacity = cmd->add_option(
      "--capacity", flags->capacity,
      "Requests per second the recovered endpoint serves; the rest get 503 (default 50/s)");
  CLI::Option* by_name = cmd->add_option("--policy", flags->names,
                                         "A preset to compare (repeatable): default, free, pro, "
                                         "scale; none given: the four jitters and the presets");
  CLI::Option* by_json =
      cmd->add_option("--policy-json", flags->texts, "A policy as JSON to compare (repeatable)");
  by_name->allow_extra_args(false);
  by_json->allow_extra_args(false);
  CLI::Option* seed =
      cmd->add_option("--seed", flags->seed, "Seed for the failure times and jitter (default 1)");
  cmd->add_flag("--json", flags->json, "Print JSON instead of a table");
  cmd->add_option("--svg", flags->svg, "Also write a chart of requests per second to FILE");
  cmd->callback([flags, cmd, events, fail_window, recover_at, capacity, seed, by_name, by_json,
                 &exit_code] {
    sim::HerdInput& input = flags->input;
    auto given = [](const CLI::Option* opt, const std::string& value) {
      return opt->count() ? std::optional<std::string>(value) : std::nullopt;
    };
    input.events = given(events, flags->events);
    input.fail_window = given(fail_window, flags->fail_window);
    input.recover_at = given(recover_at, flags->recover_at);
    input.capacity = given(capacity, flags->capacity);
    input.seed = given(seed, flags->seed);
    // The order the flags were given in, across --policy and --policy-json.
    size_t next_name = 0, next_text = 0;
    for (const CLI::Option* opt : cmd->parse_order()) {
      if (opt == by_name && next_name < flags->names.size()) {
        input.policies.push_back(
            {policy::PolicyArgument::Kind::kPreset, flags->names[next_name++]});
      } else if (opt == by_json && next_text < flags->texts.size()) {
        input.policies.push_back({policy::PolicyArgument::Kind::kJson, flags->texts[next_text++]});
      }
    }
    auto fail = [&exit_code](const Status& st) {
      std::cerr << "hookrelay simulate herd: " << st.message() << "\n";
      exit_code = 2;
    };
    auto scenario = sim::ParseHerdScenario(input);
    if (!scenario.ok()) return fail(HerdFlagError(scenario.status()));
    auto strategies = sim::ParseHerdStrategies(input);
    if (!strategies.ok()) return fail(HerdFlagError(strategies.status()));
    // Opened before simulating, so a bad path fails at once, not after a long run.
    std::ofstream svg_file;
    if (!flags->svg.empty()) {
      svg_file.open(flags->svg, std::ios::out | std::ios::trunc);
      if (!svg_file) {
        return fail(Status::InvalidArgument("--svg: cannot write " + flags->svg + ": " +
                                            std::strerror(errno)));
      }
    }
    std::vector<sim::HerdResult> results;
    for (const sim::HerdStrategy& s : *strategies)
      results.push_back(sim::SimulateHerd(*scenario, s));
    if (svg_file.is_open()) {
      svg_file << sim::HerdSvg(*scenario, results);
      svg_file.close();
      if (!svg_file) {
        return fail(Status::InvalidArgument("--svg: writing " + flags->svg + " failed"));
      }
    }
    if (flags->json) {
      std::cout << http::SerializeJson(sim::HerdToJson(*scenario, *strategies, results)) << "\n";
    } else {
      std::cout << sim::HerdTable(*scenario, results, TerminalWidth());
      if (!flags->svg.empty()) {
        std::cout << "\nChart written to " << flags->svg << "\n";
      }
    }
    exit_code = 0;
  });
}

}  // namespace hookrelay::cli
