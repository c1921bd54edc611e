#include "policy/breaker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "policy/breaker_json.h"

namespace hookrelay::policy {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::HasSubstr;

const TimePoint kT0 = FromUnixMillis(1'700'000'000'000);

// Fails `n` times at `at`; returns the last transition.
BreakerTransition FailTimes(CircuitBreaker& b, int n, TimePoint at) {
  BreakerTransition t = BreakerTransition::kNone;
  for (int i = 0; i < n; ++i) t = b.RecordFailure(at);
  return t;
}

// Lets the open period pass and sends the probe; returns when it was sent.
TimePoint Probe(CircuitBreaker& b) {
  const TimePoint at = *b.snapshot().open_until;
  BreakerTransition t;
  EXPECT_TRUE(b.AllowRequest(at, &t));
  EXPECT_EQ(t, BreakerTransition::kHalfOpened);
  EXPECT_EQ(b.state(), BreakerState::kHalfOpen);
  return at;
}

TEST(CircuitBreakerTest, StartsClosedAndAllowsRequests) {
  CircuitBreaker b(BreakerConfig{});
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  BreakerTransition t = BreakerTransition::kOpened;
  EXPECT_TRUE(b.AllowRequest(kT0, &t));
  EXPECT_EQ(t, BreakerTransition::kNone);
  EXPECT_TRUE(b.AllowRequest(kT0));  // the transition pointer is optional
}

TEST(CircuitBreakerTest, OpensExactlyAtTheThreshold) {
  CircuitBreaker b(BreakerConfig{});
  EXPECT_EQ(FailTimes(b, 19, kT0), BreakerTransition::kNone);
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  EXPECT_EQ(b.snapshot().consecutive_failures, 19);
  EXPECT_TRUE(b.AllowRequest(kT0));

  EXPECT_EQ(b.RecordFailure(kT0), BreakerTransition::kOpened);
  EXPECT_EQ(b.state(), BreakerState::kOpen);
  EXPECT_EQ(b.snapshot().open_until, kT0 + minutes(10));
  EXPECT_EQ(b.snapshot().trips, 1);
}

TEST(CircuitBreakerTest, ASuccessWhileClosedResetsTheCount) {
  CircuitBreaker b(BreakerConfig{});
  FailTimes(b, 19, kT0);
  EXPECT_EQ(b.RecordSuccess(kT0), BreakerTransition::kNone);
  EXPECT_EQ(b.snapshot().consecutive_failures, 0);
  EXPECT_EQ(FailTimes(b, 19, kT0), BreakerTransition::kNone);
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  EXPECT_EQ(b.RecordFailure(kT0), BreakerTransition::kOpened);
}

TEST(CircuitBreakerTest, NoRequestsWhileOpen) {
  CircuitBreaker b(BreakerConfig{});
  FailTimes(b, 20, kT0);
  for (Duration after : std::initializer_list<Duration>{Duration::zero(), seconds(1), minutes(5),
                                                        minutes(10) - milliseconds(1)}) {
    BreakerTransition t = BreakerTransition::kOpened;
    EXPECT_FALSE(b.AllowRequest(kT0 + after, &t)) << after.count();
    EXPECT_EQ(t, BreakerTransition::kNone);
    EXPECT_EQ(b.state(), BreakerState::kOpen);
  }
}

TEST(CircuitBreakerTest, HalfOpenLetsExactlyOneProbeThrough) {
  CircuitBreaker b(BreakerConfig{});
  FailTimes(b, 20, kT0);
  const TimePoint at = kT0 + minutes(10);
  BreakerTransition t;
  EXPECT_TRUE(b.AllowRequest(at, &t));
  EXPECT_EQ(t, BreakerTransition::kHalfOpened);
  EXPECT_EQ(b.state(), BreakerState::kHalfOpen);
  EXPECT_TRUE(b.snapshot().probe_in_flight);
  for (int i = 0; i < 5; ++i) {
    EXPECT_FALSE(b.AllowRequest(at + minutes(i), &t));
    EXPECT_EQ(t, BreakerTransition::kNone);
  }
}

TEST(CircuitBreakerTest, ProbeSuccessClosesAndResetsTheCount) {
  CircuitBreaker b(BreakerConfig{});
  FailTimes(b, 20, kT0);
  const TimePoint at = Probe(b);
  EXPECT_EQ(b.RecordSuccess(at), BreakerTransition::kClosed);
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  EXPECT_EQ(b.snapshot().consecutive_failures, 0);
  EXPECT_EQ(b.snapshot().closed_since, at);
  EXPECT_EQ(b.snapshot().open_until, std::nullopt);
  EXPECT_FALSE(b.snapshot().probe_in_flight);
  EXPECT_TRUE(b.AllowRequest(at));
  EXPECT_EQ(FailTimes(b, 19, at), BreakerTransition::kNone);
  EXPECT_EQ(b.state(), BreakerState::kClosed);
}

TEST(CircuitBreakerTest, ProbeFailuresEscalateTheOpenPeriod) {
  CircuitBreaker b(BreakerConfig{});
  FailTimes(b, 20, kT0);
  const Duration expected[] = {minutes(30), hours(2), hours(24), hours(24), hours(24)};
  EXPECT_EQ(*b.snapshot().open_until - kT0, minutes(10));
  for (Duration period : expected) {
    const TimePoint at = Probe(b);
    EXPECT_EQ(b.RecordFailure(at), BreakerTransition::kOpened);
    EXPECT_EQ(b.state(), BreakerState::kOpen);
    EXPECT_EQ(*b.snapshot().open_until - at, period);
    EXPECT_FALSE(b.AllowRequest(at + period - milliseconds(1)));
  }
  EXPECT_EQ(b.snapshot().trips, 6);
}

TEST(CircuitBreakerTest, EscalationContinuesWhenItTripsAgainSoon) {
  CircuitBreaker b(BreakerConfig{});
  FailTimes(b, 20, kT0);
  TimePoint at = Probe(b);
  b.RecordSuccess(at);
  at += hours(23);
  EXPECT_EQ(FailTimes(b, 20, at), BreakerTransition::kOpened);
  EXPECT_EQ(*b.snapshot().open_until - at, minutes(30));
}

TEST(CircuitBreakerTest, EscalationResetsAfterADayClosed) {
  CircuitBreaker b(BreakerConfig{});
  FailTimes(b, 20, kT0);
  TimePoint at = Probe(b);
  b.RecordFailure(at);  // 30m
  at = Probe(b);
  b.RecordFailure(at);  // 2h
  at = Probe(b);
  EXPECT_EQ(b.RecordSuccess(at), BreakerTransition::kClosed);
  at += hours(24);
  EXPECT_EQ(FailTimes(b, 20, at), BreakerTransition::kOpened);
  EXPECT_EQ(*b.snapshot().open_until - at, minutes(10));
  EXPECT_EQ(b.snapshot().trips, 1);
}

TEST(CircuitBreakerTest, ResetClosesAndClearsEscalation) {
  CircuitBreaker b(BreakerConfig{});
  FailTimes(b, 20, kT0);
  TimePoint at = Probe(b);
  b.RecordFailure(at);
  ASSERT_EQ(b.state(), BreakerState::kOpen);
  at += minutes(1);
  b.Reset(at);
  EXPECT_EQ(b.state(), BreakerState::kClosed);
  EXPECT_EQ(b.snapshot(), (BreakerSnapshot{.closed_since = at}));
  EXPECT_TRUE(b.AllowRequest(at));
  EXPECT_EQ(FailTimes(b, 20, at), BreakerTransition::kOpened);
  EXPECT_EQ(*b.snapshot().open_until - at, minutes(10));
}

TEST(CircuitBreakerTest, StragglersWhileOpenDoNotMoveIt) {
  CircuitBreaker b(BreakerConfig{});
  FailTimes(b, 20, kT0);
  const BreakerSnapshot opened = b.snapshot();
  EXPECT_EQ(b.RecordSuccess(kT0 + seconds(1)), BreakerTransition::kNone);
  EXPECT_EQ(b.RecordFailure(kT0 + seconds(2)), BreakerTransition::kNone);
  EXPECT_EQ(b.state(), BreakerState::kOpen);
  EXPECT_EQ(b.snapshot().open_until, opened.open_until);
  EXPECT_EQ(b.snapshot().trips, opened.trips);
}

TEST(CircuitBreakerTest, RestoresFromASnapshot) {
  CircuitBreaker first(BreakerConfig{});
  FailTimes(first, 20, kT0);
  CircuitBreaker second(first.config(), first.snapshot());
  EXPECT_FALSE(second.AllowRequest(kT0 + minutes(9)));
  EXPECT_TRUE(second.AllowRequest(kT0 + minutes(10)));
  EXPECT_EQ(second.state(), BreakerState::kHalfOpen);

  // Half-open without a probe out (say the node sending it died): the next caller probes.
  BreakerSnapshot half = second.snapshot();
  half.probe_in_flight = false;
  CircuitBreaker third(BreakerConfig{}, half);
  BreakerTransition t;
  EXPECT_TRUE(third.AllowRequest(kT0 + minutes(11), &t));
  EXPECT_EQ(t, BreakerTransition::kNone);
  EXPECT_FALSE(third.AllowRequest(kT0 + minutes(11)));
}

// The probe's lease: a probe whose result never comes (its node died before recording it) holds
// the breaker for kProbeLease, then the next caller probes; open_until says when the probe went.
TEST(CircuitBreakerTest, AProbeWithNoResultIsReplacedAfterItsLease) {
  CircuitBreaker b(BreakerConfig{});
  FailTimes(b, 20, kT0);
  const TimePoint at = kT0 + minutes(15);  // late: the lease runs from the grant
  BreakerTransition t;
  ASSERT_TRUE(b.AllowRequest(at, &t));
  EXPECT_EQ(t, BreakerTransition::kHalfOpened);
  EXPECT_EQ(b.snapshot().open_until, at);
  EXPECT_EQ(NextProbeAt(b.snapshot()), at + kProbeLease);
  // Within the lease: nothing, however often asked.
  for (Duration after : std::initializer_list<Duration>{Duration::zero(), minutes(1),
                                                        kProbeLease - milliseconds(1)}) {
    EXPECT_FALSE(b.AllowRequest(at + after, &t)) << after.count();
    EXPECT_EQ(t, BreakerTransition::kNone);
  }
  EXPECT_EQ(b.snapshot().open_until, at);
  // At its end: one new probe (no transition: still half-open), with a lease of its own.
  const TimePoint again = at + kProbeLease;
  t = BreakerTransition::kOpened;
  EXPECT_TRUE(b.AllowRequest(again, &t));
  EXPECT_EQ(t, BreakerTransition::kNone);
  EXPECT_EQ(b.state(), BreakerState::kHalfOpen);
  EXPECT_TRUE(b.snapshot().probe_in_flight);
  EXPECT_EQ(b.snapshot().open_until, again);
  EXPECT_FALSE(b.AllowRequest(again));
  EXPECT_FALSE(b.AllowRequest(again + kProbeLease - milliseconds(1)));
  EXPECT_TRUE(b.AllowRequest(again + kProbeLease));
  EXPECT_EQ(b.snapshot().trips, 1);
  EXPECT_EQ(b.snapshot().consecutive_failures, 20);
}

// A probe given back (nothing to send) lets the next one go at once, and it starts a new lease.
TEST(CircuitBreakerTest, AProbeGivenBackIsGrantedAgainAtOnce) {
  CircuitBreaker b(BreakerConfig{});
  FailTimes(b, 20, kT0);
  const TimePoint at = Probe(b);
  BreakerSnapshot back = b.snapshot();
  back.probe_in_flight = false;
  CircuitBreaker c(BreakerConfig{}, back);
  EXPECT_EQ(NextProbeAt(c.snapshot()), std::nullopt);  // now
  EXPECT_TRUE(c.AllowRequest(at + seconds(1)));
  EXPECT_EQ(c.snapshot().open_until, at + seconds(1));
  EXPECT_FALSE(c.AllowRequest(at + seconds(1) + kProbeLease - milliseconds(1)));
}

// The first probe's result comes late, after a second probe was let through: it decides like any
// probe's (a success closes, a failure opens again), and the second one's result, when it comes,
// is a straggler.
TEST(CircuitBreakerTest, TheLateResultOfAReplacedProbeStillDecides) {
  for (bool success : {true, false}) {
    SCOPED_TRACE(success ? "success" : "failure");
    CircuitBreaker b(BreakerConfig{});
    FailTimes(b, 20, kT0);
    const TimePoint first = Probe(b);
    const TimePoint second = first + kProbeLease + seconds(5);
    ASSERT_TRUE(b.AllowRequest(second));
    const TimePoint late = second + seconds(1);
    if (success) {
      EXPECT_EQ(b.RecordSuccess(late), BreakerTransition::kClosed);
      EXPECT_EQ(b.state(), BreakerState::kClosed);
      EXPECT_EQ(b.snapshot().open_until, std::nullopt);
      EXPECT_FALSE(b.snapshot().probe_in_flight);
      EXPECT_TRUE(b.AllowRequest(late));
      // The second probe fails later: one failure counted, still closed.
      EXPECT_EQ(b.RecordFailure(late + seconds(1)), BreakerTransition::kNone);
      EXPECT_EQ(b.state(), BreakerState::kClosed);
      EXPECT_EQ(b.snapshot().consecutive_failures, 1);
    } else {
      EXPECT_EQ(b.RecordFailure(late), BreakerTransition::kOpened);
      EXPECT_EQ(b.state(), BreakerState::kOpen);
      EXPECT_EQ(b.snapshot().open_until, late + minutes(30));  // the next period
      EXPECT_EQ(b.snapshot().trips, 2);
      EXPECT_FALSE(b.snapshot().probe_in_flight);
      EXPECT_FALSE(b.AllowRequest(late + minutes(29)));
      // The second probe succeeds later: a straggler while open, the period stands.
      EXPECT_EQ(b.RecordSuccess(late + seconds(1)), BreakerTransition::kNone);
      EXPECT_EQ(b.state(), BreakerState::kOpen);
      EXPECT_EQ(b.snapshot().open_until, late + minutes(30));
      BreakerTransition t;
      EXPECT_TRUE(b.AllowRequest(late + minutes(30), &t));
      EXPECT_EQ(t, BreakerTransition::kHalfOpened);
    }
  }
}

// A row stored before the lease existed holds the end of the open period in open_until while
// half-open: its lease runs from there, so a probe lost before an upgrade is replaced too.
TEST(CircuitBreakerTest, AnOldHalfOpenRowIsProbedAgainAfterTheLease) {
  const BreakerSnapshot old{.state = BreakerState::kHalfOpen,
                            .consecutive_failures = 20,
                            .trips = 1,
                            .open_until = kT0,
                            .probe_in_flight = true};
  CircuitBreaker b(BreakerConfig{}, old);
  EXPECT_FALSE(b.AllowRequest(kT0 + kProbeLease - milliseconds(1)));
  EXPECT_TRUE(b.AllowRequest(kT0 + hours(5)));
  // Half-open with a probe out but no time at all (not written by this code): probed now.
  CircuitBreaker c(BreakerConfig{}, {.state = BreakerState::kHalfOpen, .probe_in_flight = true});
  EXPECT_EQ(NextProbeAt(c.snapshot()), std::nullopt);
  EXPECT_TRUE(c.AllowRequest(kT0));
  EXPECT_EQ(c.snapshot().open_until, kT0);
}

TEST(NextProbeAtTest, ByState) {
  EXPECT_EQ(NextProbeAt({}), std::nullopt);
  EXPECT_EQ(NextProbeAt({.state = BreakerState::kOpen, .open_until = kT0}), kT0);
  EXPECT_EQ(NextProbeAt({.state = BreakerState::kHalfOpen, .open_until = kT0}), std::nullopt);
  EXPECT_EQ(
      NextProbeAt({.state = BreakerState::kHalfOpen, .open_until = kT0, .probe_in_flight = true}),
      kT0 + kProbeLease);
  EXPECT_EQ(NextProbeAt({.state = BreakerState::kHalfOpen,
                         .open_until = TimePoint::max(),
                         .probe_in_flight = true}),
            TimePoint::max());  // saturates
}

TEST(CircuitBreakerTest, MillisecondPeriodsForTests) {
  BreakerConfig c{.threshold = 2,
                  .open_periods = {milliseconds(50), milliseconds(100)},
                  .escalation_reset = milliseconds(500)};
  CircuitBreaker b(c);
  EXPECT_EQ(FailTimes(b, 2, kT0), BreakerTransition::kOpened);
  EXPECT_EQ(*b.snapshot().open_until, kT0 + milliseconds(50));
  TimePoint at = Probe(b);
  b.RecordFailure(at);
  EXPECT_EQ(*b.snapshot().open_until, at + milliseconds(100));
  at = Probe(b);
  b.RecordFailure(at);
  EXPECT_EQ(*b.snapshot().open_until, at + milliseconds(100));  // the last one repeats
}

TEST(BreakerStateNameTest, Names) {
  EXPECT_EQ(BreakerStateName(BreakerState::kClosed), "closed");
  EXPECT_EQ(BreakerStateName(BreakerState::kOpen), "open");
  EXPECT_EQ(BreakerStateName(BreakerState::kHalfOpen), "half_open");
}

Result<BreakerConfig> Parse(std::string_view json) {
  return ParseBreakerConfig(boost::json::parse(json));
}

TEST(ParseBreakerConfigTest, EveryFieldIsOptional) {
  Result<BreakerConfig> c = Parse("{}");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(*c, BreakerConfig{});
  EXPECT_EQ(c->threshold, 20);
  EXPECT_EQ(c->open_periods,
            (std::vector<Duration>{minutes(10), minutes(30), hours(2), hours(24)}));
  EXPECT_EQ(c->escalation_reset, hours(24));
}

TEST(ParseBreakerConfigTest, EveryField) {
  Result<BreakerConfig> c =
      Parse(R"({"threshold": 3, "open": ["50ms", "1s"], "escalation_reset": "2s"})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->threshold, 3);
  EXPECT_EQ(c->open_periods, (std::vector<Duration>{milliseconds(50), seconds(1)}));
  EXPECT_EQ(c->escalation_reset, seconds(2));
}

TEST(ParseBreakerConfigTest, ErrorsNameTheField) {
  struct Case {
    const char* json;
    const char* field;
    const char* message;
  };
  const Case cases[] = {
      {R"({"threshold": 0})", "threshold", "must be between 1 and 1000000"},
      {R"({"threshold": -1})", "threshold", "must be between 1 and 1000000"},
      {R"({"threshold": 18446744073709551615})", "threshold", "must be between 1 and"},
      {R"({"threshold": 2.5})", "threshold", "must be an integer"},
      {R"({"threshold": "20"})", "threshold", "must be an integer"},
      {R"({"open": []})", "open", "must not be empty"},
      {R"({"open": "10m"})", "open", "must be an array of durations"},
      {R"({"open": ["10m", "0s"]})", "open[1]", "must be greater than 0"},
      {R"({"open": ["10m", "ten"]})", "open[1]", "invalid duration \"ten\""},
      {R"({"open": ["10m", 600]})", "open[1]", "must be a duration string"},
      {R"({"escalation_reset": "1 day"})", "escalation_reset", "duration \"1 day\""},
      {R"({"escalation_reset": 86400})", "escalation_reset", "must be a duration string"},
      {R"({"treshold": 5})", "treshold", "unknown field \"treshold\""},
      {R"(20)", "", "must be an object"},
  };
  for (const Case& c : cases) {
    Result<BreakerConfig> r = Parse(c.json);
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(r.status().field(), c.field) << c.json;
    EXPECT_THAT(r.status().message(), HasSubstr(c.message)) << c.json;
  }
}

TEST(BreakerConfigTest, ValidateNamesTheField) {
  BreakerConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.threshold = 0;
  EXPECT_EQ(c.Validate().field(), "threshold");
  c = {};
  c.open_periods.clear();
  EXPECT_EQ(c.Validate().field(), "open");
  c = {};
  c.open_periods[1] = -minutes(1);
  EXPECT_EQ(c.Validate().field(), "open[1]");
  c = {};
  c.escalation_reset = -hours(1);
  EXPECT_EQ(c.Validate().field(), "escalation_reset");
}

TEST(BreakerConfigTest, JsonRoundTrips) {
  for (const BreakerConfig& c : {BreakerConfig{}, BreakerConfig{.threshold = 1,
                                                  .open_periods = {milliseconds(1500)},
                                                  .escalation_reset = Duration::zero()}}) {
    boost::json::value json = BreakerConfigToJson(c);
    Result<BreakerConfig> back = ParseBreakerConfig(json);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, c) << boost::json::serialize(json);
  }
  EXPECT_EQ(
      boost::json::value(BreakerConfigToJson(BreakerConfig{})),
      boost::json::parse(
          R"({"threshold": 20, "open": ["10m", "30m", "2h", "1d"], "escalation_reset": "1d"})"));
}

// What `b` does for `input` (the CircuitBreaker calls ApplyBreakerInput stands for): the
// transition, and for kProbe whether the request may go.
std::pair<BreakerTransition, bool> FeedStateMachine(CircuitBreaker& b, const BreakerConfig& config,
                                                    BreakerInput input, TimePoint now) {
  BreakerTransition tr = BreakerTransition::kNone;
  bool allowed = false;
  switch (input) {
    case BreakerInput::kSuccess: tr = b.RecordSuccess(now); break;
    case BreakerInput::kFailure: tr = b.RecordFailure(now); break;
    case BreakerInput::kProbe: allowed = b.AllowRequest(now, &tr); break;
    case BreakerInput::kProbeNotSent: {
      BreakerSnapshot copy = b.snapshot();
      if (copy.state == BreakerState::kHalfOpen) copy.probe_in_flight = false;
      b = CircuitBreaker(config, copy);
      break;
    }
    case BreakerInput::kReset: b.Reset(now); break;
  }
  return {tr, allowed};
}

// ApplyBreakerInput is the CircuitBreaker's methods as data (what a store applies to a shared
// row): over a long pseudo-random sequence of inputs and times, the function fed its own output
// and a CircuitBreaker fed the same calls agree at every step.
TEST(ApplyBreakerInputTest, AgreesWithTheStateMachineStepByStep) {
  BreakerConfig config;
  config.threshold = 3;
  config.open_periods = {seconds(10), seconds(30)};
  config.escalation_reset = minutes(5);
  CircuitBreaker b(config);
  BreakerSnapshot s;
  TimePoint now = TimePoint(hours(1000));
  uint64_t x = 88172645463325252ull;  // xorshift: a fixed, varied sequence
  int opened = 0, probes = 0;
  for (int i = 0; i < 5000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    now += seconds(static_cast<int64_t>(x % 7));
    const BreakerInput input = static_cast<BreakerInput>((x >> 8) % 5);
    const BreakerStep step = ApplyBreakerInput(config, s, input, now);
    // Resets rare, or the breaker would hardly ever open.
    if (input == BreakerInput::kReset && (x >> 20) % 50 != 0) continue;
    const auto [tr, allowed] = FeedStateMachine(b, config, input, now);
    ASSERT_EQ(step.transition, tr) << "step " << i << " " << BreakerInputName(input);
    ASSERT_EQ(step.allowed, allowed) << "step " << i;
    ASSERT_EQ(step.after, b.snapshot()) << "step " << i;
    s = step.after;
    opened += tr == BreakerTransition::kOpened;
    probes += allowed && s.state == BreakerState::kHalfOpen;
  }
  EXPECT_GT(opened, 10);  // the sequence went through every state
  EXPECT_GT(probes, 10);
}

TEST(ApplyBreakerInputTest, OneProbeUntilItIsGivenBack) {
  BreakerConfig config;
  config.threshold = 1;
  config.open_periods = {seconds(10)};
  const TimePoint t = TimePoint(hours(1000));
  BreakerStep open = ApplyBreakerInput(config, {}, BreakerInput::kFailure, t);
  EXPECT_EQ(open.transition, BreakerTransition::kOpened);
  EXPECT_FALSE(ApplyBreakerInput(config, open.after, BreakerInput::kProbe, t + seconds(9)).allowed);
  BreakerStep probe = ApplyBreakerInput(config, open.after, BreakerInput::kProbe, t + seconds(10));
  EXPECT_TRUE(probe.allowed);
  EXPECT_EQ(probe.transition, BreakerTransition::kHalfOpened);
  EXPECT_FALSE(
      ApplyBreakerInput(config, probe.after, BreakerInput::kProbe, t + seconds(10)).allowed);
  BreakerStep back =
      ApplyBreakerInput(config, probe.after, BreakerInput::kProbeNotSent, t + seconds(10));
  EXPECT_EQ(back.after.state, BreakerState::kHalfOpen);
  EXPECT_FALSE(back.after.probe_in_flight);
  EXPECT_TRUE(ApplyBreakerInput(config, back.after, BreakerInput::kProbe, t + seconds(11)).allowed);
}

// ApplyBreakerInputs (both stores' batch) chains the steps: each input applies to what the one
// before left, so three failures at threshold 3 open the breaker on the third, and a probe
// asked for before open_until in the same batch is refused.
TEST(ApplyBreakerInputsTest, EachInputAppliesToWhatTheOneBeforeLeft) {
  BreakerConfig config;
  config.threshold = 3;
  config.open_periods = {seconds(10)};
  const TimePoint t = TimePoint(hours(1000));
  const std::vector<BreakerStep> steps =
      ApplyBreakerInputs(config, {},
                         {{BreakerInput::kFailure, t},
                          {BreakerInput::kFailure, t + seconds(1)},
                          {BreakerInput::kFailure, t + seconds(2)},
                          {BreakerInput::kProbe, t + seconds(3)}});
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[0].after.consecutive_failures, 1);
  EXPECT_EQ(steps[1].after.consecutive_failures, 2);
  EXPECT_EQ(steps[1].transition, BreakerTransition::kNone);
  EXPECT_EQ(steps[2].transition, BreakerTransition::kOpened);
  EXPECT_EQ(steps[2].after.open_until, t + seconds(12));
  EXPECT_FALSE(steps[3].allowed);
  EXPECT_EQ(steps[3].after, steps[2].after);
  EXPECT_TRUE(ApplyBreakerInputs(config, {}, {}).empty());
}

