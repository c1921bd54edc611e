#pragma once

namespace hookrelay::pacing {

// How many requests may be in flight to one destination at once, adapted to how it copes
// (AIMD, as in TCP congestion control). Pure: no clock, no I/O; the sender reports outcomes.
//
// The rules, exactly:
//  - A fresh destination starts at `max` (it is trusted until it struggles).
//  - A "window" is `allowed()` successes counted since the last change of level. When a window
//    completes, the level grows and the count starts again from 0:
//      * in slow start: doubles, but never past the slow-start threshold (nor `max`); reaching
//        the threshold ends slow start;
//      * otherwise: +1 (additive increase), never above `max`.
//    At `max` a completed window changes nothing (the count still restarts).
//  - OnOverload() (429, 503, timeout): the level halves (rounding down), never below 1; the
//    success count restarts and slow start ends (TCP's multiplicative decrease).
//  - OnOtherFailure() (any other failure: 4xx, 500, connection refused, ...): no change at all.
//    Such failures say nothing about load, and the breaker deals with a dead destination.
//  - SlowStart() (a breaker closes, a paused destination resumes): the level drops to 1, the
//    success count restarts, and slow start begins with the threshold
//        max(previous level, ceil(max / 2), threshold of a slow start already under way),
//    capped at `max`. The previous level alone would usually be 1 (the overloads that led to the
//    breaker opening halved it), which would make recovery additive only; ceil(max / 2) is the
//    classic TCP threshold, and a slow start interrupted by another keeps its target.
//
// Not thread-safe: callers serialize access per destination.
class AdaptiveConcurrency {
 public:
  // REQUIRES: max_concurrency >= 1 (smaller values are treated as 1).
  explicit AdaptiveConcurrency(int max_concurrency);

  // Requests that may be in flight now: 1 ≤ allowed() ≤ max_concurrency().
  int allowed() const { return allowed_; }
  int max_concurrency() const { return max_; }
  bool in_slow_start() const { return slow_start_threshold_ > 0; }
  // The level slow start ramps to; 0 when not in slow start.
  int slow_start_threshold() const { return slow_start_threshold_; }

  void OnSuccess();
  void OnOverload();
  void OnOtherFailure();
  void SlowStart();

 private:
  int max_;
  int allowed_;
  int successes_ = 0;             // successes in the current window
  int slow_start_threshold_ = 0;  // > 0 while in slow start
};

}  // namespace hookrelay::pacing
