#include "pacing/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace hookrelay::pacing {

namespace {
constexpr double kEpsilon = 1e-9;
}  // namespace

TokenBucket::TokenBucket(double rate_per_second, double burst, TimePoint now)
    : rate_(rate_per_second > 0 ? rate_per_second : 1e-9),
      burst_(std::max(1.0, burst)),
      tokens_(burst_),
      last_(now) {}

double TokenBucket::Refilled(TimePoint now) const {
  if (now <= last_) return tokens_;
  // Subtract as doubles: two extreme int64 instants cannot overflow, and the gap needed to
  // fill the bucket is small, so precision only matters where it is exact anyway.
  double elapsed_ms = static_cast<double>(now.time_since_epoch().count()) -
                      static_cast<double>(last_.time_since_epoch().count());
  double missing = burst_ - tokens_;
  if (elapsed_ms * rate_ >= missing * 1000.0) return burst_;
  return tokens_ + elapsed_ms * rate_ / 1000.0;
}

double TokenBucket::Available(TimePoint now) const { return Refilled(now); }

bool TokenBucket::TryTake(TimePoint now) {
  if (now > last_) {
    tokens_ = Refilled(now);
    last_ = now;
  }
  if (tokens_ < 1.0 - kEpsilon) return false;
  tokens_ = std::max(0.0, tokens_ - 1.0);
  return true;
}

Duration TokenBucket::TimeUntilNext(TimePoint now) const {
  double tokens = Refilled(now);
  if (tokens >= 1.0 - kEpsilon) return Duration(0);
  double wait_ms = (1.0 - tokens) * 1000.0 / rate_;
  // Shave half the tolerance so a wait of 10.000000001 ms (binary fractions) does not become
  // 11 ms; after the rounded wait the bucket still holds at least 1 - kEpsilon / 2 tokens.
  double rounded = std::ceil(wait_ms - kEpsilon * 500.0 / rate_);
  // The wait is measured from `now`, but a clock that went backwards adds the gap back.
  double behind = now < last_ ? static_cast<double>((last_ - now).count()) : 0.0;
  double total = std::max(1.0, rounded) + behind;
  constexpr double kMax = 9.0e15;  // far beyond any real wait; keeps the int64 cast defined
  return Duration(static_cast<int64_t>(std::min(total, kMax)));
}

}  // namespace hookrelay::pacing
