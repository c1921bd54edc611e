#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "policy/outcome.h"
#include "policy/retry_policy.h"

namespace hookrelay::policy {

// What happens to a delivery after an attempt. Shown to users; each kind has its own metric.
enum class DecisionKind {
  kDelivered,           // 2xx
  kRetry,               // retry at next_attempt_at
  kGiveUpAttempts,      // max_attempts reached
  kGiveUpDeadline,      // the next attempt (or what Retry-After demands) is past the deadline
  kGiveUpNotRetryable,  // a final outcome (404, 3xx, private address, …)
};

std::string_view DecisionKindName(DecisionKind k);  // "delivered", "retry", "give_up_attempts", …

// Where a delivery stands when an attempt has just finished.
struct DeliveryProgress {
  int attempt = 1;                            // the number of the attempt that just finished
  std::optional<TimePoint> first_failure_at;  // nullopt if no attempt has failed before this one
  Duration previous_delay{0};                 // delay chosen before this attempt (0 for attempt 1)
  // The attempt was the circuit breaker's half-open probe: its retryable failure is the
  // breaker's answer (it opens again), not the delivery's, and spends none of its attempts.
  bool probe = false;
};

struct RetryDecision {
  DecisionKind kind = DecisionKind::kDelivered;
  OutcomeClass outcome_class = OutcomeClass::kSuccess;
  // kRetry: when to send attempt + 1, and the delay from `now` that led to it.
  TimePoint next_attempt_at{};
  Duration delay{0};
  // Set once the delivery has failed at least once: first failure + max_duration.
  std::optional<TimePoint> deadline;
  // The first failure time to carry forward (now, if this was the first failure).
  std::optional<TimePoint> first_failure_at;
  bool retry_after_applied = false;  // Retry-After moved next_attempt_at later
  // Counts toward max_attempts. false for a probe's retryable failure (kRetry at `now`: the
  // delivery waits with the others for the breaker, its progress as it was).
  bool counted = true;
  // A human sentence: the outcome's reason, and for give-ups, why we stop.
  std::string reason;
};

// Decides what follows an attempt that finished at `now` with `outcome`.
// A probe (progress.probe) that fails retryably is not counted (counted = false): kRetry due at
// `now` (the open breaker holds it), with the delivery's first failure, deadline and delay as
// they were, so neither max_attempts nor max_duration is spent by the breaker's question. A
// probe's success or final outcome is decided as any attempt's.
// Retry-After (on 429 and 503 only) moves the next attempt no earlier than it says; if that
// lands past the deadline the delivery gives up with kGiveUpDeadline, saying so.
// REQUIRES: policy.Validate().ok(), progress.attempt >= 1.
RetryDecision Decide(const RetryPolicy& policy, const DeliveryProgress& progress,
                     const AttemptOutcome& outcome, TimePoint now, Random& random);

// What a policy will do when every attempt fails at once with a retryable error:
// attempt 1 at 0, then each retry; and where and why it gives up.
struct PlannedAttempt {
  int n;
  Duration delay;  // since the previous attempt (0 for attempt 1)
  Duration at;     // since the first attempt (= the first failure)
};
struct Schedule {
  std::vector<PlannedAttempt> attempts;
  Duration gives_up_after{0};  // time of the last attempt, when the delivery is marked failed
  DecisionKind gives_up_kind = DecisionKind::kGiveUpAttempts;
  std::string gives_up_reason;
};
Schedule PlanSchedule(const RetryPolicy& policy, Random& random);

}  // namespace hookrelay::policy