// The lease as the stores apply it: a probe asked for within the lease is refused, at its end it
// is granted and says so (probe_lease_expired); a late success or failure of the first probe
// then closes or opens the breaker exactly as CircuitBreaker does.
TEST(ApplyBreakerInputTest, AProbeWithNoResultIsGrantedAgainAfterItsLease) {
  BreakerConfig config;
  config.threshold = 1;
  config.open_periods = {seconds(10), seconds(30)};
  const TimePoint t = TimePoint(hours(1000));
  BreakerStep open = ApplyBreakerInput(config, {}, BreakerInput::kFailure, t);
  BreakerStep probe = ApplyBreakerInput(config, open.after, BreakerInput::kProbe, t + seconds(10));
  ASSERT_TRUE(probe.allowed);
  EXPECT_FALSE(probe.probe_lease_expired);
  EXPECT_EQ(probe.after.open_until, t + seconds(10));
  const TimePoint end = t + seconds(10) + kProbeLease;
  BreakerStep held =
      ApplyBreakerInput(config, probe.after, BreakerInput::kProbe, end - milliseconds(1));
  EXPECT_FALSE(held.allowed);
  EXPECT_FALSE(held.probe_lease_expired);
  EXPECT_EQ(held.after, probe.after);
  BreakerStep again = ApplyBreakerInput(config, probe.after, BreakerInput::kProbe, end);
  EXPECT_TRUE(again.allowed);
  EXPECT_TRUE(again.probe_lease_expired);
  EXPECT_EQ(again.transition, BreakerTransition::kNone);
  EXPECT_EQ(again.after.state, BreakerState::kHalfOpen);
  EXPECT_TRUE(again.after.probe_in_flight);
  EXPECT_EQ(again.after.open_until, end);
  EXPECT_FALSE(ApplyBreakerInput(config, again.after, BreakerInput::kProbe, end).allowed);
  // A probe given back and granted again is not a lost one.
  BreakerStep back =
      ApplyBreakerInput(config, again.after, BreakerInput::kProbeNotSent, end + seconds(1));
  BreakerStep next = ApplyBreakerInput(config, back.after, BreakerInput::kProbe, end + seconds(2));
  EXPECT_TRUE(next.allowed);
  EXPECT_FALSE(next.probe_lease_expired);

  // The first probe's result, late: a success closes, a failure opens for the next period.
  BreakerStep closed =
      ApplyBreakerInput(config, again.after, BreakerInput::kSuccess, end + seconds(1));
  EXPECT_EQ(closed.transition, BreakerTransition::kClosed);
  EXPECT_EQ(closed.after.open_until, std::nullopt);
  BreakerStep reopened =
      ApplyBreakerInput(config, again.after, BreakerInput::kFailure, end + seconds(1));
  EXPECT_EQ(reopened.transition, BreakerTransition::kOpened);
  EXPECT_EQ(reopened.after.open_until, end + seconds(1) + seconds(30));
  // And the second probe's result after that: a straggler.
  EXPECT_EQ(
      ApplyBreakerInput(config, reopened.after, BreakerInput::kSuccess, end + seconds(2)).after,
      reopened.after);
}

