#include "policy/backoff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <limits>

namespace hookrelay::policy {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr int kDraws = 10'000;

RetryPolicy Exponential(Duration base, Duration cap, Jitter jitter = Jitter::kNone) {
  RetryPolicy p;
  p.strategy = Strategy::kExponential;
  p.jitter = jitter;
  p.base = base;
  p.cap = cap;
  return p;
}

RetryPolicy Ladder(std::vector<Duration> steps, Duration cap, Jitter jitter = Jitter::kNone) {
  RetryPolicy p;
  p.strategy = Strategy::kLadder;
  p.jitter = jitter;
  p.ladder = std::move(steps);
  p.cap = cap;
  return p;
}

TEST(RawDelayTest, ExponentialDoublesUntilCapAndHoldsIt) {
  RetryPolicy p = Exponential(minutes(1), minutes(30));
  const Duration expected[] = {minutes(1),  minutes(2),  minutes(4),  minutes(8),
                               minutes(16), minutes(30), minutes(30), minutes(30)};
  for (int retry = 1; retry <= 8; ++retry) {
    EXPECT_EQ(RawDelay(p, retry), expected[retry - 1]) << "retry " << retry;
  }
}

TEST(RawDelayTest, ExactlyReachingCapIsNotCut) {
  RetryPolicy p = Exponential(seconds(1), seconds(8));
  EXPECT_EQ(RawDelay(p, 4), seconds(8));
  EXPECT_EQ(RawDelay(p, 5), seconds(8));
}

TEST(RawDelayTest, LadderRepeatsItsLastStep) {
  RetryPolicy p = Ladder({minutes(5), minutes(30), hours(3), hours(18), hours(24)}, hours(24));
  EXPECT_EQ(RawDelay(p, 1), minutes(5));
  EXPECT_EQ(RawDelay(p, 2), minutes(30));
  EXPECT_EQ(RawDelay(p, 3), hours(3));
  EXPECT_EQ(RawDelay(p, 4), hours(18));
  EXPECT_EQ(RawDelay(p, 5), hours(24));
  EXPECT_EQ(RawDelay(p, 6), hours(24));
  EXPECT_EQ(RawDelay(p, 500), hours(24));
  EXPECT_EQ(RawDelay(p, INT_MAX), hours(24));
}

TEST(RawDelayTest, LadderStepsAreCapped) {
  RetryPolicy p = Ladder({minutes(5), hours(48), minutes(1)}, hours(24));
  EXPECT_EQ(RawDelay(p, 1), minutes(5));
  EXPECT_EQ(RawDelay(p, 2), hours(24));
  EXPECT_EQ(RawDelay(p, 3), minutes(1));
  EXPECT_EQ(RawDelay(p, 4), minutes(1));
}

TEST(RawDelayTest, HugeRetryNumbersSaturateAtCapWithoutOverflow) {
  // A one-day base passes int64 milliseconds after ~37 doublings; a 1 ms base after 63.
  RetryPolicy days = Exponential(hours(24), hours(24 * 365 * 100));
  RetryPolicy tiny = Exponential(milliseconds(1), Duration::max());
  for (int retry : {30, 37, 38, 59, 60, 61, 62, 63, 64, 65, 100, 1000, INT_MAX}) {
    SCOPED_TRACE(retry);
    EXPECT_EQ(RawDelay(days, retry), days.cap);
    Duration d = RawDelay(tiny, retry);
    EXPECT_GT(d, Duration::zero());
    EXPECT_LE(d, tiny.cap);
  }
  EXPECT_EQ(RawDelay(tiny, 63), milliseconds(int64_t{1} << 62));
  EXPECT_EQ(RawDelay(tiny, 64), Duration::max());
  EXPECT_EQ(RawDelay(days, 10), hours(24 * 512));
}

TEST(RawDelayTest, RetryBelowOneIsTreatedAsTheFirst) {
  RetryPolicy p = Exponential(minutes(1), minutes(30));
  EXPECT_EQ(RawDelay(p, 0), minutes(1));
  EXPECT_EQ(RawDelay(p, -5), minutes(1));
  EXPECT_EQ(RawDelay(p, INT_MIN), minutes(1));
}

TEST(RetryDelayTest, NoJitterIsTheRawDelay) {
  RetryPolicy p = Exponential(minutes(1), minutes(30));
  SeededRandom random(1);
  for (int retry = 1; retry <= 70; ++retry) {
    EXPECT_EQ(RetryDelay(p, retry, p.base, random), RawDelay(p, retry));
  }
}

TEST(RetryDelayTest, SameSeedSameDelays) {
  for (Jitter j : {Jitter::kFull, Jitter::kEqual, Jitter::kDecorrelated}) {
    RetryPolicy p = Exponential(seconds(1), minutes(10), j);
    SeededRandom a(42), b(42);
    Duration prev_a = p.base, prev_b = p.base;
    for (int retry = 1; retry <= 20; ++retry) {
      prev_a = RetryDelay(p, retry, prev_a, a);
      prev_b = RetryDelay(p, retry, prev_b, b);
      EXPECT_EQ(prev_a, prev_b) << JitterName(j) << " retry " << retry;
    }
  }
}

// Property tests: many seeded draws per strategy, each within its formula's bounds.

TEST(JitterPropertyTest, FullIsWithinZeroAndD) {
  RetryPolicy p = Exponential(seconds(1), hours(1), Jitter::kFull);
  SeededRandom random(1001);
  const int retry = 6;
  const Duration d = RawDelay(p, retry);  // 32 s
  ASSERT_EQ(d, seconds(32));
  double sum = 0;
  Duration lo = Duration::max(), hi = Duration::min();
  for (int i = 0; i < kDraws; ++i) {
    Duration x = RetryDelay(p, retry, p.base, random);
    ASSERT_GE(x, Duration::zero());
    ASSERT_LE(x, d);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += static_cast<double>(x.count());
  }
  const double mean = sum / kDraws;
  EXPECT_NEAR(mean, 0.5 * static_cast<double>(d.count()), 0.02 * 0.5 * d.count());
  // The draws spread over the whole range, not a corner of it.
  EXPECT_LT(lo, d / 50);
  EXPECT_GT(hi, d - d / 50);
}

TEST(JitterPropertyTest, EqualIsWithinHalfDAndDWithMeanThreeQuarters) {
  RetryPolicy p = Exponential(minutes(1), minutes(30), Jitter::kEqual);
  SeededRandom random(2002);
  const int retry = 4;
  const Duration d = RawDelay(p, retry);  // 8 min, well below cap
  ASSERT_EQ(d, minutes(8));
  double sum = 0;
  for (int i = 0; i < kDraws; ++i) {
    Duration x = RetryDelay(p, retry, p.base, random);
    ASSERT_GE(x, d / 2);
    ASSERT_LE(x, d);
    sum += static_cast<double>(x.count());
  }
  const double expected = 0.75 * static_cast<double>(d.count());
  EXPECT_NEAR(sum / kDraws, expected, 0.02 * expected);
}

TEST(JitterPropertyTest, EqualOnAnOddMillisecondStaysWithinBounds) {
  RetryPolicy p = Exponential(milliseconds(3), milliseconds(3), Jitter::kEqual);
  SeededRandom random(5);
  bool saw_top = false;
  for (int i = 0; i < 1000; ++i) {
    Duration x = RetryDelay(p, 1, p.base, random);
    ASSERT_GE(x, milliseconds(1));
    ASSERT_LE(x, milliseconds(3));
    saw_top |= x == milliseconds(3);
  }
  EXPECT_TRUE(saw_top);
}

TEST(JitterPropertyTest, DecorrelatedIsWithinBaseAndMinOfCapAndThreePrevious) {
  RetryPolicy p = Exponential(seconds(1), minutes(2), Jitter::kDecorrelated);
  SeededRandom random(3003);
  Duration prev = p.base;
  bool hit_cap = false;
  for (int i = 0; i < kDraws; ++i) {
    // Retry numbers do not matter to this jitter; vary them anyway.
    Duration x = RetryDelay(p, 1 + i % 100, prev, random);
    ASSERT_GE(x, p.base);
    ASSERT_LE(x, std::min(p.cap, 3 * prev)) << "prev " << prev.count();
    hit_cap |= x == p.cap;
    prev = x;
  }
  EXPECT_TRUE(hit_cap);  // the chain grows until cap bites
}

TEST(JitterPropertyTest, DecorrelatedFromAFixedPrevious) {
  RetryPolicy p = Exponential(seconds(1), hours(1), Jitter::kDecorrelated);
  SeededRandom random(4004);
  const Duration prev = seconds(10);
  double sum = 0;
  for (int i = 0; i < kDraws; ++i) {
    Duration x = RetryDelay(p, 3, prev, random);
    ASSERT_GE(x, seconds(1));
    ASSERT_LE(x, seconds(30));
    sum += static_cast<double>(x.count());
  }
  const double expected = (1000.0 + 30000.0) / 2;  // U(base, 3 * prev), cap out of reach
  EXPECT_NEAR(sum / kDraws, expected, 0.02 * expected);
}

TEST(RetryDelayTest, DecorrelatedTreatsAPreviousBelowBaseAsBase) {
  RetryPolicy p = Exponential(seconds(1), hours(1), Jitter::kDecorrelated);
  SeededRandom random(7);
  for (Duration prev :
       std::initializer_list<Duration>{Duration::zero(), -seconds(5), milliseconds(10)}) {
    for (int i = 0; i < 1000; ++i) {
      Duration x = RetryDelay(p, 1, prev, random);
      ASSERT_GE(x, seconds(1));
      ASSERT_LE(x, seconds(3));
    }
  }
}

TEST(RetryDelayTest, DecorrelatedWithAHugePreviousDoesNotOverflow) {
  RetryPolicy p = Exponential(seconds(1), hours(24 * 30), Jitter::kDecorrelated);
  SeededRandom random(8);
  for (Duration prev : std::initializer_list<Duration>{
           Duration::max(), Duration::max() / 3 + milliseconds(1), hours(24 * 365)}) {
    for (int i = 0; i < 1000; ++i) {
      Duration x = RetryDelay(p, 60, prev, random);
      ASSERT_GE(x, p.base);
      ASSERT_LE(x, p.cap);
    }
  }
}

TEST(RetryDelayTest, EveryJitterStaysWithinCapForAnyRetry) {
  for (Jitter j : {Jitter::kNone, Jitter::kFull, Jitter::kEqual, Jitter::kDecorrelated}) {
    RetryPolicy p = Exponential(hours(24), hours(24 * 7), j);
    SeededRandom random(9);
    Duration prev = p.base;
    for (int retry : {1, 2, 3, 4, 59, 60, 61, 62, 63, 64, 1000, INT_MAX}) {
      Duration x = RetryDelay(p, retry, prev, random);
      EXPECT_GE(x, Duration::zero()) << JitterName(j) << " retry " << retry;
      EXPECT_LE(x, p.cap) << JitterName(j) << " retry " << retry;
      prev = x;
    }
  }
}

TEST(RetryDelayTest, JitterAppliesToLadderSteps) {
  RetryPolicy p = Ladder({minutes(10)}, hours(1), Jitter::kEqual);
  SeededRandom random(10);
  for (int i = 0; i < 1000; ++i) {
    Duration x = RetryDelay(p, 1 + i, p.base, random);
    ASSERT_GE(x, minutes(5));
    ASSERT_LE(x, minutes(10));
  }
}

}  // namespace
}  // namespace hookrelay::policy
