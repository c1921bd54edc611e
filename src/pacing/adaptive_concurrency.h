#pragma once

namespace hookrelay::pacing {

// How many requests may be in flight to one destination at once, adapted to how it copes
// (AIMD-like, as in TCP congestion control). Pure: no clock, no I/O; the sender reports outcomes.
//
// The rules, exactly:
//  - A fresh destination starts at `max` (it is trusted until it struggles).
//  - A "window" is `allowed()` successes counted since the last change of level or the last
//    overload (counted or not, see OnOverload). When a window
//    completes, the level grows and the count starts again from 0:
//      * in slow start: doubles, but never past the slow-start threshold (nor `max`); reaching
//        the threshold ends slow start;
//      * below the ceiling (the level the last overload was seen at; `max` when none was): by
//        half (×1.5, at least +1), never past the ceiling;
//      * at or above the ceiling: by a probe step that starts at 1 and doubles with each window
//        (+1, +2, +4, …, never more than doubling the level), so a destination that got faster
//        than when it last struggled is found in a few windows, not in one window per request.
//    Nothing exceeds `max`; at `max` a completed window changes nothing (the count restarts).
//    So with no overload the level reaches `max` within a bounded number of successes: from
//    `max / 2` after one overload, 2 windows (1.25 × max successes); from 1 after overloads, or
//    through slow start after a breaker closed, less than 3 × max successes.
//  - OnOverload() (429, 503, timeout): the success count restarts; the ceiling becomes the
//    current level, the level halves (rounding down), never below 1, slow start ends, the probe
//    step returns to 1. Then the next (previous level) outcomes are a recovery period in which
//    further overloads change nothing but the success count: they come from requests already in
//    flight when the level was cut (TCP cuts once per round trip, not once per loss), and a burst
//    of them must not drive the level to 1. A destination that stays overloaded is still halved
//    once per such period, also when it answers some requests in between.
//  - OnOtherFailure() (any other failure: 4xx, 500, connection refused, ...): no change at all
//    (it counts towards the recovery period, as an outcome). Such failures say nothing about
//    load, and the breaker deals with a dead destination.
//  - SlowStart() (a breaker closes, a paused destination resumes): the level drops to 1, the
//    success count restarts, any recovery period ends, the ceiling returns to `max` (what was
//    learnt before the breaker opened or the pause is stale), and slow start begins with the
//    threshold
//        max(previous level, ceil(max / 2), threshold of a slow start already under way),
//    capped at `max`. The previous level alone would usually be 1 (the overloads that led to the
//    breaker opening halved it), which would make recovery slow; ceil(max / 2) is the classic
//    TCP threshold, and a slow start interrupted by another keeps its target. Past the
//    threshold, the level keeps growing by the rules above (×1.5 up to `max`), so a breaker that
//    closed once does not leave the level stuck near half of `max`.
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
  // The level the last overload was seen at (max_concurrency() when none was).
  int ceiling() const { return ceiling_; }
  // Outcomes left in the recovery period after a cut (0: an overload now halves the level).
  int recovery_left() const { return recovery_; }

  void OnSuccess();
  void OnOverload();
  void OnOtherFailure();
  void SlowStart();

 private:
  void Grow();

  int max_;
  int allowed_;
  int successes_ = 0;             // successes in the current window
  int slow_start_threshold_ = 0;  // > 0 while in slow start
  int ceiling_;                   // level at the last overload (max_ when none)
  int probe_step_ = 1;            // the next increase at or above the ceiling
  int recovery_ = 0;              // outcomes left in which an overload changes nothing
};

}  // namespace hookrelay::pacing
