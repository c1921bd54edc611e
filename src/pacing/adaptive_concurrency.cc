#include "pacing/adaptive_concurrency.h"

#include <algorithm>

namespace hookrelay::pacing {

AdaptiveConcurrency::AdaptiveConcurrency(int max_concurrency)
    : max_(std::max(1, max_concurrency)), allowed_(max_), ceiling_(max_) {}

void AdaptiveConcurrency::OnSuccess() {
  if (recovery_ > 0) --recovery_;
  if (++successes_ < allowed_) return;
  successes_ = 0;
  Grow();
}

void AdaptiveConcurrency::Grow() {
  if (in_slow_start()) {
    allowed_ = std::min({allowed_ * 2, slow_start_threshold_, max_});
    if (allowed_ >= slow_start_threshold_) slow_start_threshold_ = 0;
  } else if (allowed_ < ceiling_) {
    allowed_ = std::min({allowed_ + std::max(1, allowed_ / 2), ceiling_, max_});
  } else {
    allowed_ = std::min(allowed_ + std::min(probe_step_, allowed_), max_);
    probe_step_ = std::min(probe_step_, max_ / 2 + 1) * 2;  // bounded, no overflow
  }
}

void AdaptiveConcurrency::OnOverload() {
  successes_ = 0;  // a window is successes with no overload among them
  if (recovery_ > 0) {
    --recovery_;
    return;
  }
  ceiling_ = allowed_;
  recovery_ = allowed_;
  allowed_ = std::max(1, allowed_ / 2);
  slow_start_threshold_ = 0;
  probe_step_ = 1;
}

void AdaptiveConcurrency::OnOtherFailure() {
  if (recovery_ > 0) --recovery_;
}

void AdaptiveConcurrency::SlowStart() {
  int threshold = std::max({allowed_, (max_ + 1) / 2, slow_start_threshold_});
  slow_start_threshold_ = std::min(threshold, max_);
  allowed_ = 1;
  successes_ = 0;
  recovery_ = 0;
  ceiling_ = max_;  // what was learnt before the breaker opened or the pause is stale
  probe_step_ = 1;
  // With max 1 there is nothing to ramp up to.
  if (allowed_ >= slow_start_threshold_) slow_start_threshold_ = 0;
}

}  // namespace hookrelay::pacing
