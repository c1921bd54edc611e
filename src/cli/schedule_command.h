#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>

#include "common/result.h"
#include "policy/decision.h"
#include "policy/retry_policy.h"

namespace CLI {
class App;
}

namespace hookrelay::cli {

// `hookrelay schedule`: what a retry policy will do when every attempt fails.
struct ScheduleOptions {
  std::string policy_name;
  std::string policy_json;
  std::optional<uint64_t> seed;
  bool json = false;
};

// Resolves --policy / --policy-json into a policy; errors name the field.
Result<policy::RetryPolicy> ResolvePolicy(const ScheduleOptions& options);

// The human table and the JSON document, from a computed schedule. Pure functions.
std::string RenderScheduleText(const policy::RetryPolicy& p, const policy::Schedule& s);
boost::json::object RenderScheduleJson(const policy::RetryPolicy& p, const policy::Schedule& s);

// Registers the subcommand; `run` is called after parsing and returns the exit code.
void AddScheduleCommand(CLI::App& app, int& exit_code);

}  // namespace hookrelay::cli
