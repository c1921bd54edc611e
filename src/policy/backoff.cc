#include "policy/backoff.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace hookrelay::policy {

Duration RawDelay(const RetryPolicy& policy, int retry) {
  const int n = std::max(retry, 1);
  const Duration cap = policy.cap;
  if (policy.strategy == Strategy::kLadder) {
    if (policy.ladder.empty()) return cap;
    const size_t step = std::min(static_cast<size_t>(n), policy.ladder.size()) - 1;
    return std::min(cap, policy.ladder[step]);
  }
  // base * 2^(n-1), saturating at cap *before* shifting: a shift by 63+ or a product past
  // int64 would be undefined behaviour, and retry 60 with a one-day base must still give cap.
  const int64_t base = policy.base.count();
  const int shift = n - 1;
  if (base <= 0) return std::min(cap, Duration::zero());
  if (shift >= 63 || base > (cap.count() >> shift)) return cap;
  return Duration(base << shift);
}

Duration RetryDelay(const RetryPolicy& policy, int retry, Duration previous, Random& random) {
  const Duration d = RawDelay(policy, retry);
  switch (policy.jitter) {
    case Jitter::kNone: return d;
    case Jitter::kFull: return Duration(random.UniformInt(0, std::max<int64_t>(d.count(), 0)));
    case Jitter::kEqual: {
      const int64_t half = std::max<int64_t>(d.count(), 0) / 2;
      // [half, d] rather than [half, 2*half]: an odd d keeps its last millisecond reachable.
      return Duration(half + random.UniformInt(0, std::max<int64_t>(d.count(), 0) - half));
    }
    case Jitter::kDecorrelated: {
      const int64_t base = policy.base.count();
      const int64_t prev = std::max(previous.count(), base);
      constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
      const int64_t hi = prev > kMax / 3 ? kMax : 3 * prev;
      return std::min(policy.cap, Duration(random.UniformInt(base, hi)));
    }
  }
  return d;
}

}  // namespace hookrelay::policy
