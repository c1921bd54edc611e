#include "pacing/replay_pacer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

namespace hookrelay::pacing {
namespace {

using std::chrono::milliseconds;

const TimePoint kStart = FromUnixMillis(1'700'000'000'000);

std::vector<int64_t> Offsets(double rate, int n, uint64_t seed) {
  SeededRandom random(seed);
  ReplayPacer pacer(rate, kStart, random);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back((pacer.Next() - kStart).count());
  return out;
}

// The most sends in any half-open 1-second window (it suffices to start windows at sends).
int64_t MaxInAnySecond(const std::vector<int64_t>& t) {
  int64_t best = 0;
  size_t hi = 0;
  for (size_t lo = 0; lo < t.size(); ++lo) {
    while (hi < t.size() && t[hi] < t[lo] + 1000) ++hi;
    best = std::max<int64_t>(best, static_cast<int64_t>(hi - lo));
  }
  return best;
}

void ExpectSlotsAndOrder(const std::vector<int64_t>& t, double rate) {
  for (size_t i = 0; i < t.size(); ++i) {
    double slot_start = static_cast<double>(i) * 1000.0 / rate;
    double slot_end = static_cast<double>(i + 1) * 1000.0 / rate;
    ASSERT_GE(static_cast<double>(t[i]), std::floor(slot_start)) << "item " << i;
    ASSERT_LT(static_cast<double>(t[i]), slot_end) << "item " << i;
    if (i > 0) {
      ASSERT_GE(t[i], t[i - 1]) << "item " << i;
    }
  }
}

TEST(ReplayPacerTest, TenThousandItemsAtFiftyPerSecond) {
  const double rate = 50;
  const int n = 10000;
  std::vector<int64_t> t = Offsets(rate, n, 42);
  ExpectSlotsAndOrder(t, rate);

  // Any 1-second window, sliding or aligned, holds at most 1.1·R.
  EXPECT_LE(MaxInAnySecond(t), 55);
  std::vector<int> aligned(static_cast<size_t>(t.back() / 1000 + 1));
  for (int64_t x : t) ++aligned[static_cast<size_t>(x / 1000)];
  for (size_t s = 0; s < aligned.size(); ++s) EXPECT_LE(aligned[s], 55) << "second " << s;

  // Total duration ≈ N/R = 200 s: the last send lies in the last slot.
  EXPECT_GE(t.back(), 199980);
  EXPECT_LT(t.back(), 200000);

  // Not in lockstep: the gaps vary widely.
  std::set<int64_t> gaps;
  for (size_t i = 1; i < t.size(); ++i) gaps.insert(t[i] - t[i - 1]);
  EXPECT_GT(gaps.size(), 20u);
  EXPECT_LE(*gaps.begin(), 2);    // sends can come almost together across a slot boundary ...
  EXPECT_GE(*gaps.rbegin(), 35);  // ... or almost two slots (40 ms) apart
}

TEST(ReplayPacerTest, SameSeedSameSchedule) {
  EXPECT_EQ(Offsets(50, 1000, 7), Offsets(50, 1000, 7));
  EXPECT_NE(Offsets(50, 1000, 7), Offsets(50, 1000, 8));
}

TEST(ReplayPacerTest, MaxPerSecond) {
  SeededRandom random(1);
  auto max_for = [&](double rate) { return ReplayPacer(rate, kStart, random).max_per_second(); };
  EXPECT_EQ(max_for(50), 55);
  EXPECT_EQ(max_for(10), 11);
  EXPECT_EQ(max_for(5), 5);
  EXPECT_EQ(max_for(1), 1);
  EXPECT_EQ(max_for(0.5), 1);
  EXPECT_EQ(max_for(1.5), 2);  // an average of 1.5 needs 2 in some windows
  EXPECT_EQ(max_for(2000), 2200);
}

// Small rates: the slots alone would let R + 1 sends into one second; the pacer holds to the
// limit without leaving any slot.
TEST(ReplayPacerTest, SmallRatesKeepTheLimitInSlidingWindows) {
  for (double rate : {0.3, 0.5, 1.0, 1.5, 2.0, 3.7, 5.0, 9.0, 9.5, 10.0, 10.5, 15.0, 19.9}) {
    SCOPED_TRACE(rate);
    SeededRandom random(3);
    ReplayPacer pacer(rate, kStart, random);
    std::vector<int64_t> t;
    for (int i = 0; i < 5000; ++i) t.push_back((pacer.Next() - kStart).count());
    ExpectSlotsAndOrder(t, rate);
    EXPECT_LE(MaxInAnySecond(t), pacer.max_per_second());
    if (rate == std::floor(rate) || rate >= 10) {
      EXPECT_LE(MaxInAnySecond(t), 1.1 * rate);
    }
  }
}

TEST(ReplayPacerTest, HighRatesShareMilliseconds) {
  const double rate = 2000;
  std::vector<int64_t> t = Offsets(rate, 20000, 5);
  ExpectSlotsAndOrder(t, rate);
  EXPECT_LE(MaxInAnySecond(t), 2200);
  EXPECT_GE(t.back(), 9999);
  EXPECT_LT(t.back(), 10000);
}

TEST(ReplayPacerTest, FirstItemIsWithinTheFirstSlot) {
  SeededRandom random(9);
  ReplayPacer pacer(4, kStart, random);
  TimePoint first = pacer.Next();
  EXPECT_GE(first, kStart);
  EXPECT_LT(first, kStart + milliseconds(250));
  EXPECT_EQ(pacer.count(), 1);
}

}  // namespace
}  // namespace hookrelay::pacing
