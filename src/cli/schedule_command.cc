#include "cli/schedule_command.h"

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <iostream>
#include <memory>
#include <sstream>

#include "common/random.h"
#include "common/units.h"
#include "http/json_text.h"
#include "policy/schedule_json.h"

namespace hookrelay::cli {

namespace json = boost::json;

Result<policy::RetryPolicy> ResolvePolicy(const ScheduleOptions& options) {
  if (!options.policy_json.empty()) {
    boost::system::error_code ec;
    json::value v = json::parse(options.policy_json, ec);
    if (ec) {
      return Status::InvalidArgument("--policy-json is not valid JSON: " + ec.message(),
                                     "policy-json");
    }
    return policy::ParsePolicy(v);
  }
  return policy::PresetPolicy(options.policy_name);
}

namespace {

std::string Describe(const policy::RetryPolicy& p) {
  std::ostringstream out;
  out << (p.preset.empty() ? std::string("custom") : p.preset) << ": "
      << policy::StrategyName(p.strategy);
  if (p.strategy == policy::Strategy::kLadder) {
    out << " ";
    for (size_t i = 0; i < p.ladder.size(); ++i) {
      out << (i ? ", " : "") << FormatDuration(p.ladder[i]);
    }
  } else {
    out << " from " << FormatDuration(p.base);
  }
  out << "; jitter " << policy::JitterName(p.jitter) << "; cap " << FormatDuration(p.cap) << "; "
      << p.max_attempts << (p.max_attempts == 1 ? " attempt" : " attempts") << "; max duration "
      << (p.max_duration.count() ? FormatDuration(p.max_duration) : std::string("none"))
      << "; timeout " << FormatDuration(p.timeout) << "; replay window "
      << FormatDuration(p.replay_window);
  return out.str();
}

}  // namespace

std::string RenderScheduleText(const policy::RetryPolicy& p, const policy::Schedule& s) {
  std::ostringstream out;
  out << "Policy " << Describe(p) << "\n\n";
  out << "  attempt  delay      at (since first failure)\n";
  for (const auto& a : s.attempts) {
    // Rounded for reading (jitter gives "1m46s692ms"); --json keeps the exact values.
    std::string delay = a.n == 1 ? "-" : FormatDurationRounded(a.delay);
    char line[128];
    std::snprintf(line, sizeof line, "  %7d  %-9s  +%s\n", a.n, delay.c_str(),
                  FormatDurationRounded(a.at).c_str());
    out << line;
  }
  out << "\nGives up at +" << FormatDurationRounded(s.gives_up_after) << ": " << s.gives_up_reason
      << "\n";
  return out.str();
}

json::object RenderScheduleJson(const policy::RetryPolicy& p, const policy::Schedule& s) {
  return policy::ScheduleToJson(p, s);  // the same document as GET /destinations/{name}/schedule
}

void AddScheduleCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ScheduleOptions>();
  CLI::App* cmd =
      app.add_subcommand("schedule", "Show what a retry policy will do when every attempt fails");
  auto* by_name =
      cmd->add_option("--policy", options->policy_name, "A preset: default, free, pro, scale");
  auto* by_json = cmd->add_option("--policy-json", options->policy_json,
                                  "A policy as JSON, e.g. '{\"strategy\":\"exponential\",...}'");
  by_name->excludes(by_json);
  by_json->excludes(by_name);
  cmd->add_option("--seed", options->seed, "Seed for the jitter (repeatable output)");
  cmd->add_flag("--json", options->json, "Print JSON instead of a table");
  cmd->callback([options, &exit_code] {
    if (options->policy_name.empty() && options->policy_json.empty()) {
      throw CLI::RequiredError("--policy or --policy-json");
    }
    auto policy = ResolvePolicy(*options);
    if (!policy.ok()) {
      const Status& st = policy.status();
      std::cerr << "hookrelay schedule: invalid policy: "
                << (st.field().empty() ? "" : st.field() + ": ") << st.message() << "\n";
      exit_code = 2;
      return;
    }
    std::unique_ptr<Random> random;
    if (options->seed) {
      random = std::make_unique<SeededRandom>(*options->seed);
    } else {
      random = std::make_unique<SeededRandom>(SystemRandom::Instance().Next());
    }
    policy::Schedule schedule = policy::PlanSchedule(*policy, *random);
    if (options->json) {
      std::cout << http::SerializeJson(RenderScheduleJson(*policy, schedule)) << "\n";
    } else {
      std::cout << RenderScheduleText(*policy, schedule);
    }
    exit_code = 0;
  });
}

}  // namespace hookrelay::cli
