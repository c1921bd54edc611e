#include "delivery/latency_window.h"

#include <gtest/gtest.h>

#include <vector>

#include "delivery/engine.h"

namespace hookrelay::delivery {
namespace {

TEST(LatencyPercentilesTest, NoSamplesIsNoPercentile) {
  const LatencySummary s = Percentiles({});
  EXPECT_EQ(s.samples, 0);
  EXPECT_EQ(s.p50_ms, 0);
  EXPECT_EQ(s.p99_ms, 0);
}

TEST(LatencyPercentilesTest, OneSampleIsBothPercentiles) {
  const LatencySummary s = Percentiles({42});
  EXPECT_EQ(s.samples, 1);
  EXPECT_EQ(s.p50_ms, 42);
  EXPECT_EQ(s.p99_ms, 42);
}

TEST(LatencyPercentilesTest, NearestRankOfUnsortedSamples) {
  // 1..100 shuffled: the 50th and 99th smallest.
  std::vector<int32_t> v;
  for (int i = 0; i < 100; ++i) v.push_back((i * 37) % 100 + 1);
  const LatencySummary s = Percentiles(v);
  EXPECT_EQ(s.samples, 100);
  EXPECT_EQ(s.p50_ms, 50);
  EXPECT_EQ(s.p99_ms, 99);
}

TEST(LatencyPercentilesTest, RanksRoundUpAndAreSeenValues) {
  // n = 3: p50 is rank ceil(1.5) = 2, p99 rank ceil(2.97) = 3.
  EXPECT_EQ(Percentiles({300, 10, 20}).p50_ms, 20);
  EXPECT_EQ(Percentiles({300, 10, 20}).p99_ms, 300);
  // n = 2: p50 is the lower one (rank 1), never their mean.
  EXPECT_EQ(Percentiles({10, 30}).p50_ms, 10);
  // One slow attempt in 200 is above p99 (rank 198); two in 100 are at it.
  std::vector<int32_t> v(200, 5);
  v[17] = 9000;
  EXPECT_EQ(Percentiles(v).p99_ms, 5);
  std::vector<int32_t> w(100, 5);
  w[3] = w[60] = 9000;
  EXPECT_EQ(Percentiles(w).p99_ms, 9000);
}

TEST(LatencyWindowTest, KeepsOnlyTheLastAttempts) {
  LatencyWindow w;
  for (size_t i = 0; i < LatencyWindow::kCapacity; ++i) w.Add(5000);
  EXPECT_EQ(Percentiles(w.samples()).p50_ms, 5000);
  // As many fast attempts since: the slow ones are gone from the window.
  for (size_t i = 0; i < LatencyWindow::kCapacity; ++i) w.Add(12);
  const LatencySummary s = Percentiles(w.samples());
  EXPECT_EQ(s.samples, static_cast<int64_t>(LatencyWindow::kCapacity));
  EXPECT_EQ(s.p50_ms, 12);
  EXPECT_EQ(s.p99_ms, 12);
  // Half of them replaced by 700 ms: p50 is still 12 ms, p99 already 700 ms; one more and p50 is
  // 700 ms too.
  for (size_t i = 0; i < LatencyWindow::kCapacity / 2; ++i) w.Add(700);
  EXPECT_EQ(Percentiles(w.samples()).p50_ms, 12);
  EXPECT_EQ(Percentiles(w.samples()).p99_ms, 700);
  w.Add(700);
  EXPECT_EQ(Percentiles(w.samples()).p50_ms, 700);
  EXPECT_EQ(Percentiles(w.samples()).samples, static_cast<int64_t>(LatencyWindow::kCapacity));
}

TEST(LatencyWindowTest, NegativeDurationsCountAsZero) {
  LatencyWindow w;
  w.Add(-3);
  EXPECT_EQ(Percentiles(w.samples()).p50_ms, 0);
}

TEST(LatencyBucketTest, BoundsAreInclusive) {
  EXPECT_EQ(LatencyBucket(0), 0u);
  EXPECT_EQ(LatencyBucket(5), 0u);
  EXPECT_EQ(LatencyBucket(6), 1u);
  EXPECT_EQ(LatencyBucket(300), 6u);  // (250, 500]
  EXPECT_EQ(LatencyBucket(60000), kLatencyBuckets - 2);
  EXPECT_EQ(LatencyBucket(60001), kLatencyBuckets - 1);  // +Inf
}

}  // namespace
}  // namespace hookrelay::delivery
