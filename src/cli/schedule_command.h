#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "cli/args.h"
#include "common/result.h"
#include "policy/decision.h"
#include "policy/retry_policy.h"

namespace hookrelay::cli {

// `hookrelay schedule`: what a retry policy will do when every attempt fails. --policy and
// --policy-json are resolved by policy::ResolvePolicyArgument, as `simulate herd`'s and the
// API's are.

// The human table and the JSON document, from a computed schedule. Pure functions.
std::string RenderScheduleText(const policy::RetryPolicy& p, const policy::Schedule& s);
boost::json::object RenderScheduleJson(const policy::RetryPolicy& p, const policy::Schedule& s);

// Registers the subcommand; `run` is called after parsing and returns the exit code.
void AddScheduleCommand(Command app, int& exit_code);

}  // namespace hookrelay::cli
