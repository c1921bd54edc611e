#include "policy/decision.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "common/units.h"
#include "policy/backoff.h"
#include "policy/retry_after.h"

namespace hookrelay::policy {
namespace {

// A delivery must never wrap around to the past, whatever the policy or the clock say.
TimePoint SaturatingAdd(TimePoint t, Duration d) {
  int64_t out;
  if (__builtin_add_overflow(ToUnixMillis(t), d.count(), &out)) {
    return d.count() > 0 ? TimePoint::max() : TimePoint::min();
  }
  return FromUnixMillis(out);
}

Duration SaturatingSub(TimePoint a, TimePoint b) {
  int64_t out;
  if (__builtin_sub_overflow(ToUnixMillis(a), ToUnixMillis(b), &out)) {
    return ToUnixMillis(a) > ToUnixMillis(b) ? Duration::max() : Duration::min();
  }
  return Duration(out);
}

std::string AttemptOf(int attempt, int max_attempts) {
  return std::to_string(attempt) + " of " + std::to_string(max_attempts);
}

// Retry-After means something only on these; elsewhere servers send it by accident.
bool HonoursRetryAfter(const AttemptOutcome& o) {
  return o.error == TransportError::kNone && (o.status_code == 429 || o.status_code == 503);
}

}  // namespace

std::string_view DecisionKindName(DecisionKind k) {
  switch (k) {
    case DecisionKind::kDelivered: return "delivered";
    case DecisionKind::kRetry: return "retry";
    case DecisionKind::kGiveUpAttempts: return "give_up_attempts";
    case DecisionKind::kGiveUpDeadline: return "give_up_deadline";
    case DecisionKind::kGiveUpNotRetryable: return "give_up_not_retryable";
  }
  return "unknown";
}

RetryDecision Decide(const RetryPolicy& policy, const DeliveryProgress& progress,
                     const AttemptOutcome& outcome, TimePoint now, Random& random) {
  RetryDecision d;
  Classification c = Classify(outcome);
  d.outcome_class = c.cls;

  if (c.cls == OutcomeClass::kSuccess) {
    d.kind = DecisionKind::kDelivered;
    // A success after failures keeps the failure history, so the record shows what it took.
    d.first_failure_at = progress.first_failure_at;
    if (progress.first_failure_at && policy.max_duration > Duration::zero()) {
      d.deadline = SaturatingAdd(*progress.first_failure_at, policy.max_duration);
    }
    d.reason = std::move(c.reason);
    return d;
  }

  if (progress.probe && c.cls == OutcomeClass::kRetryable) {
    d.kind = DecisionKind::kRetry;
    d.counted = false;
    d.first_failure_at = progress.first_failure_at;
    if (progress.first_failure_at && policy.max_duration > Duration::zero()) {
      d.deadline = SaturatingAdd(*progress.first_failure_at, policy.max_duration);
    }
    d.next_attempt_at = now;
    d.delay = progress.previous_delay;
    d.reason = std::move(c.reason);
    return d;
  }

  const TimePoint first = progress.first_failure_at.value_or(now);
  d.first_failure_at = first;
  if (policy.max_duration > Duration::zero()) {
    d.deadline = SaturatingAdd(first, policy.max_duration);
  }

  if (c.cls == OutcomeClass::kFinal) {
    d.kind = DecisionKind::kGiveUpNotRetryable;
    d.reason = std::move(c.reason);
    return d;
  }

  if (progress.attempt >= policy.max_attempts) {
    d.kind = DecisionKind::kGiveUpAttempts;
    // "1 of 1 attempt", "5 of 5 attempts": the noun agrees with the number next to it.
    d.reason = "gave up after " + AttemptOf(progress.attempt, policy.max_attempts) +
               (policy.max_attempts == 1 ? " attempt: " : " attempts: ") + c.reason;
    return d;
  }

  const Duration previous =
      progress.previous_delay > Duration::zero() ? progress.previous_delay : policy.base;
  Duration delay = RetryDelay(policy, std::max(progress.attempt, 1), previous, random);
  std::optional<Duration> retry_after;
  if (HonoursRetryAfter(outcome) && outcome.retry_after) {
    retry_after = ParseRetryAfter(*outcome.retry_after, now);
  }
  // Retry-After may exceed `cap` on purpose: the server asked, and arriving earlier only
  // spends an attempt on a known refusal.
  if (retry_after && *retry_after > delay) {
    delay = *retry_after;
    d.retry_after_applied = true;
  }
  const TimePoint next = SaturatingAdd(now, delay);

  if (d.deadline && next > *d.deadline) {
    d.kind = DecisionKind::kGiveUpDeadline;
    const std::string at = "+" + FormatDuration(SaturatingSub(next, first));
    const std::string limit = FormatDuration(policy.max_duration);
    d.reason = "gave up after attempt " + AttemptOf(progress.attempt, policy.max_attempts) + ": ";
    if (d.retry_after_applied) {
      d.reason += "the endpoint's Retry-After asks to wait " + FormatDuration(delay) +
                  ", so the next retry would be at " + at + ", past the " + limit +
                  " retry deadline; ";
    } else {
      d.reason += "the next retry would be at " + at + ", past the " + limit + " retry deadline; ";
    }
    d.reason += "last: " + c.reason;
    return d;
  }

  d.kind = DecisionKind::kRetry;
  d.delay = delay;
  d.next_attempt_at = next;
  d.reason = std::move(c.reason);
  return d;
}

Schedule PlanSchedule(const RetryPolicy& policy, Random& random) {
  Schedule s;
  const AttemptOutcome unavailable{.status_code = 503};
  const TimePoint start = FromUnixMillis(0);
  TimePoint now = start;
  DeliveryProgress progress;
  s.attempts.push_back({1, Duration::zero(), Duration::zero()});
  // Decide() stops at max_attempts; the limit only guards a policy that skipped Validate().
  while (progress.attempt <= kMaxAttemptsLimit) {
    RetryDecision d = Decide(policy, progress, unavailable, now, random);
    if (d.kind != DecisionKind::kRetry) {
      s.gives_up_after = now - start;
      s.gives_up_kind = d.kind;
      s.gives_up_reason =
          "gives up after attempt " + AttemptOf(progress.attempt, policy.max_attempts);
      if (d.kind == DecisionKind::kGiveUpDeadline) {
        s.gives_up_reason += ": the next retry would pass the max_duration deadline of " +
                             FormatDuration(policy.max_duration);
      } else {
        s.gives_up_reason += " (max_attempts)";
      }
      return s;
    }
    now = d.next_attempt_at;
    progress.attempt++;
    progress.first_failure_at = d.first_failure_at;
    progress.previous_delay = d.delay;
    s.attempts.push_back({progress.attempt, d.delay, now - start});
  }
  s.gives_up_after = now - start;
  s.gives_up_kind = DecisionKind::kGiveUpAttempts;
  s.gives_up_reason = "gives up after attempt " + std::to_string(progress.attempt) +
                      " (the limit of " + std::to_string(kMaxAttemptsLimit) + " attempts)";
  return s;
}

}  // namespace hookrelay::policy
