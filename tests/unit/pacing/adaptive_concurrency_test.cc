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

TEST(AdaptiveConcurrencyTest, OverloadHalvesRoundingDownNeverBelowOne) {
  AdaptiveConcurrency c(16);
  EXPECT_EQ(Apply(c, "OOOOOO"), (std::vector<int>{8, 4, 2, 1, 1, 1}));
  AdaptiveConcurrency odd(15);
  EXPECT_EQ(Apply(odd, "OOOO"), (std::vector<int>{7, 3, 1, 1}));
}

TEST(AdaptiveConcurrencyTest, OtherFailuresChangeNothing) {
  AdaptiveConcurrency c(16);
  EXPECT_EQ(Apply(c, "FFFF"), (std::vector<int>{16, 16, 16, 16}));
  c.OnOverload();  // 8
  // Other failures do not restart the window either: 7 successes, a failure, 1 success → 9.
  Apply(c, S(7) + "F");
  EXPECT_EQ(c.allowed(), 8);
  c.OnSuccess();
  EXPECT_EQ(c.allowed(), 9);
}

TEST(AdaptiveConcurrencyTest, AdditiveIncreaseOnePerWindowOfAllowedSuccesses) {
  AdaptiveConcurrency c(12);
  c.OnOverload();  // 6
  ASSERT_EQ(c.allowed(), 6);
  // Exactly `allowed` successes complete a window.
  std::vector<int> got = Apply(c, S(6));
  EXPECT_EQ(got, (std::vector<int>{6, 6, 6, 6, 6, 7}));
  Apply(c, S(6));
  EXPECT_EQ(c.allowed(), 7);  // the window is now 7
  c.OnSuccess();
  EXPECT_EQ(c.allowed(), 8);
  Apply(c, S(8 + 9 + 10 + 11));
  EXPECT_EQ(c.allowed(), 12);
  Apply(c, S(100));
  EXPECT_EQ(c.allowed(), 12);  // never above max
}

TEST(AdaptiveConcurrencyTest, OverloadRestartsTheWindow) {
  AdaptiveConcurrency c(16);
  c.OnOverload();  // 8
  Apply(c, S(7));  // one short of a window
  c.OnOverload();  // 4, count restarts
  EXPECT_EQ(Apply(c, S(4)), (std::vector<int>{4, 4, 4, 5}));
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
  // Overloads took it to 1 before the breaker opened; it ramps fast to ceil(max/2), then slowly.
  AdaptiveConcurrency c(16);
  Apply(c, "OOOO");
  ASSERT_EQ(c.allowed(), 1);
  c.SlowStart();
  EXPECT_EQ(c.slow_start_threshold(), 8);
  Apply(c, S(1 + 2 + 4));
  EXPECT_EQ(c.allowed(), 8);
  EXPECT_FALSE(c.in_slow_start());
  EXPECT_EQ(Apply(c, S(8)).back(), 9);  // additive from here
  EXPECT_EQ(Apply(c, S(9)).back(), 10);

  AdaptiveConcurrency odd(9);
  Apply(odd, "OOO");
  odd.SlowStart();
  EXPECT_EQ(odd.slow_start_threshold(), 5);  // ceil(9 / 2)
}

TEST(AdaptiveConcurrencyTest, SlowStartReturnsToThePreviousLevelWhenHigher) {
  AdaptiveConcurrency c(16);
  c.OnOverload();  // 8
  Apply(c, S(8 + 9 + 10 + 11));
  ASSERT_EQ(c.allowed(), 12);
  c.SlowStart();
  EXPECT_EQ(c.slow_start_threshold(), 12);
  // 1 → 2 → 4 → 8 → 12 (the doubling stops at the threshold), then +1.
  EXPECT_EQ(Apply(c, S(1 + 2 + 4)).back(), 8);
  EXPECT_EQ(Apply(c, S(8)).back(), 12);
  EXPECT_FALSE(c.in_slow_start());
  EXPECT_EQ(Apply(c, S(12)).back(), 13);
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
  // O: 4. S×4: 5. F: 5. O: 2. S×2: 3. R: 1 (threshold max(3, 4) = 4). S: 2. S×2: 4 (slow start
  // over). S×4: 5. O: 2.
  std::string events = "O" + S(4) + "FO" + S(2) + "R" + S(1) + S(2) + S(4) + "O";
  std::vector<int> want = {4, 4, 4, 4, 5, 5, 2, 2, 3, 1, 2, 2, 4, 4, 4, 4, 5, 2};
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
        c.OnOverload();
        EXPECT_EQ(c.allowed(), std::max(1, prev / 2));
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
