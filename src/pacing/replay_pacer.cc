#include "pacing/replay_pacer.h"

#include <algorithm>
#include <cmath>

namespace hookrelay::pacing {

ReplayPacer::ReplayPacer(double rate_per_second, TimePoint start, Random& random)
    : rate_(rate_per_second > 0 ? rate_per_second : 1e-9),
      start_(start),
      random_(random),
      max_per_second_(static_cast<int64_t>(std::max(std::ceil(rate_), std::floor(1.1 * rate_)))) {
  // A 1-second window meets at most ceil(R) + 1 slots. When max_per_second_ covers that, no
  // window needs checking; otherwise (R < 20) the ring is small.
  if (static_cast<double>(max_per_second_) < std::ceil(rate_) + 1) {
    recent_.assign(static_cast<size_t>(max_per_second_), INT64_MIN);
  }
}

TimePoint ReplayPacer::Next() {
  const double slot_ms = 1000.0 / rate_;
  const double slot_start = static_cast<double>(next_index_) * slot_ms;
  double at = slot_start + random_.Uniform01() * slot_ms;
  int64_t ms = static_cast<int64_t>(std::floor(at));
  ms = std::max(ms, last_ms_);
  if (!recent_.empty()) {
    // recent_[i % k] holds the send k items back: at most k sends in any 1-second window.
    size_t slot = static_cast<size_t>(next_index_ % max_per_second_);
    if (recent_[slot] != INT64_MIN) ms = std::max(ms, recent_[slot] + 1000);
    recent_[slot] = ms;
  }
  last_ms_ = ms;
  ++next_index_;
  return start_ + Duration(ms);
}

}  // namespace hookrelay::pacing
