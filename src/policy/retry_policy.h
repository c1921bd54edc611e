#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace hookrelay::policy {

enum class Strategy { kLadder, kExponential };
enum class Jitter { kNone, kFull, kEqual, kDecorrelated };

std::string_view StrategyName(Strategy s);  // "ladder", "exponential"
std::string_view JitterName(Jitter j);      // "none", "full", "equal", "decorrelated"

// How a destination retries. Attempts are numbered from 1; attempt 1 is sent as soon as the
// event is stored, and the delay before attempt n+1 is the n-th retry delay:
//   ladder:       ladder[min(n, size) - 1]              (the last step repeats)
//   exponential:  base * 2^(n-1)
// then jitter is applied (see backoff.h) and every delay is capped by `cap`.
// No attempt is scheduled after the deadline = time of the first failure + max_duration
// (max_duration 0 means no deadline), and at most max_attempts attempts are made in all.
struct RetryPolicy {
  std::string preset;  // name of the preset this came from ("pro"), empty when custom
  Strategy strategy = Strategy::kExponential;
  Jitter jitter = Jitter::kEqual;
  std::vector<Duration> ladder;  // non-empty exactly when strategy == kLadder ("delays")
  Duration base = std::chrono::minutes(1);
  Duration cap = std::chrono::minutes(30);
  int max_attempts = 6;
  Duration max_duration = std::chrono::hours(1);
  Duration timeout = std::chrono::seconds(30);  // per attempt
  Duration replay_window = std::chrono::hours(24 * 30);

  // OK, or InvalidArgument naming the field as ParsePolicy spells it ("cap", "max_attempts",
  // "delays[2]", …), so errors read the same for parsed and hand-built policies.
  Status Validate() const;

  bool operator==(const RetryPolicy&) const = default;
};

constexpr int kMaxAttemptsLimit = 1000;

// Presets:
//   free / pro / scale: ladder 5m, 30m, 3h, 18h, then 24h each; jitter none; cap 24h;
//                       3 / 5 / 10 attempts; timeouts 60s / 120s / 300s;
//                       replay windows 3d / 30d / 90d; max_duration 1d / 2d / 7d.
//   default:            exponential, equal jitter, base 1m, cap 30m, 6 attempts,
//                       max_duration 1h, timeout 30s, replay window 30d.
Result<RetryPolicy> PresetPolicy(std::string_view name);
std::vector<std::string> PresetNames();  // {"default", "free", "pro", "scale"}

// Parses a policy from JSON: either a preset name ("pro") or an object
//   {"preset": "pro"?, "strategy": "ladder"|"exponential", "jitter": "none"|"full"|"equal"|
//    "decorrelated", "base": "1s", "cap": "60s", "delays": ["5m", "30m"], "max_attempts": 5,
//    "max_duration": "24h", "timeout": "30s", "replay_window": "30d"}
// An object starts from its "preset" (or from "default") and overrides the fields it names,
// except that a ladder without a "preset" does not inherit what is made for the default's
// exponential backoff: its unset "jitter" is "none" and its unset "cap" is 24h (or its longest
// delay, if longer). A ladder's cap is not held to "base" (a ladder does not use base).
// Unknown fields, wrong types, bad durations and invalid combinations give InvalidArgument with
// the field's name in Status::field() (callers add their own prefix, e.g. "policy").
// The result keeps its `preset` label only when an object names a preset and changes nothing
// in it; any effective override makes the policy custom (empty label).
Result<RetryPolicy> ParsePolicy(const boost::json::value& v);

// The canonical JSON object of a policy (every field, durations as strings); ParsePolicy of
// the result gives back an equal policy.
boost::json::object PolicyToJson(const RetryPolicy& p);

}  // namespace hookrelay::policy
