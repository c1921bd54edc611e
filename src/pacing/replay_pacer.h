#pragma once

#include <cstdint>
#include <vector>

#include "common/clock.h"
#include "common/random.h"

namespace hookrelay::pacing {

// Send times for a bulk replay at R items per second, spread with jitter so a receiver does not
// see arrivals in lockstep. Pure: the caller sends item i at the i-th Next() (or later).
//
// Item i belongs to the slot [start + i/R, start + (i+1)/R) and is sent at a uniformly random
// point of its slot (in whole milliseconds). Guarantees:
//  - send times never decrease, and item i is never sent before start + i/R (rounded down to
//    the millisecond), nor after its slot, so N items take about N/R;
//  - any half-open 1-second window holds at most max_per_second() = max(ceil(R), floor(1.1·R))
//    items: at most 1.1·R for every whole R and every R ≥ 10 (a fractional R below 10, say 1.5,
//    must allow ceil(R) = 2 in some windows to keep its average). A window meets at most
//    ceil(R) + 1 slots, so when max_per_second() ≥ ceil(R) + 1 (every R ≥ 20, whole R ≥ 10) the
//    slots alone guarantee it; otherwise a send is pushed later, never past its own slot, when
//    it would be the (max_per_second()+1)-th within one second.
//
// Not thread-safe.
class ReplayPacer {
 public:
  // REQUIRES: rate_per_second > 0. `random` must outlive the pacer.
  ReplayPacer(double rate_per_second, TimePoint start, Random& random);

  // The send time of the next item.
  TimePoint Next();

  int64_t count() const { return next_index_; }
  int64_t max_per_second() const { return max_per_second_; }
  double rate_per_second() const { return rate_; }

 private:
  double rate_;
  TimePoint start_;
  Random& random_;
  int64_t max_per_second_;
  int64_t next_index_ = 0;
  int64_t last_ms_ = 0;  // offset of the previous send from start_
  // For small rates: offsets of the last max_per_second_ sends, as a ring (empty otherwise).
  std::vector<int64_t> recent_;
};

}  // namespace hookrelay::pacing
