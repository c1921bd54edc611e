#include "pacing/adaptive_concurrency.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/random.h"

namespace hookrelay::pacing {
namespace {

// Applies events to `c` and returns allowed() after each one. Events: 'S' success, 'O' overload,
// 'F' other failure, 'R' slow start (a breaker closed or the destination resumed).
std::vector<int> Apply(AdaptiveConcurrency& c, const std::string& events) {
  std::vector<int> out;
  for (char e : events) {
    switch (e) {
      case 'S': c.OnSuccess(); break;
      case 'O': c.OnOverload(); break;
      case 'F': c.OnOtherFailure(); break;
      case 'R': c.SlowStart(); break;
      default: ADD_FAILURE() << "unknown event " << e;
    }
    out.push_back(c.allowed());
  }
  return out;
}

// `n` successes.
std::string S(int n) { return std::string(static_cast<size_t>(n), 'S'); }

TEST(AdaptiveConcurrencyTest, StartsAtMaxAndStaysThereOnSuccess) {
  AdaptiveConcurrency c(16);
  EXPECT_EQ(c.allowed(), 16);
  EXPECT_EQ(c.max_concurrency(), 16);
  EXPECT_FALSE(c.in_slow_start());
  Apply(c, S(1000));
  EXPECT_EQ(c.allowed(), 16);
}

TEST(AdaptiveConcurrencyTest, MaxBelowOneIsTreatedAsOne) {
  AdaptiveConcurrency zero(0), negative(-5);
  EXPECT_EQ(zero.allowed(), 1);
  EXPECT_EQ(negative.max_concurrency(), 1);
  EXPECT_EQ(Apply(zero, "OSRSOS"), (std::vector<int>{1, 1, 1, 1, 1, 1}));
  EXPECT_FALSE(zero.in_slow_start());
}

// Overloads until the level changes (a destination that stays overloaded); returns how many.
int CutOnce(AdaptiveConcurrency& c) {
  const int before = c.allowed();
  int n = 0;
  while (c.allowed() == before && n < 1000000) {
    c.OnOverload();
    ++n;
  }
  return n;
}

// Successes until the level reaches max; returns how many.
int SuccessesToMax(AdaptiveConcurrency& c) {
  int n = 0;
  while (c.allowed() < c.max_concurrency() && n < 10000000) {
    c.OnSuccess();
    ++n;
  }
  return n;
}

TEST(AdaptiveConcurrencyTest, OverloadHalvesRoundingDownNeverBelowOne) {
  AdaptiveConcurrency c(16);
  std::vector<int> levels;
  for (int i = 0; i < 6; ++i) {
    CutOnce(c);
    levels.push_back(c.allowed());
  }
  EXPECT_EQ(levels, (std::vector<int>{8, 4, 2, 1, 1, 1}));
  AdaptiveConcurrency odd(15);
  levels.clear();
  for (int i = 0; i < 4; ++i) {
    CutOnce(odd);
    levels.push_back(odd.allowed());
  }
  EXPECT_EQ(levels, (std::vector<int>{7, 3, 1, 1}));
}

// The overloads of requests already in flight when the level was cut do not cut it again: one
// cut per recovery period of (previous level) outcomes, as TCP cuts once per round trip.
TEST(AdaptiveConcurrencyTest, OverloadHalvesOncePerRecoveryPeriod) {
  AdaptiveConcurrency c(16);
  c.OnOverload();
  EXPECT_EQ(c.allowed(), 8);
  EXPECT_EQ(c.ceiling(), 16);
  EXPECT_EQ(c.recovery_left(), 16);
  // 16 outcomes of any kind (here 10 overloads, 3 other failures, 3 successes) change nothing
  // but the success count.
  std::vector<int> got = Apply(c, "OOOOOFFFOOOOOSSS");
  EXPECT_EQ(got, std::vector<int>(16, 8));
  EXPECT_EQ(c.recovery_left(), 0);
  c.OnOverload();  // the period is over: this one cuts
  EXPECT_EQ(c.allowed(), 4);
  EXPECT_EQ(c.ceiling(), 8);
  EXPECT_EQ(CutOnce(c), 9);  // 8 ignored, the 9th cuts
  EXPECT_EQ(c.allowed(), 2);
}

// A burst of timeouts from one window (say a hiccup of the network) costs one halving, not a
// collapse to 1 that would then take hundreds of thousands of successes to undo.
TEST(AdaptiveConcurrencyTest, BurstOfOverloadsHalvesOnce) {
  AdaptiveConcurrency c(1000);
  Apply(c, std::string(300, 'O'));
  EXPECT_EQ(c.allowed(), 500);
}

// A destination that stays overloaded still goes down to 1, within 2 × max outcomes.
TEST(AdaptiveConcurrencyTest, SustainedOverloadShrinksToOne) {
  AdaptiveConcurrency c(1000);
  int outcomes = 0;
  while (c.allowed() > 1 && outcomes < 100000) {
    c.OnOverload();
    ++outcomes;
  }
  EXPECT_EQ(c.allowed(), 1);
  EXPECT_LE(outcomes, 2000);
  // Overloads mixed with successes (a destination that fails every other request) too: no
  // window of successes ever completes above 1, so it stays between 1 and 2 from there.
  AdaptiveConcurrency mixed(1000);
  outcomes = 0;
  while (mixed.allowed() > 1 && outcomes < 100000) {
    mixed.OnOverload();
    ++outcomes;
    if (mixed.allowed() == 1) break;
    mixed.OnSuccess();
    ++outcomes;
  }
  EXPECT_EQ(mixed.allowed(), 1);
  EXPECT_LE(outcomes, 4000);
  for (int i = 0; i < 1000; ++i) {
    mixed.OnSuccess();
    mixed.OnOverload();
    ASSERT_LE(mixed.allowed(), 2);
  }
}

TEST(AdaptiveConcurrencyTest, OtherFailuresChangeNothing) {
  AdaptiveConcurrency c(16);
  EXPECT_EQ(Apply(c, "FFFF"), (std::vector<int>{16, 16, 16, 16}));
  c.OnOverload();  // 8
  // Other failures do not restart the window either: 7 successes, a failure, 1 success → 12.
  Apply(c, S(7) + "F");
  EXPECT_EQ(c.allowed(), 8);
  c.OnSuccess();
  EXPECT_EQ(c.allowed(), 12);
}

TEST(AdaptiveConcurrencyTest, BelowTheCeilingGrowsByHalfPerWindowOfAllowedSuccesses) {
  AdaptiveConcurrency c(12);
  c.OnOverload();  // 6, ceiling 12
  ASSERT_EQ(c.allowed(), 6);
  // Exactly `allowed` successes complete a window.
  std::vector<int> got = Apply(c, S(6));
  EXPECT_EQ(got, (std::vector<int>{6, 6, 6, 6, 6, 9}));
  Apply(c, S(8));
  EXPECT_EQ(c.allowed(), 9);  // the window is now 9
  c.OnSuccess();
  EXPECT_EQ(c.allowed(), 12);  // 9 + 4, but not past the ceiling
  Apply(c, S(100));
  EXPECT_EQ(c.allowed(), 12);  // never above max
  // At least +1: from 1, below a ceiling of 2.
  AdaptiveConcurrency two(2);
  two.OnOverload();
  EXPECT_EQ(Apply(two, "S"), (std::vector<int>{2}));
}

TEST(AdaptiveConcurrencyTest, AtTheCeilingProbesWithADoublingStep) {
  AdaptiveConcurrency c(100);
  CutOnce(c);  // 50, ceiling 100
  CutOnce(c);  // 25, ceiling 50
  ASSERT_EQ(c.allowed(), 25);
  ASSERT_EQ(c.ceiling(), 50);
  std::vector<int> levels;
  for (int w : {25, 37, 50, 51, 53, 57, 65, 81}) levels.push_back(Apply(c, S(w)).back());
  EXPECT_EQ(levels, (std::vector<int>{37, 50, 51, 53, 57, 65, 81, 100}));
  // An overload returns the step to 1.
  CutOnce(c);  // 50, ceiling 100
  CutOnce(c);  // 25, ceiling 50
  Apply(c, S(25 + 37));
  ASSERT_EQ(c.allowed(), 50);
  EXPECT_EQ(Apply(c, S(50)).back(), 51);
}

// The issue-13 case: a destination answering after a constant 100 ms with no errors. Whatever
// cut the level (one timeout, a breaker that opened and closed), it is back at max within a
// bounded number of successes, not one more request per window.
TEST(AdaptiveConcurrencyTest, NoOverloadReachesMaxWithinBoundedSuccesses) {
  {
    AdaptiveConcurrency c(1000);
    c.OnOverload();  // one timeout: 500
    EXPECT_EQ(SuccessesToMax(c), 500 + 750);
  }
  {
    // Overloads all the way down to 1, then a clean destination.
    AdaptiveConcurrency c(1000);
    while (c.allowed() > 1) CutOnce(c);
    EXPECT_LE(SuccessesToMax(c), 3 * 1000);
  }
  {
    // The breaker opened and closed: slow start to ceil(max / 2), then on to max (this stopped
    // at 501 of 1,000: slow start to 500, then one more per window of 500).
    AdaptiveConcurrency c(1000);
    while (c.allowed() > 1) CutOnce(c);
    c.SlowStart();
    ASSERT_EQ(c.slow_start_threshold(), 500);
    EXPECT_LE(SuccessesToMax(c), 3 * 1000);
  }
  for (int max : {1, 2, 3, 7, 16, 100, 1024}) {
    AdaptiveConcurrency c(max);
    while (c.allowed() > 1) CutOnce(c);
    c.SlowStart();
    EXPECT_LE(SuccessesToMax(c), 3 * max + 16) << max;
  }
}

TEST(AdaptiveConcurrencyTest, OverloadRestartsTheWindow) {
  AdaptiveConcurrency c(16);
  c.OnOverload();   // 8
  Apply(c, S(16));  // 12 after 8; the recovery period is over, 8 of the next window counted
  ASSERT_EQ(c.allowed(), 12);
  ASSERT_EQ(c.recovery_left(), 0);
  c.OnOverload();  // 6, count restarts
  EXPECT_EQ(Apply(c, S(6)), (std::vector<int>{6, 6, 6, 6, 6, 9}));
}

TEST(AdaptiveConcurrencyTest, SlowStartFromMaxDoublesBackToMax) {
  AdaptiveConcurrency c(16);
  c.SlowStart();
  EXPECT_EQ(c.allowed(), 1);
  EXPECT_TRUE(c.in_slow_start());
  EXPECT_EQ(c.slow_start_threshold(), 16);
  // Windows of 1, 2, 4, 8 successes double the level each time.
  EXPECT_EQ(Apply(c, S(1 + 2 + 4 + 8)),
            (std::vector<int>{2, 2, 4, 4, 4, 4, 8, 8, 8, 8, 8, 8, 8, 8, 16}));
  EXPECT_FALSE(c.in_slow_start());
  EXPECT_EQ(c.slow_start_threshold(), 0);
}

TEST(AdaptiveConcurrencyTest, SlowStartThresholdIsAtLeastHalfOfMax) {
  // Overloads took it to 1 before the breaker opened (the last one at 2); it ramps fast to
  // ceil(max/2), then on by half per window: the old ceiling is forgotten.
  AdaptiveConcurrency c(16);
  while (c.allowed() > 1) CutOnce(c);
  ASSERT_EQ(c.ceiling(), 2);
  c.SlowStart();
  EXPECT_EQ(c.ceiling(), 16);
  EXPECT_EQ(c.slow_start_threshold(), 8);
  Apply(c, S(1 + 2 + 4));
  EXPECT_EQ(c.allowed(), 8);
  EXPECT_FALSE(c.in_slow_start());
  EXPECT_EQ(Apply(c, S(8)).back(), 12);
  EXPECT_EQ(Apply(c, S(12)).back(), 16);

  AdaptiveConcurrency odd(9);
  while (odd.allowed() > 1) CutOnce(odd);
  odd.SlowStart();
  EXPECT_EQ(odd.slow_start_threshold(), 5);  // ceil(9 / 2)
}

TEST(AdaptiveConcurrencyTest, SlowStartReturnsToThePreviousLevelWhenHigher) {
  AdaptiveConcurrency c(16);
  c.OnOverload();  // 8, ceiling 16
  Apply(c, S(8));
  ASSERT_EQ(c.allowed(), 12);
  c.SlowStart();
  EXPECT_EQ(c.slow_start_threshold(), 12);
  // 1 → 2 → 4 → 8 → 12 (the doubling stops at the threshold), then ×1.5 up to the ceiling.
  EXPECT_EQ(Apply(c, S(1 + 2 + 4)).back(), 8);
  EXPECT_EQ(Apply(c, S(8)).back(), 12);
  EXPECT_FALSE(c.in_slow_start());
  EXPECT_EQ(Apply(c, S(12)).back(), 16);
}

TEST(AdaptiveConcurrencyTest, SlowStartNeverPassesMax) {
  AdaptiveConcurrency c(10);
  c.SlowStart();
  EXPECT_EQ(c.slow_start_threshold(), 10);
  std::vector<int> levels;
  for (int w : {1, 2, 4, 8}) levels.push_back(Apply(c, S(w)).back());
  EXPECT_EQ(levels, (std::vector<int>{2, 4, 8, 10}));
  EXPECT_FALSE(c.in_slow_start());
  Apply(c, S(50));
  EXPECT_EQ(c.allowed(), 10);
}

TEST(AdaptiveConcurrencyTest, OverloadDuringSlowStartEndsIt) {
  AdaptiveConcurrency c(16);
  c.SlowStart();
  Apply(c, S(1 + 2));  // 4
  ASSERT_EQ(c.allowed(), 4);
  c.OnOverload();
  EXPECT_EQ(c.allowed(), 2);
  EXPECT_FALSE(c.in_slow_start());
  EXPECT_EQ(Apply(c, S(2 + 3)), (std::vector<int>{2, 3, 3, 3, 4}));  // additive, not doubling
}

TEST(AdaptiveConcurrencyTest, SlowStartDuringSlowStartKeepsTheTarget) {
  AdaptiveConcurrency c(16);
  c.SlowStart();
  Apply(c, S(1));  // 2
  c.SlowStart();
  EXPECT_EQ(c.allowed(), 1);
  EXPECT_EQ(c.slow_start_threshold(), 16);
  Apply(c, S(1 + 2 + 4 + 8));
  EXPECT_EQ(c.allowed(), 16);
}

TEST(AdaptiveConcurrencyTest, SlowStartRestartsTheWindow) {
  AdaptiveConcurrency c(16);
  c.OnOverload();  // 8
  Apply(c, S(7));
  c.SlowStart();
  EXPECT_EQ(Apply(c, "S").back(), 2);  // a window of 1, not the 8th of the old window
}

TEST(AdaptiveConcurrencyTest, MaxOfOneNeverRampsOrSlowStarts) {
  AdaptiveConcurrency c(1);
  c.SlowStart();
  EXPECT_FALSE(c.in_slow_start());
  EXPECT_EQ(Apply(c, "SSOSFSR"), (std::vector<int>{1, 1, 1, 1, 1, 1, 1}));
}

TEST(AdaptiveConcurrencyTest, MaxOfTwo) {
  AdaptiveConcurrency c(2);
  EXPECT_EQ(Apply(c, "OSSRSSSO"), (std::vector<int>{1, 2, 2, 1, 2, 2, 2, 1}));
}

TEST(AdaptiveConcurrencyTest, MixedSequence) {
  AdaptiveConcurrency c(8);
  // O: 4 (ceiling 8, 8 outcomes of recovery). S×4: 6. F: 6. O: 6 (still recovering). S×2: 6.
  // R: 1 (threshold max(6, 4) = 6). S: 2. S×2: 4. S×4: 6 (slow start over). O: 3.
  std::string events = "O" + S(4) + "FO" + S(2) + "R" + S(1) + S(2) + S(4) + "O";
  std::vector<int> want = {4, 4, 4, 4, 6, 6, 6, 6, 6, 1, 2, 2, 4, 4, 4, 4, 6, 3};
  EXPECT_EQ(Apply(c, events), want);
}

TEST(AdaptiveConcurrencyTest, RandomSequencesStayWithinBounds) {
  SeededRandom random(7);
  for (int max : {1, 2, 3, 7, 16, 100}) {
    AdaptiveConcurrency c(max);
    int prev = c.allowed();
    for (int i = 0; i < 20000; ++i) {
      int64_t r = random.UniformInt(0, 99);
      if (r < 85) {
        c.OnSuccess();
        // A success never lowers the level and raises it by at most doubling.
        EXPECT_GE(c.allowed(), prev);
        EXPECT_LE(c.allowed(), std::max(prev * 2, prev + 1));
      } else if (r < 93) {
        const bool recovering = c.recovery_left() > 0;
        c.OnOverload();
        EXPECT_EQ(c.allowed(), recovering ? prev : std::max(1, prev / 2));
      } else if (r < 98) {
        c.OnOtherFailure();
        EXPECT_EQ(c.allowed(), prev);
      } else {
        c.SlowStart();
        EXPECT_EQ(c.allowed(), 1);
      }
      ASSERT_GE(c.allowed(), 1);
      ASSERT_LE(c.allowed(), max);
      prev = c.allowed();
    }
  }
}

}  // namespace
}  // namespace hookrelay::pacing
