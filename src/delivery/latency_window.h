#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hookrelay::delivery {

// Percentiles of a destination's recent attempt latencies (GET /api/v1/destinations/{name},
// "latency"). samples is 0 when no attempt has been timed; p50_ms and p99_ms are then 0 and mean
// nothing.
struct LatencySummary {
  int64_t p50_ms = 0;
  int64_t p99_ms = 0;
  int64_t samples = 0;
};

// The durations of the last kCapacity attempts (a ring, 4 KB), so the percentiles say how the
// destination answers now, not since start: a destination that was slow an hour ago and is fast
// again shows fast once kCapacity attempts have passed. Exact percentiles of those samples are
// better than an estimate from the histogram's buckets, which cannot tell 300 ms from 450 ms (both
// fall in (250 ms, 500 ms]). Not thread-safe: the engine holds it under its mutex.
class LatencyWindow {
 public:
  static constexpr size_t kCapacity = 1000;

  // Records one attempt's duration (negative counts as 0).
  void Add(int64_t duration_ms);
  // The samples held, in no particular order (copy them to compute Percentiles off the lock).
  const std::vector<int32_t>& samples() const { return ring_; }

 private:
  std::vector<int32_t> ring_;  // grows to kCapacity, then next_ overwrites the oldest
  size_t next_ = 0;
};

// The nearest-rank p50 and p99 of `samples` (the smallest sample with at least 50 % / 99 % of the
// samples at or below it: a value that was seen, never an interpolation). Reorders `samples`.
LatencySummary Percentiles(std::vector<int32_t> samples);

}  // namespace hookrelay::delivery
