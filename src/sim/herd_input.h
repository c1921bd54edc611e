#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "policy/policy_argument.h"
#include "sim/herd.h"

namespace hookrelay::sim {

// The herd simulation's arguments as text, as `hookrelay simulate herd`'s flags and the query
// of GET /api/v1/simulate give them, and the one parser both use. Pure.
//
// Errors are InvalidArgument whose field() is the argument's name as the API spells it —
// "events", "fail_window", "recover_at", "capacity", "seed", "policy", "policy_json" — and whose
// message does not repeat it: the CLI says "--fail-window: …", the API "fail_window: …".
struct HerdInput {
  // nullopt: HerdScenario's default (500, 60s, 4m, 50/s, 1).
  std::optional<std::string> events;       // a whole number: "500"
  std::optional<std::string> fail_window;  // a duration: "60s", "1s"
  std::optional<std::string> recover_at;   // a duration: "4m"
  std::optional<std::string> capacity;     // a rate, whole per second: "50/s"
  std::optional<std::string> seed;         // 0 to 2^64-1
  // The policies to compare, in the order given; empty: DefaultHerdStrategies().
  std::vector<policy::PolicyArgument> policies;
};

// Bounds on one run's cost, for a caller that simulates on behalf of others (the API): the work
// of SimulateHerd is proportional to the requests it simulates, and a strategy makes at most
// events × max_attempts of them.
struct HerdLimits {
  int64_t max_events = kMaxHerdEvents;
  size_t max_strategies = 16;
  // Σ over the strategies of events × max_attempts.
  int64_t max_requests = INT64_MAX;
};

// The scenario, validated (HerdScenario::Validate), with at most limits.max_events events.
Result<HerdScenario> ParseHerdScenario(const HerdInput& input, const HerdLimits& limits = {});
// The strategies to compare, each named by HerdStrategyName.
Result<std::vector<HerdStrategy>> ParseHerdStrategies(const HerdInput& input);

// The most requests a run can simulate: Σ events × max_attempts.
int64_t HerdRequestBound(const HerdScenario& scenario, const std::vector<HerdStrategy>& strategies);

// OK, or InvalidArgument naming "policy" (more than max_strategies) or "events" (the bound
// above past max_requests), with what to change. (max_events is ParseHerdScenario's.)
Status CheckHerdLimits(const HerdScenario& scenario, const std::vector<HerdStrategy>& strategies,
                       const HerdLimits& limits);

}  // namespace hookrelay::sim