// The agreement test above with times spread over hours: probes go out and are lost (never
// answered) often enough that the lease runs out and probes are granted again many times.
TEST(ApplyBreakerInputTest, AgreesWithTheStateMachineAcrossProbeLeases) {
  BreakerConfig config;
  config.threshold = 2;
  config.open_periods = {minutes(1), minutes(5)};
  config.escalation_reset = hours(1);
  CircuitBreaker b(config);
  BreakerSnapshot s;
  TimePoint now = TimePoint(hours(1000));
  uint64_t x = 0x9E3779B97F4A7C15ull;
  int regranted = 0, closed = 0;
  for (int i = 0; i < 5000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    now += minutes(static_cast<int64_t>(x % 7));  // 0..6 minutes: leases often run out
    // Mostly probes (lost ones), some results; no reset, and probe_not_sent rarely.
    const uint64_t pick = (x >> 8) % 10;
    const BreakerInput input = pick < 6   ? BreakerInput::kProbe
                               : pick < 8 ? BreakerInput::kFailure
                               : pick < 9 ? BreakerInput::kSuccess
                                          : BreakerInput::kProbeNotSent;
    const BreakerStep step = ApplyBreakerInput(config, s, input, now);
    const BreakerSnapshot before = b.snapshot();
    const auto [tr, allowed] = FeedStateMachine(b, config, input, now);
    ASSERT_EQ(step.transition, tr) << "step " << i << " " << BreakerInputName(input);
    ASSERT_EQ(step.allowed, allowed) << "step " << i;
    ASSERT_EQ(step.after, b.snapshot()) << "step " << i;
    const bool lost = allowed && before.state == BreakerState::kHalfOpen && before.probe_in_flight;
    ASSERT_EQ(step.probe_lease_expired, lost) << "step " << i;
    if (lost) {
      // Only once the lease had run out.
      ASSERT_GE(now, *before.open_until + kProbeLease) << "step " << i;
    }
    s = step.after;
    regranted += lost;
    closed += tr == BreakerTransition::kClosed;
  }
  EXPECT_GT(regranted, 10);
  EXPECT_GT(closed, 10);
}

}  // namespace
}  // namespace hookrelay::policy
