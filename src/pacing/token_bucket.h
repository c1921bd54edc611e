#pragma once

#include "common/clock.h"

namespace hookrelay::pacing {

// A token bucket for a destination's rate limit: tokens accrue at `rate_per_second` up to
// `burst`; each request takes one. Pure: every call is told the time.
//
// The bucket starts full. Refill is computed from the time since the last refill, so it is exact
// for any pattern of calls; a long idle gap (even years, or a clock jump) fills the bucket to
// `burst` and no further, without overflow. Time going backwards adds nothing (the bucket waits
// until time passes the last instant it saw). Tokens are compared with a tolerance of 1e-9 so
// that rates such as 100/s give exactly one token per 10 ms despite binary fractions.
//
// Not thread-safe: callers serialize access.
class TokenBucket {
 public:
  // REQUIRES: rate_per_second > 0. `burst` below 1 is treated as 1 (otherwise nothing could
  // ever be taken).
  TokenBucket(double rate_per_second, double burst, TimePoint now);

  // Takes one token if one is available at `now`.
  bool TryTake(TimePoint now);
  // How long from `now` until TryTake can succeed: 0 when a token is available now; otherwise
  // rounded up to whole milliseconds, so waiting that long is always enough.
  Duration TimeUntilNext(TimePoint now) const;

  // Tokens available at `now` (a fraction while refilling).
  double Available(TimePoint now) const;
  double rate_per_second() const { return rate_; }
  double burst() const { return burst_; }

 private:
  double Refilled(TimePoint now) const;

  double rate_;  // tokens per second
  double burst_;
  double tokens_;
  TimePoint last_;  // instant `tokens_` was computed for
};

}  // namespace hookrelay::pacing
