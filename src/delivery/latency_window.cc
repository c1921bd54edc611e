#include "delivery/latency_window.h"

#include <algorithm>
#include <limits>

namespace hookrelay::delivery {

void LatencyWindow::Add(int64_t duration_ms) {
  const auto v = static_cast<int32_t>(
      std::clamp<int64_t>(duration_ms, 0, std::numeric_limits<int32_t>::max()));
  if (ring_.size() < kCapacity) {
    ring_.push_back(v);
    return;
  }
  ring_[next_] = v;
  next_ = (next_ + 1) % kCapacity;
}

namespace {

// The nearest-rank percentile: the sample at rank ceil(p/100 * n) (1-based) in sorted order.
int64_t NearestRank(std::vector<int32_t>& samples, int64_t percent) {
  const auto n = static_cast<int64_t>(samples.size());
  const int64_t rank = std::max<int64_t>(1, (percent * n + 99) / 100);
  auto nth = samples.begin() + (rank - 1);
  std::nth_element(samples.begin(), nth, samples.end());
  return *nth;
}

}  // namespace

LatencySummary Percentiles(std::vector<int32_t> samples) {
  LatencySummary out;
  out.samples = static_cast<int64_t>(samples.size());
  if (samples.empty()) return out;
  out.p50_ms = NearestRank(samples, 50);
  out.p99_ms = NearestRank(samples, 99);
  return out;
}

}  // namespace hookrelay::delivery
