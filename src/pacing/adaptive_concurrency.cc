#include "pacing/adaptive_concurrency.h"

#include <algorithm>

namespace hookrelay::pacing {

AdaptiveConcurrency::AdaptiveConcurrency(int max_concurrency)
    : max_(std::max(1, max_concurrency)), allowed_(max_) {}

void AdaptiveConcurrency::OnSuccess() {
  if (++successes_ < allowed_) return;
  successes_ = 0;
  if (in_slow_start()) {
    allowed_ = std::min({allowed_ * 2, slow_start_threshold_, max_});
    if (allowed_ >= slow_start_threshold_) slow_start_threshold_ = 0;
  } else {
    allowed_ = std::min(allowed_ + 1, max_);
  }
}

void AdaptiveConcurrency::OnOverload() {
  allowed_ = std::max(1, allowed_ / 2);
  successes_ = 0;
  slow_start_threshold_ = 0;
}

void AdaptiveConcurrency::OnOtherFailure() {}

void AdaptiveConcurrency::SlowStart() {
  int threshold = std::max({allowed_, (max_ + 1) / 2, slow_start_threshold_});
  slow_start_threshold_ = std::min(threshold, max_);
  allowed_ = 1;
  successes_ = 0;
  // With max 1 there is nothing to ramp up to.
  if (allowed_ >= slow_start_threshold_) slow_start_threshold_ = 0;
}

}  // namespace hookrelay::pacing
