#include "pacing/token_bucket.h"

#include <gtest/gtest.h>

#include <limits>

namespace hookrelay::pacing {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

const TimePoint kT0 = FromUnixMillis(1'700'000'000'000);

// Takes tokens at every millisecond in (from, from + span], returns how many succeeded.
int TakeEveryMs(TokenBucket& b, TimePoint from, Duration span) {
  int taken = 0;
  for (int64_t ms = 1; ms <= span.count(); ++ms) {
    if (b.TryTake(from + milliseconds(ms))) ++taken;
  }
  return taken;
}

// Takes as many tokens as it can at `t`.
int Drain(TokenBucket& b, TimePoint t) {
  int n = 0;
  while (b.TryTake(t)) ++n;
  return n;
}

TEST(TokenBucketTest, StartsFullWithBurst) {
  TokenBucket b(1, 5, kT0);
  EXPECT_DOUBLE_EQ(b.Available(kT0), 5);
  EXPECT_EQ(Drain(b, kT0), 5);
  EXPECT_FALSE(b.TryTake(kT0));
}

TEST(TokenBucketTest, HundredPerSecondGivesExactlyHundredPerSimulatedSecond) {
  TokenBucket b(100, 10, kT0);
  ASSERT_EQ(Drain(b, kT0), 10);
  for (int second = 0; second < 10; ++second) {
    EXPECT_EQ(TakeEveryMs(b, kT0 + seconds(second), seconds(1)), 100) << "second " << second;
  }
}

TEST(TokenBucketTest, SpacedOneTokenPerInterval) {
  TokenBucket b(100, 1, kT0);
  ASSERT_TRUE(b.TryTake(kT0));
  for (int i = 1; i <= 1000; ++i) {
    TimePoint due = kT0 + milliseconds(10 * i);
    ASSERT_FALSE(b.TryTake(due - milliseconds(1))) << i;
    ASSERT_TRUE(b.TryTake(due)) << i;
  }
}

TEST(TokenBucketTest, IdleRefillsOnlyToBurst) {
  TokenBucket b(100, 5, kT0);
  ASSERT_EQ(Drain(b, kT0), 5);
  TimePoint later = kT0 + seconds(10);
  EXPECT_DOUBLE_EQ(b.Available(later), 5);
  EXPECT_EQ(Drain(b, later), 5);
  // And then it paces again at the rate.
  EXPECT_EQ(TakeEveryMs(b, later, seconds(1)), 100);
}

TEST(TokenBucketTest, FractionalRate) {
  TokenBucket b(0.5, 1, kT0);  // one every 2 s
  ASSERT_TRUE(b.TryTake(kT0));
  EXPECT_EQ(b.TimeUntilNext(kT0), milliseconds(2000));
  EXPECT_FALSE(b.TryTake(kT0 + milliseconds(1999)));
  EXPECT_TRUE(b.TryTake(kT0 + milliseconds(2000)));
  EXPECT_EQ(TakeEveryMs(b, kT0 + seconds(2), seconds(60)), 30);
}

TEST(TokenBucketTest, NonDyadicRateStaysExactOverAnHour) {
  // 3/s: each token needs 333.33 ms, a binary fraction that never adds up exactly. (Burst 2:
  // with burst 1 the 0.002 token accrued past 1 in the 334th ms is capped away, as it must be.)
  TokenBucket b(3, 2, kT0);
  ASSERT_EQ(Drain(b, kT0), 2);
  EXPECT_EQ(TakeEveryMs(b, kT0, hours(1)), 3 * 3600);
  EXPECT_FALSE(b.TryTake(kT0 + hours(1)));
}

TEST(TokenBucketTest, TimeUntilNext) {
  TokenBucket b(100, 2, kT0);
  EXPECT_EQ(b.TimeUntilNext(kT0), milliseconds(0));
  ASSERT_EQ(Drain(b, kT0), 2);
  EXPECT_EQ(b.TimeUntilNext(kT0), milliseconds(10));
  EXPECT_EQ(b.TimeUntilNext(kT0 + milliseconds(3)), milliseconds(7));
  EXPECT_EQ(b.TimeUntilNext(kT0 + milliseconds(10)), milliseconds(0));

  TokenBucket third(3, 1, kT0);
  ASSERT_TRUE(third.TryTake(kT0));
  Duration wait = third.TimeUntilNext(kT0);
  EXPECT_EQ(wait, milliseconds(334));  // 333.33 rounded up
  EXPECT_FALSE(third.TryTake(kT0 + wait - milliseconds(1)));
  EXPECT_TRUE(third.TryTake(kT0 + wait));
}

TEST(TokenBucketTest, WaitingTimeUntilNextAlwaysSucceeds) {
  for (double rate : {0.1, 0.7, 1.0, 3.0, 7.0, 33.0, 100.0, 999.0, 1000.0, 5000.0}) {
    TokenBucket b(rate, 1, kT0);
    TimePoint now = kT0;
    for (int i = 0; i < 200; ++i) {
      if (b.TryTake(now)) continue;
      Duration wait = b.TimeUntilNext(now);
      ASSERT_GT(wait.count(), 0) << rate;
      now += wait;
      ASSERT_TRUE(b.TryTake(now)) << "rate " << rate << " take " << i;
    }
  }
}

TEST(TokenBucketTest, RateAboveOnePerMillisecond) {
  TokenBucket b(5000, 1, kT0);
  ASSERT_TRUE(b.TryTake(kT0));
  // Burst 1 caps what one millisecond can hold.
  EXPECT_EQ(TakeEveryMs(b, kT0, seconds(1)), 1000);
  TokenBucket big(5000, 5000, kT0);
  ASSERT_EQ(Drain(big, kT0), 5000);
  int taken = 0;
  for (int ms = 1; ms <= 1000; ++ms) taken += Drain(big, kT0 + milliseconds(ms));
  EXPECT_EQ(taken, 5000);
}

TEST(TokenBucketTest, LongIdleGapsDoNotOverflow) {
  TokenBucket b(1e6, 3, FromUnixMillis(std::numeric_limits<int64_t>::min() / 2));
  ASSERT_EQ(Drain(b, FromUnixMillis(std::numeric_limits<int64_t>::min() / 2)), 3);
  TimePoint far = FromUnixMillis(std::numeric_limits<int64_t>::max());
  EXPECT_DOUBLE_EQ(b.Available(far), 3);
  EXPECT_EQ(b.TimeUntilNext(far), milliseconds(0));
  EXPECT_EQ(Drain(b, far), 3);

  TokenBucket slow(1e-9, 1, kT0);  // one token per ~31 years
  ASSERT_TRUE(slow.TryTake(kT0));
  Duration wait = slow.TimeUntilNext(kT0);
  EXPECT_GT(wait, hours(24 * 365 * 30));
  EXPECT_TRUE(slow.TryTake(kT0 + wait));
}

TEST(TokenBucketTest, TimeGoingBackwardsAddsNothing) {
  TokenBucket b(100, 1, kT0);
  ASSERT_TRUE(b.TryTake(kT0));
  EXPECT_FALSE(b.TryTake(kT0 - seconds(5)));
  EXPECT_DOUBLE_EQ(b.Available(kT0 - seconds(5)), 0);
  // The wait counts from the earlier `now`, so it includes the gap back to the last instant.
  EXPECT_EQ(b.TimeUntilNext(kT0 - milliseconds(5)), milliseconds(15));
  EXPECT_FALSE(b.TryTake(kT0 + milliseconds(9)));
  EXPECT_TRUE(b.TryTake(kT0 + milliseconds(10)));
}

TEST(TokenBucketTest, BurstBelowOneIsOne) {
  TokenBucket b(10, 0.2, kT0);
  EXPECT_DOUBLE_EQ(b.burst(), 1);
  EXPECT_TRUE(b.TryTake(kT0));
  EXPECT_FALSE(b.TryTake(kT0));
  EXPECT_TRUE(b.TryTake(kT0 + milliseconds(100)));
}

}  // namespace
}  // namespace hookrelay::pacing
