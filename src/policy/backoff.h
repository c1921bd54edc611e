#pragma once

#include "common/clock.h"
#include "common/random.h"
#include "policy/retry_policy.h"

namespace hookrelay::policy {

// The delay before retry number `retry` (1 = the delay between attempt 1 and attempt 2).
// `previous` is the delay chosen for the previous retry (pass policy.base for retry 1); only the
// decorrelated jitter uses it. Jitter, given the un-jittered delay d = min(cap, raw(retry)):
//   none:          d
//   full:          U(0, d)
//   equal:         d/2 + U(0, d/2)
//   decorrelated:  min(cap, U(base, 3 * previous))
// Always within [0, cap]; never overflows, for any retry number and delays of days.
// REQUIRES: policy.Validate().ok(), retry >= 1.
Duration RetryDelay(const RetryPolicy& policy, int retry, Duration previous, Random& random);

// The un-jittered delay d for retry `retry` (ladder step or base * 2^(retry-1)), capped.
Duration RawDelay(const RetryPolicy& policy, int retry);

}  // namespace hookrelay::policy
