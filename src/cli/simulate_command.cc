#include "cli/simulate_command.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
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

void AddSimulateCommand(Command app, int& exit_code) {
  struct Flags {
    sim::HerdInput input;
    std::string events, fail_window, recover_at, capacity, seed;
    std::vector<std::string> names, texts;  // --policy, --policy-json
    bool json = false;
    std::string svg;
  };
  auto flags = std::make_shared<Flags>();
  Command simulate =
      app.Subcommand("simulate", "Simulate what retry policies do (no server needed)");
  simulate.RequireSubcommand();
  Command cmd = simulate.Subcommand(
      "herd", "Show what each retry policy sends to an endpoint that recovers from an outage");
  Option events =
      cmd.Add("--events", flags->events, "Events whose first attempt fails (default 500)");
  Option fail_window =
      cmd.Add("--fail-window", flags->fail_window,
              "The first attempts fail at random within this time (default 60s; 1s: a burst)");
  Option recover_at = cmd.Add("--recover-at", flags->recover_at,
                              "The endpoint refuses connections until then (default 4m)");
  Option capacity =
      cmd.Add("--capacity", flags->capacity,
              "Requests per second the recovered endpoint serves; the rest get 503 (default 50/s)");
  Option by_name = cmd.Add("--policy", flags->names,
                           "A preset to compare (repeatable): default, free, pro, "
                           "scale; none given: the four jitters and the presets");
  Option by_json =
      cmd.Add("--policy-json", flags->texts, "A policy as JSON to compare (repeatable)");
  by_name.OneValueEach();
  by_json.OneValueEach();
  Option seed = cmd.Add("--seed", flags->seed, "Seed for the failure times and jitter (default 1)");
  cmd.Flag("--json", flags->json, "Print JSON instead of a table");
  cmd.Add("--svg", flags->svg, "Also write a chart of requests per second to FILE");
  cmd.Callback([flags, cmd, events, fail_window, recover_at, capacity, seed, by_name, by_json,
                &exit_code] {
    sim::HerdInput& input = flags->input;
    auto given = [](const Option opt, const std::string& value) {
      return opt.Given() ? std::optional<std::string>(value) : std::nullopt;
    };
    input.events = given(events, flags->events);
    input.fail_window = given(fail_window, flags->fail_window);
    input.recover_at = given(recover_at, flags->recover_at);
    input.capacity = given(capacity, flags->capacity);
    input.seed = given(seed, flags->seed);
    // The order the flags were given in, across --policy and --policy-json.
    size_t next_name = 0, next_text = 0;
    for (const Option opt : cmd.ParseOrder()) {
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
