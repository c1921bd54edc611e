#include "sim/herd.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "policy/retry_policy.h"

namespace hookrelay::sim {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

HerdStrategy Named(const std::string& name) {
  for (HerdStrategy& s : DefaultHerdStrategies()) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "no strategy " << name;
  return {};
}

HerdScenario Burst() {
  HerdScenario s;
  s.fail_window = seconds(1);
  return s;
}

TEST(HerdTest, TheComparisonSetIsTheFourJittersThenThePresets) {
  std::vector<std::string> names;
  for (const HerdStrategy& s : DefaultHerdStrategies()) {
    names.push_back(s.name);
    EXPECT_TRUE(s.policy.Validate().ok()) << s.name;
  }
  std::vector<std::string> expected = {"none", "full", "equal", "decorrelated"};
  for (const std::string& p : policy::PresetNames()) expected.push_back(p);
  EXPECT_EQ(names, expected);
  // The four jitters share the default preset's base and cap.
  HerdStrategy none = Named("none");
  EXPECT_EQ(none.policy.base, minutes(1));
  EXPECT_EQ(none.policy.cap, minutes(30));
  EXPECT_EQ(none.policy.jitter, policy::Jitter::kNone);
}

TEST(HerdTest, ASeedGivesTheSameRunAndAnotherSeedAnother) {
  HerdScenario a;
  a.seed = 7;
  HerdResult r1 = SimulateHerd(a, Named("full"));
  HerdResult r2 = SimulateHerd(a, Named("full"));
  EXPECT_EQ(r1.arrivals, r2.arrivals);
  EXPECT_EQ(r1.requests, r2.requests);
  EXPECT_EQ(r1.failed_requests, r2.failed_requests);
  EXPECT_EQ(r1.exhausted, r2.exhausted);
  EXPECT_EQ(r1.drain_seconds, r2.drain_seconds);
  EXPECT_EQ(r1.peak_per_second, r2.peak_per_second);
  EXPECT_EQ(r1.p99_per_second, r2.p99_per_second);
  a.seed = 8;
  HerdResult r3 = SimulateHerd(a, Named("full"));
  EXPECT_NE(r1.arrivals, r3.arrivals);
}

TEST(HerdTest, WithoutJitterEventsThatFailedInOneSecondComeBackInOneSecond) {
  HerdScenario s;                     // 500 events over 60 s
  s.capacity_per_second = 1'000'000;  // the capacity caps nothing
  HerdResult r = SimulateHerd(s, Named("none"));
  ASSERT_GT(r.peak_failures_per_second, 1);
  EXPECT_EQ(r.peak_per_second, r.peak_failures_per_second);
  // Stronger: the per-second counts of every wave are those of the first failures, shifted by
  // whole minutes, so the multiset of counts after the recovery is the first wave's.
  std::map<int64_t, int64_t> first_wave, first_after;
  for (const auto& [second, count] : r.arrivals) {
    if (second < 60) first_wave[count]++;
  }
  // The first wave after the recovery (4m): attempt 4 at +7m, i.e. seconds 420..479.
  for (const auto& [second, count] : r.arrivals) {
    if (second >= 420 && second < 480) first_after[count]++;
  }
  EXPECT_EQ(first_after, first_wave);
  EXPECT_EQ(r.delivered, s.events);
}

TEST(HerdTest, JitterCutsTheBurstsPeakFiveFoldAndDrainsFaster) {
  HerdScenario s = Burst();
  HerdResult none = SimulateHerd(s, Named("none"));
  EXPECT_EQ(none.peak_per_second, s.events);  // the whole batch, in one second
  for (const char* name : {"equal", "full"}) {
    HerdResult j = SimulateHerd(s, Named(name));
    EXPECT_LE(j.peak_per_second * 5, none.peak_per_second) << name;
    EXPECT_LT(j.drain_seconds, none.drain_seconds) << name;
    EXPECT_LT(j.exhausted, none.exhausted) << name;
  }
}

TEST(HerdTest, EveryEventIsDeliveredOrExhaustedAndEveryRequestCounted) {
  for (HerdScenario s : {HerdScenario{}, Burst()}) {
    s.events = 2000;
    for (const HerdStrategy& strategy : DefaultHerdStrategies()) {
      HerdResult r = SimulateHerd(s, strategy);
      EXPECT_EQ(r.delivered + r.exhausted, s.events) << strategy.name;
      EXPECT_EQ(r.requests, r.failed_requests + r.delivered) << strategy.name;
      int64_t sum = 0;
      for (const auto& [second, count] : r.arrivals) sum += count;
      EXPECT_EQ(sum, r.requests) << strategy.name;
      EXPECT_GE(r.requests, s.events) << strategy.name;
      EXPECT_LE(r.p99_per_second, r.peak_per_second) << strategy.name;
    }
  }
}

TEST(HerdTest, OverCapacityRequestsFailAndTheCapacityIsNeverExceededInDelivery) {
  HerdScenario s = Burst();
  s.capacity_per_second = 10;
  HerdResult r = SimulateHerd(s, Named("none"));
  // 500 at +7m: 10 served; then 490 at +15m, 480 at +31m; attempt 6 is the last.
  EXPECT_EQ(r.delivered, 30);
  EXPECT_EQ(r.exhausted, 470);
  EXPECT_EQ(r.requests, 500 * 3 + 500 + 490 + 480);
  // The last give-ups come with attempt 6 at +31m (the batch's second), 27m after the recovery.
  EXPECT_GE(r.drain_seconds, 27 * 60);
  EXPECT_LT(r.drain_seconds, 27 * 60 + 1);
}

TEST(HerdTest, ValidateNamesTheField) {
  HerdScenario s;
  s.events = 0;
  EXPECT_EQ(s.Validate().field(), "events");
  s = HerdScenario{};
  s.capacity_per_second = 0;
  EXPECT_EQ(s.Validate().field(), "capacity");
  s = HerdScenario{};
  s.fail_window = Duration(0);
  EXPECT_EQ(s.Validate().field(), "fail_window");
  s = HerdScenario{};
  s.recover_at = seconds(30);
  EXPECT_EQ(s.Validate().field(), "recover_at");
  EXPECT_TRUE(HerdScenario{}.Validate().ok());
}

}  // namespace
}  // namespace hookrelay::sim
