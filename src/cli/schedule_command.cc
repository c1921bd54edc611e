#include "cli/schedule_command.h"

#include <boost/json.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/args.h"
#include "common/random.h"
#include "common/units.h"
#include "http/json_text.h"
#include "policy/policy_argument.h"
#include "policy/schedule_json.h"

namespace hookrelay::cli {

namespace json = boost::json;

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

void AddScheduleCommand(Command app, int& exit_code) {
  struct Flags {
    std::string policy_name, policy_json, seed;
    bool json = false;
  };
  auto flags = std::make_shared<Flags>();
  Command cmd =
      app.Subcommand("schedule", "Show what a retry policy will do when every attempt fails");
  Option by_name = cmd.Add("--policy", flags->policy_name, "A preset: default, free, pro, scale");
  Option by_json = cmd.Add("--policy-json", flags->policy_json,
                           "A policy as JSON, e.g. '{\"strategy\":\"exponential\",...}'");
  by_name.Excludes(by_json);
  by_json.Excludes(by_name);
  Option seed = cmd.Add("--seed", flags->seed, "Seed for the jitter (repeatable output)");
  cmd.Flag("--json", flags->json, "Print JSON instead of a table");
  cmd.Callback([flags, by_name, by_json, seed, &exit_code] {
    if (!by_name.Given() && !by_json.Given()) {
      throw MissingError("--policy or --policy-json");
    }
    auto fail = [&exit_code](const std::string& what, const Status& st) {
      std::cerr << "hookrelay schedule: " << what << st.message() << "\n";
      exit_code = 2;
    };
    const bool by_text = by_json.Given();
    auto policy = policy::ResolvePolicyArgument(
        {by_text ? policy::PolicyArgument::Kind::kJson : policy::PolicyArgument::Kind::kPreset,
         by_text ? flags->policy_json : flags->policy_name});
    if (!policy.ok()) {
      return fail("invalid policy: ",
                  policy::ArgumentError(by_text ? "--policy-json" : "--policy", policy.status()));
    }
    std::optional<uint64_t> seed_value;
    if (seed.Given()) {
      auto v = policy::ParseSeedArgument(flags->seed);
      if (!v.ok())
        return fail("",
                    policy::ArgumentError("--seed", Status::InvalidArgument(v.status().message())));
      seed_value = *v;
    }
    std::unique_ptr<Random> random;
    if (seed_value) {
      random = std::make_unique<SeededRandom>(*seed_value);
    } else {
      random = std::make_unique<SeededRandom>(SystemRandom::Instance().Next());
    }
    policy::Schedule schedule = policy::PlanSchedule(*policy, *random);
    if (flags->json) {
      std::cout << http::SerializeJson(RenderScheduleJson(*policy, schedule)) << "\n";
    } else {
      std::cout << RenderScheduleText(*policy, schedule);
    }
    exit_code = 0;
  });
}

}  // namespace hookrelay::cli
