#include "cli/simulate_command.h"

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "common/units.h"
#include "http/json_text.h"
#include "sim/herd_report.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

Status FlagError(const std::string& flag, const Status& st) {
  return Status::InvalidArgument(
      flag + ": " + (st.field().empty() ? "" : st.field() + ": ") + st.message(), flag);
}

std::string PerSecond(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

Result<sim::HerdScenario> ResolveHerdScenario(const HerdOptions& options) {
  sim::HerdScenario s;
  {
    const std::string& t = options.seed;
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size()) {
      return Status::InvalidArgument(
          "--seed: expected a whole number from 0 to 18446744073709551615, got \"" + t + "\"",
          "--seed");
    }
    s.seed = v;
  }
  {
    const std::string& t = options.events;
    int64_t v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size()) {
      return Status::InvalidArgument(
          "--events: expected a whole number of events (e.g. 500), got \"" + t + "\"", "--events");
    }
    s.events = v;
  }
  auto duration = [](const std::string& flag, const std::string& text) -> Result<Duration> {
    auto d = ParseDuration(text);
    if (!d.ok()) {
      return Status::InvalidArgument(flag + ": " + d.status().message() + " (e.g. 60s, 4m)", flag);
    }
    return d;
  };
  HR_ASSIGN_OR_RETURN(s.fail_window, duration("--fail-window", options.fail_window));
  HR_ASSIGN_OR_RETURN(s.recover_at, duration("--recover-at", options.recover_at));
  {
    auto rate = ParseRate(options.capacity);
    if (!rate.ok()) {
      return Status::InvalidArgument("--capacity: " + rate.status().message() + " (e.g. 50/s)",
                                     "--capacity");
    }
    const double per_second = *rate;
    if (per_second < 1 || per_second != std::floor(per_second) || per_second > 1e9) {
      return Status::InvalidArgument(
          "--capacity: the endpoint serves a whole number of requests each second, at least 1/s "
          "(got \"" +
              options.capacity + "\" = " + PerSecond(per_second) + "/s)",
          "--capacity");
    }
    s.capacity_per_second = static_cast<int64_t>(per_second);
  }
  Status valid = s.Validate();
  if (!valid.ok()) {
    std::string flag = valid.field() == "events"        ? "--events"
                       : valid.field() == "fail_window" ? "--fail-window"
                       : valid.field() == "recover_at"  ? "--recover-at"
                                                        : "--capacity";
    return Status::InvalidArgument(flag + ": " + valid.message(), flag);
  }
  return s;
}

Result<std::vector<sim::HerdStrategy>> ResolveHerdStrategies(const HerdOptions& options) {
  if (options.policies.empty()) return sim::DefaultHerdStrategies();
  std::vector<sim::HerdStrategy> out;
  for (const auto& [is_json, text] : options.policies) {
    auto resolve = [&](bool by_json, const std::string& t) -> Result<policy::RetryPolicy> {
      if (!by_json) {
        auto p = policy::PresetPolicy(t);
        if (!p.ok()) return FlagError("--policy", p.status());
        return p;
      }
      boost::system::error_code ec;
      json::value v = json::parse(t, ec);
      if (ec) {
        return Status::InvalidArgument(
            "--policy-json: not valid JSON: " + ec.message() + " (got '" + t + "')",
            "--policy-json");
      }
      auto p = policy::ParsePolicy(v);
      if (!p.ok()) return FlagError("--policy-json", p.status());
      return p;
    };
    HR_ASSIGN_OR_RETURN(policy::RetryPolicy p, resolve(is_json, text));
    out.push_back({sim::HerdStrategyName(p), p});
  }
  return out;
}

void AddSimulateCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<HerdOptions>();
  CLI::App* simulate =
      app.add_subcommand("simulate", "Simulate what retry policies do (no server needed)");
  simulate->require_subcommand(1);
  CLI::App* cmd = simulate->add_subcommand(
      "herd", "Show what each retry policy sends to an endpoint that recovers from an outage");
  cmd->add_option("--events", options->events, "Events whose first attempt fails (default 500)");
  cmd->add_option("--fail-window", options->fail_window,
                  "The first attempts fail at random within this time (default 60s; 1s: a burst)");
  cmd->add_option("--recover-at", options->recover_at,
                  "The endpoint refuses connections until then (default 4m)");
  cmd->add_option("--capacity", options->capacity,
                  "Requests per second the recovered endpoint serves; the rest get 503 "
                  "(default 50/s)");
  auto names = std::make_shared<std::vector<std::string>>();
  auto texts = std::make_shared<std::vector<std::string>>();
  CLI::Option* by_name = cmd->add_option("--policy", *names,
                                         "A preset to compare (repeatable): default, free, pro, "
                                         "scale; none given: the four jitters and the presets");
  CLI::Option* by_json =
      cmd->add_option("--policy-json", *texts, "A policy as JSON to compare (repeatable)");
  by_name->allow_extra_args(false);
  by_json->allow_extra_args(false);
  cmd->add_option("--seed", options->seed, "Seed for the failure times and jitter (default 1)");
  cmd->add_flag("--json", options->json, "Print JSON instead of a table");
  cmd->add_option("--svg", options->svg, "Also write a chart of requests per second to FILE");
  cmd->callback([options, names, texts, cmd, by_name, by_json, &exit_code] {
    // The order the flags were given in, across --policy and --policy-json.
    size_t next_name = 0, next_text = 0;
    for (const CLI::Option* opt : cmd->parse_order()) {
      if (opt == by_name && next_name < names->size()) {
        options->policies.emplace_back(false, (*names)[next_name++]);
      } else if (opt == by_json && next_text < texts->size()) {
        options->policies.emplace_back(true, (*texts)[next_text++]);
      }
    }
    auto fail = [&exit_code](const Status& st) {
      std::cerr << "hookrelay simulate herd: " << st.message() << "\n";
      exit_code = 2;
    };
    auto scenario = ResolveHerdScenario(*options);
    if (!scenario.ok()) return fail(scenario.status());
    auto strategies = ResolveHerdStrategies(*options);
    if (!strategies.ok()) return fail(strategies.status());
    // Opened before simulating, so a bad path fails at once, not after a long run.
    std::ofstream svg_file;
    if (!options->svg.empty()) {
      svg_file.open(options->svg, std::ios::out | std::ios::trunc);
      if (!svg_file) {
        return fail(Status::InvalidArgument("--svg: cannot write " + options->svg + ": " +
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
        return fail(Status::InvalidArgument("--svg: writing " + options->svg + " failed"));
      }
    }
    if (options->json) {
      std::cout << http::SerializeJson(sim::HerdToJson(*scenario, *strategies, results)) << "\n";
    } else {
      std::cout << sim::HerdTable(*scenario, results);
      if (!options->svg.empty()) {
        std::cout << "\nChart written to " << options->svg << "\n";
      }
    }
    exit_code = 0;
  });
}

}  // namespace hookrelay::cli
