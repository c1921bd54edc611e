#include "policy/decision.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/time_format.h"
#include "policy/backoff.h"

namespace hookrelay::policy {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::HasSubstr;

const TimePoint kT0 = FromUnixMillis(1'700'000'000'000);

const AttemptOutcome k503{.status_code = 503};

RetryPolicy Preset(std::string_view name) { return *PresetPolicy(name); }

// Exponential without jitter: 1m, 2m, 4m, 8m, 16m, 30m, … within a 1h deadline.
RetryPolicy Steady(int max_attempts = 10) {
  RetryPolicy p;
  p.jitter = Jitter::kNone;
  p.max_attempts = max_attempts;
  return p;
}

AttemptOutcome WithRetryAfter(int status, std::string value) {
  return AttemptOutcome{.status_code = status, .retry_after = std::move(value)};
}

TEST(DecideTest, SuccessOnTheFirstAttemptIsDelivered) {
  SeededRandom random(1);
  RetryDecision d = Decide(Preset("default"), {}, AttemptOutcome{.status_code = 200}, kT0, random);
  EXPECT_EQ(d.kind, DecisionKind::kDelivered);
  EXPECT_EQ(d.outcome_class, OutcomeClass::kSuccess);
  EXPECT_EQ(d.reason, "200 OK: delivered");
  EXPECT_EQ(d.first_failure_at, std::nullopt);
  EXPECT_EQ(d.deadline, std::nullopt);
}

TEST(DecideTest, SuccessAfterFailuresKeepsTheFailureHistory) {
  SeededRandom random(1);
  DeliveryProgress progress{.attempt = 3, .first_failure_at = kT0, .previous_delay = minutes(2)};
  RetryDecision d = Decide(Preset("default"), progress, AttemptOutcome{.status_code = 204},
                           kT0 + minutes(4), random);
  EXPECT_EQ(d.kind, DecisionKind::kDelivered);
  EXPECT_EQ(d.first_failure_at, kT0);
  EXPECT_EQ(d.deadline, kT0 + hours(1));
}

TEST(DecideTest, FinalOutcomeGivesUpWithTheClassificationReason) {
  SeededRandom random(1);
  RetryDecision d = Decide(Preset("pro"), {}, AttemptOutcome{.status_code = 404}, kT0, random);
  EXPECT_EQ(d.kind, DecisionKind::kGiveUpNotRetryable);
  EXPECT_EQ(d.outcome_class, OutcomeClass::kFinal);
  EXPECT_EQ(d.reason,
            "404 Not Found is not retried: the endpoint says it does not exist; fix the URL, "
            "then replay");
  EXPECT_EQ(d.first_failure_at, kT0);
  EXPECT_EQ(d.deadline, kT0 + hours(48));

  d = Decide(Preset("pro"), {}, AttemptOutcome{.error = TransportError::kPrivateAddress}, kT0,
             random);
  EXPECT_EQ(d.kind, DecisionKind::kGiveUpNotRetryable);
}

TEST(DecideTest, FinalOutcomeIsNotRetriedEvenWithAttemptsLeftAndRetryAfter) {
  SeededRandom random(1);
  RetryDecision d = Decide(Preset("scale"), {}, WithRetryAfter(410, "60"), kT0, random);
  EXPECT_EQ(d.kind, DecisionKind::kGiveUpNotRetryable);
  EXPECT_FALSE(d.retry_after_applied);
}

// Issue 32.2: the breaker's half-open probe is the breaker's question. Failing (retryably) on
// the delivery's last attempt, it does not give up: not counted, due again at once (the open
// breaker holds it), first failure, deadline and delay as they were; nor does it start the
// deadline of a delivery that had not failed before.
TEST(DecideTest, AFailedProbeSpendsNoneOfTheDeliverysAttempts) {
  SeededRandom random(1);
  DeliveryProgress last{
      .attempt = 4, .first_failure_at = kT0, .previous_delay = minutes(2), .probe = true};
  RetryDecision d = Decide(Steady(4), last, k503, kT0 + minutes(30), random);
  EXPECT_EQ(d.kind, DecisionKind::kRetry);
  EXPECT_FALSE(d.counted);
  EXPECT_EQ(d.outcome_class, OutcomeClass::kRetryable);
  EXPECT_EQ(d.next_attempt_at, kT0 + minutes(30));
  EXPECT_EQ(d.delay, minutes(2));
  EXPECT_EQ(d.first_failure_at, kT0);
  EXPECT_EQ(d.deadline, kT0 + hours(1));
  EXPECT_THAT(d.reason, HasSubstr("503"));

  // Past the deadline too: still waiting, not given up.
  d = Decide(Steady(4), last, k503, kT0 + hours(2), random);
  EXPECT_EQ(d.kind, DecisionKind::kRetry);
  EXPECT_FALSE(d.counted);

  DeliveryProgress first{.attempt = 1, .probe = true};
  d = Decide(Steady(4), first, AttemptOutcome{.error = TransportError::kTimeout}, kT0, random);
  EXPECT_EQ(d.kind, DecisionKind::kRetry);
  EXPECT_FALSE(d.counted);
  EXPECT_EQ(d.first_failure_at, std::nullopt);
  EXPECT_EQ(d.deadline, std::nullopt);

  // The same failure as an ordinary attempt gives up, counted.
  last.probe = false;
  d = Decide(Steady(4), last, k503, kT0 + minutes(30), random);
  EXPECT_EQ(d.kind, DecisionKind::kGiveUpAttempts);
  EXPECT_TRUE(d.counted);
}

// A probe's success and a probe's final outcome are the delivery's own: decided and counted as
// any attempt's.
TEST(DecideTest, AProbesSuccessOrFinalOutcomeCounts) {
  SeededRandom random(1);
  DeliveryProgress progress{.attempt = 2, .first_failure_at = kT0, .probe = true};
  RetryDecision d =
      Decide(Steady(4), progress, AttemptOutcome{.status_code = 200}, kT0 + minutes(1), random);
  EXPECT_EQ(d.kind, DecisionKind::kDelivered);
  EXPECT_TRUE(d.counted);
  d = Decide(Steady(4), progress, AttemptOutcome{.status_code = 404}, kT0 + minutes(1), random);
  EXPECT_EQ(d.kind, DecisionKind::kGiveUpNotRetryable);
  EXPECT_TRUE(d.counted);
}

TEST(DecideTest, FirstFailureStartsTheDeadline) {
  SeededRandom random(1);
  RetryDecision d = Decide(Steady(), {}, k503, kT0, random);
  EXPECT_EQ(d.kind, DecisionKind::kRetry);
  EXPECT_EQ(d.outcome_class, OutcomeClass::kRetryable);
  EXPECT_EQ(d.first_failure_at, kT0);
  EXPECT_EQ(d.deadline, kT0 + hours(1));
  EXPECT_EQ(d.delay, minutes(1));
  EXPECT_EQ(d.next_attempt_at, kT0 + minutes(1));
  EXPECT_FALSE(d.retry_after_applied);
  EXPECT_EQ(d.reason, "503 Service Unavailable: the endpoint is temporarily unavailable");
}

TEST(DecideTest, LaterFailuresCarryTheFirstFailureForward) {
  SeededRandom random(1);
  DeliveryProgress progress{.attempt = 3, .first_failure_at = kT0, .previous_delay = minutes(2)};
  const TimePoint now = kT0 + minutes(3);
  RetryDecision d =
      Decide(Steady(), progress, AttemptOutcome{.error = TransportError::kTimeout}, now, random);
  EXPECT_EQ(d.kind, DecisionKind::kRetry);
  EXPECT_EQ(d.first_failure_at, kT0);
  EXPECT_EQ(d.deadline, kT0 + hours(1));
  EXPECT_EQ(d.delay, minutes(4));
  EXPECT_EQ(d.next_attempt_at, now + minutes(4));
}

TEST(DecideTest, EveryRetryableOutcomeIsRetried) {
  std::vector<AttemptOutcome> outcomes = {
      {.status_code = 408}, {.status_code = 429}, {.status_code = 500}, {.status_code = 599}};
  for (TransportError e : {TransportError::kTimeout, TransportError::kConnectionRefused,
                           TransportError::kConnectionReset, TransportError::kDns,
                           TransportError::kTls, TransportError::kOther}) {
    outcomes.push_back({.error = e});
  }
  for (const AttemptOutcome& o : outcomes) {
    SeededRandom random(1);
    RetryDecision d = Decide(Steady(), {}, o, kT0, random);
    EXPECT_EQ(d.kind, DecisionKind::kRetry) << o.status_code << TransportErrorName(o.error);
  }
}

TEST(DecideTest, GivesUpAfterMaxAttempts) {
  SeededRandom random(1);
  DeliveryProgress progress{.attempt = 5, .first_failure_at = kT0, .previous_delay = hours(18)};
  RetryDecision d = Decide(Preset("pro"), progress, k503, kT0 + hours(21) + minutes(35), random);
  EXPECT_EQ(d.kind, DecisionKind::kGiveUpAttempts);
  EXPECT_EQ(d.reason,
            "gave up after 5 of 5 attempts: 503 Service Unavailable: the endpoint is "
            "temporarily unavailable");
  EXPECT_EQ(d.first_failure_at, kT0);
  EXPECT_EQ(d.deadline, kT0 + hours(48));
}

TEST(DecideTest, SingleAttemptPolicyGivesUpAtOnce) {
  SeededRandom random(1);
  RetryDecision d =
      Decide(Steady(1), {}, AttemptOutcome{.error = TransportError::kDns}, kT0, random);
  EXPECT_EQ(d.kind, DecisionKind::kGiveUpAttempts);
  EXPECT_THAT(d.reason, HasSubstr("gave up after 1 of 1 attempt: DNS error: "));
  EXPECT_EQ(d.deadline, kT0 + hours(1));
}

TEST(DecideTest, DeadlineStopsScheduling) {
  SeededRandom random(1);
  // Attempt 6 at +31m; the next retry would be 30m later, at +61m, past the 1h deadline.
  DeliveryProgress progress{.attempt = 6, .first_failure_at = kT0, .previous_delay = minutes(16)};
  RetryDecision d = Decide(Steady(), progress, k503, kT0 + minutes(31), random);
  EXPECT_EQ(d.kind, DecisionKind::kGiveUpDeadline);
  EXPECT_EQ(d.reason,
            "gave up after attempt 6 of 10: the next retry would be at +1h1m, past the 1h retry "
            "deadline; last: 503 Service Unavailable: the endpoint is temporarily unavailable");
  EXPECT_EQ(d.deadline, kT0 + hours(1));
  EXPECT_FALSE(d.retry_after_applied);
}

TEST(DecideTest, ARetryExactlyAtTheDeadlineIsStillScheduled) {
  SeededRandom random(1);
  DeliveryProgress progress{.attempt = 6, .first_failure_at = kT0, .previous_delay = minutes(16)};
  RetryDecision d = Decide(Steady(), progress, k503, kT0 + minutes(30), random);
  EXPECT_EQ(d.kind, DecisionKind::kRetry);
  EXPECT_EQ(d.next_attempt_at, kT0 + hours(1));
}

TEST(DecideTest, ZeroMaxDurationMeansNoDeadline) {
  RetryPolicy p = Steady(kMaxAttemptsLimit);
  p.max_duration = Duration::zero();
  SeededRandom random(1);
  DeliveryProgress progress{.attempt = 900, .first_failure_at = kT0, .previous_delay = minutes(30)};
  RetryDecision d = Decide(p, progress, k503, kT0 + hours(24 * 365), random);
  EXPECT_EQ(d.kind, DecisionKind::kRetry);
  EXPECT_EQ(d.deadline, std::nullopt);
  EXPECT_EQ(d.first_failure_at, kT0);
  EXPECT_EQ(d.delay, minutes(30));
}

TEST(DecideTest, RetryAfterMovesTheNextAttemptLater) {
  for (int status : {429, 503}) {
    SeededRandom random(1);
    RetryDecision d = Decide(Steady(), {}, WithRetryAfter(status, "300"), kT0, random);
    EXPECT_EQ(d.kind, DecisionKind::kRetry) << status;
    EXPECT_TRUE(d.retry_after_applied);
    EXPECT_EQ(d.delay, minutes(5));
    EXPECT_EQ(d.next_attempt_at, kT0 + minutes(5));
  }
}

TEST(DecideTest, RetryAfterAsAnHttpDate) {
  SeededRandom random(1);
  const TimePoint now = FromUnixMillis(784111777000);  // Sun, 06 Nov 1994 08:49:37 GMT
  RetryDecision d =
      Decide(Steady(), {}, WithRetryAfter(503, "Sun, 06 Nov 1994 08:59:37 GMT"), now, random);
  EXPECT_TRUE(d.retry_after_applied);
  EXPECT_EQ(d.next_attempt_at, now + minutes(10));
}

TEST(DecideTest, RetryAfterEarlierThanTheBackoffChangesNothing) {
  SeededRandom random(1);
  RetryDecision d = Decide(Steady(), {}, WithRetryAfter(429, "10"), kT0, random);
  EXPECT_FALSE(d.retry_after_applied);
  EXPECT_EQ(d.delay, minutes(1));
}

TEST(DecideTest, RetryAfterIsOnlyHonouredOn429And503) {
  for (int status : {408, 500, 502, 504}) {
    SeededRandom random(1);
    RetryDecision d = Decide(Steady(), {}, WithRetryAfter(status, "600"), kT0, random);
    EXPECT_EQ(d.kind, DecisionKind::kRetry);
    EXPECT_FALSE(d.retry_after_applied) << status;
    EXPECT_EQ(d.delay, minutes(1)) << status;
  }
  // Without a response there is no header to honour.
  SeededRandom random(1);
  AttemptOutcome timeout{.error = TransportError::kTimeout, .retry_after = "600"};
  EXPECT_FALSE(Decide(Steady(), {}, timeout, kT0, random).retry_after_applied);
}

TEST(DecideTest, MalformedRetryAfterIsIgnored) {
  SeededRandom random(1);
  RetryDecision d = Decide(Steady(), {}, WithRetryAfter(503, "in a bit"), kT0, random);
  EXPECT_EQ(d.kind, DecisionKind::kRetry);
  EXPECT_FALSE(d.retry_after_applied);
  EXPECT_EQ(d.delay, minutes(1));
}

TEST(DecideTest, RetryAfterMayExceedCap) {
  RetryPolicy p = Steady();
  p.max_duration = Duration::zero();
  SeededRandom random(1);
  RetryDecision d = Decide(p, {}, WithRetryAfter(429, "7200"), kT0, random);
  EXPECT_EQ(d.kind, DecisionKind::kRetry);
  EXPECT_TRUE(d.retry_after_applied);
  EXPECT_EQ(d.delay, hours(2));  // cap is 30m; the server asked for more
}

TEST(DecideTest, RetryAfterBeyondTheDeadlineGivesUpSayingSo) {
  SeededRandom random(1);
  DeliveryProgress progress{.attempt = 2, .first_failure_at = kT0, .previous_delay = minutes(1)};
  RetryDecision d =
      Decide(Steady(), progress, WithRetryAfter(503, "7200"), kT0 + minutes(1), random);
  EXPECT_EQ(d.kind, DecisionKind::kGiveUpDeadline);
  EXPECT_TRUE(d.retry_after_applied);
  EXPECT_EQ(d.reason,
            "gave up after attempt 2 of 10: the endpoint's Retry-After asks to wait 2h, so the "
            "next retry would be at +2h1m, past the 1h retry deadline; last: 503 Service "
            "Unavailable: the endpoint is temporarily unavailable");
}

TEST(DecideTest, AbsurdRetryAfterIsClampedAndStillRespectsTheDeadline) {
  SeededRandom random(1);
  RetryDecision d =
      Decide(Preset("scale"), {}, WithRetryAfter(429, "99999999999999999999"), kT0, random);
  EXPECT_EQ(d.kind, DecisionKind::kGiveUpDeadline);
  EXPECT_THAT(d.reason, HasSubstr("Retry-After asks to wait 365d"));

  RetryPolicy no_deadline = Preset("scale");
  no_deadline.max_duration = Duration::zero();
  d = Decide(no_deadline, {}, WithRetryAfter(429, "99999999999999999999"), kT0, random);
  EXPECT_EQ(d.kind, DecisionKind::kRetry);
  EXPECT_EQ(d.delay, hours(24 * 365));
}

TEST(DecideTest, DecorrelatedJitterFeedsOnThePreviousDelay) {
  RetryPolicy p;
  p.jitter = Jitter::kDecorrelated;
  p.max_duration = Duration::zero();
  p.max_attempts = 50;
  SeededRandom random(77), mirror(77);
  DeliveryProgress progress;
  TimePoint now = kT0;
  Duration expected_previous = p.base;
  for (int attempt = 1; attempt < 50; ++attempt) {
    progress.attempt = attempt;
    RetryDecision d = Decide(p, progress, k503, now, random);
    ASSERT_EQ(d.kind, DecisionKind::kRetry);
    const Duration expected = RetryDelay(p, attempt, expected_previous, mirror);
    ASSERT_EQ(d.delay, expected) << attempt;
    ASSERT_GE(d.delay, p.base);
    ASSERT_LE(d.delay, std::min(p.cap, 3 * expected_previous));
    expected_previous = expected;
    progress.first_failure_at = d.first_failure_at;
    progress.previous_delay = d.delay;
    now = d.next_attempt_at;
  }
}

TEST(DecideTest, HighAttemptNumbersWithLongDelaysDoNotOverflow) {
  RetryPolicy p;
  p.base = hours(24);
  p.cap = hours(24 * 30);
  p.max_attempts = kMaxAttemptsLimit;
  p.max_duration = Duration::zero();
  for (Jitter j : {Jitter::kNone, Jitter::kFull, Jitter::kEqual, Jitter::kDecorrelated}) {
    p.jitter = j;
    for (int attempt : {60, 61, 62, 63, 64, 65, 999}) {
      SeededRandom random(attempt);
      DeliveryProgress progress{
          .attempt = attempt, .first_failure_at = kT0, .previous_delay = p.cap};
      RetryDecision d = Decide(p, progress, k503, kT0 + hours(24 * 365 * 50), random);
      ASSERT_EQ(d.kind, DecisionKind::kRetry) << JitterName(j) << " " << attempt;
      EXPECT_GE(d.delay, Duration::zero());
      EXPECT_LE(d.delay, p.cap);
      if (j == Jitter::kNone) {
        EXPECT_EQ(d.delay, p.cap);
      }
    }
  }
  SeededRandom random(1);
  DeliveryProgress last{.attempt = 1000, .first_failure_at = kT0, .previous_delay = p.cap};
  EXPECT_EQ(Decide(p, last, k503, kT0, random).kind, DecisionKind::kGiveUpAttempts);
}

TEST(DecideTest, NextAttemptSaturatesInsteadOfWrapping) {
  RetryPolicy p = Steady();
  p.max_duration = Duration::zero();
  SeededRandom random(1);
  RetryDecision d = Decide(p, {}, k503, TimePoint::max() - seconds(1), random);
  EXPECT_EQ(d.kind, DecisionKind::kRetry);
  EXPECT_EQ(d.next_attempt_at, TimePoint::max());
}

TEST(DecisionKindNameTest, Names) {
  EXPECT_EQ(DecisionKindName(DecisionKind::kDelivered), "delivered");
  EXPECT_EQ(DecisionKindName(DecisionKind::kRetry), "retry");
  EXPECT_EQ(DecisionKindName(DecisionKind::kGiveUpAttempts), "give_up_attempts");
  EXPECT_EQ(DecisionKindName(DecisionKind::kGiveUpDeadline), "give_up_deadline");
  EXPECT_EQ(DecisionKindName(DecisionKind::kGiveUpNotRetryable), "give_up_not_retryable");
}

// PlanSchedule

std::vector<Duration> AttemptTimes(const Schedule& s) {
  std::vector<Duration> out;
  for (const PlannedAttempt& a : s.attempts) out.push_back(a.at);
  return out;
}

TEST(PlanScheduleTest, Pro) {
  SeededRandom random(1);
  Schedule s = PlanSchedule(Preset("pro"), random);
  const Duration h21m35 = hours(21) + minutes(35);
  EXPECT_EQ(AttemptTimes(s), (std::vector<Duration>{Duration::zero(), minutes(5), minutes(35),
                                                    hours(3) + minutes(35), h21m35}));
  ASSERT_EQ(s.attempts.size(), 5u);
  EXPECT_EQ(s.attempts[0].n, 1);
  EXPECT_EQ(s.attempts[0].delay, Duration::zero());
  EXPECT_EQ(s.attempts[4].n, 5);
  EXPECT_EQ(s.attempts[4].delay, hours(18));
  EXPECT_EQ(s.gives_up_after, h21m35);
  EXPECT_EQ(s.gives_up_kind, DecisionKind::kGiveUpAttempts);
  EXPECT_EQ(s.gives_up_reason, "gives up after attempt 5 of 5 (max_attempts)");
}

TEST(PlanScheduleTest, ScaleContinuesDailyAfterTheLadder) {
  SeededRandom random(1);
  Schedule s = PlanSchedule(Preset("scale"), random);
  ASSERT_EQ(s.attempts.size(), 10u);
  const Duration h21m35 = hours(21) + minutes(35);
  EXPECT_EQ(s.attempts[4].at, h21m35);
  for (int i = 5; i < 10; ++i) {
    EXPECT_EQ(s.attempts[i].n, i + 1);
    EXPECT_EQ(s.attempts[i].delay, hours(24));
    EXPECT_EQ(s.attempts[i].at, h21m35 + hours(24) * (i - 4));
  }
  EXPECT_EQ(s.gives_up_after, h21m35 + hours(24 * 5));
  EXPECT_EQ(s.gives_up_kind, DecisionKind::kGiveUpAttempts);
  EXPECT_EQ(s.gives_up_reason, "gives up after attempt 10 of 10 (max_attempts)");
}

TEST(PlanScheduleTest, Free) {
  SeededRandom random(1);
  Schedule s = PlanSchedule(Preset("free"), random);
  EXPECT_EQ(AttemptTimes(s), (std::vector<Duration>{Duration::zero(), minutes(5), minutes(35)}));
  EXPECT_EQ(s.gives_up_after, minutes(35));
  EXPECT_EQ(s.gives_up_reason, "gives up after attempt 3 of 3 (max_attempts)");
}

TEST(PlanScheduleTest, DefaultIsJitteredWithinBounds) {
  for (uint64_t seed = 0; seed < 200; ++seed) {
    SeededRandom random(seed);
    Schedule s = PlanSchedule(Preset("default"), random);
    ASSERT_EQ(s.attempts.size(), 6u) << seed;
    Duration raw = minutes(1);
    for (size_t i = 1; i < s.attempts.size(); ++i) {
      EXPECT_GE(s.attempts[i].delay, raw / 2);
      EXPECT_LE(s.attempts[i].delay, raw);
      EXPECT_EQ(s.attempts[i].at, s.attempts[i - 1].at + s.attempts[i].delay);
      raw *= 2;
    }
    EXPECT_EQ(s.gives_up_after, s.attempts.back().at);
    EXPECT_EQ(s.gives_up_kind, DecisionKind::kGiveUpAttempts);
  }
}

TEST(PlanScheduleTest, DeadlineEndsTheSchedule) {
  SeededRandom random(1);
  Schedule s = PlanSchedule(Steady(), random);
  EXPECT_EQ(AttemptTimes(s), (std::vector<Duration>{Duration::zero(), minutes(1), minutes(3),
                                                    minutes(7), minutes(15), minutes(31)}));
  EXPECT_EQ(s.gives_up_after, minutes(31));
  EXPECT_EQ(s.gives_up_kind, DecisionKind::kGiveUpDeadline);
  EXPECT_EQ(s.gives_up_reason,
            "gives up after attempt 6 of 10: the next retry would pass the max_duration "
            "deadline of 1h");
}

TEST(PlanScheduleTest, MatchesDecideStepByStep) {
  RetryPolicy p = Preset("default");
  p.jitter = Jitter::kDecorrelated;
  p.max_attempts = 40;
  p.max_duration = hours(6);
  SeededRandom plan_random(99), decide_random(99);
  Schedule s = PlanSchedule(p, plan_random);
  DeliveryProgress progress;
  TimePoint now = kT0;
  size_t i = 1;
  for (;; ++i) {
    RetryDecision d = Decide(p, progress, k503, now, decide_random);
    if (d.kind != DecisionKind::kRetry) {
      EXPECT_EQ(d.kind, s.gives_up_kind);
      break;
    }
    ASSERT_LT(i, s.attempts.size());
    EXPECT_EQ(s.attempts[i].delay, d.delay);
    EXPECT_EQ(s.attempts[i].at, d.next_attempt_at - kT0);
    now = d.next_attempt_at;
    progress = {.attempt = progress.attempt + 1,
                .first_failure_at = d.first_failure_at,
                .previous_delay = d.delay};
  }
  EXPECT_EQ(i, s.attempts.size());
}

TEST(PlanScheduleTest, ThousandAttemptsOfMaximalDelaysDoNotOverflow) {
  RetryPolicy p;
  p.jitter = Jitter::kNone;
  p.base = hours(24);
  p.cap = hours(24 * 365 * 100);
  p.max_attempts = kMaxAttemptsLimit;
  p.max_duration = Duration::zero();
  SeededRandom random(1);
  Schedule s = PlanSchedule(p, random);
  ASSERT_EQ(s.attempts.size(), static_cast<size_t>(kMaxAttemptsLimit));
  for (size_t i = 1; i < s.attempts.size(); ++i) {
    ASSERT_GT(s.attempts[i].at, s.attempts[i - 1].at) << i;
  }
  EXPECT_EQ(s.attempts.back().delay, p.cap);
  EXPECT_EQ(s.gives_up_reason, "gives up after attempt 1000 of 1000 (max_attempts)");
}

}  // namespace
}  // namespace hookrelay::policy
