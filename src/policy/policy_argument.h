#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "policy/retry_policy.h"

namespace hookrelay::policy {

// A policy as a user gives it on a command line (--policy, --policy-json) or in a query string
// (policy=, policy_json=): a preset's name, or a policy as JSON text (an object, or a preset's
// name as a JSON string). The one resolver `hookrelay schedule`, `hookrelay simulate herd` and
// GET /api/v1/simulate share.
struct PolicyArgument {
  enum class Kind { kPreset, kJson };
  Kind kind = Kind::kPreset;
  std::string text;
};

// The policy `arg` names, validated. InvalidArgument otherwise, whose field is the policy's field
// as ParsePolicy spells it ("preset" for an unknown preset, "jitter", "max_attempts", …) and
// empty for JSON that does not parse ("not valid JSON: …"). The message does not name the
// argument: the caller knows whether it was --policy-json or policy_json.
Result<RetryPolicy> ResolvePolicyArgument(const PolicyArgument& arg);

// A seed for the jitter's random source, as text: a whole number from 0 to 2^64-1 ("-1" is
// refused, not wrapped to 2^64-1). InvalidArgument (field "seed") otherwise.
Result<uint64_t> ParseSeedArgument(const std::string& text);

// "<argument>: <field>: <message>" (the field left out when empty): how a refused argument is
// told, as InvalidArgument whose field is `argument`.
Status ArgumentError(const std::string& argument, const Status& st);

}  // namespace hookrelay::policy
