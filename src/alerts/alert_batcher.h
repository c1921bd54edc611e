#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "alerts/alert.h"
#include "common/clock.h"

namespace hookrelay::alerts {

// Decides which alerts go out when, so an outage is one message, not ten thousand. Pure: every
// call is told the time. Not thread-safe.
//
// Failed deliveries (kDeliveriesFailed) are batched per destination: the first failure opens a
// batch that ends `window` later; further failures add their count to it (the latest reason
// becomes the batch's reason; up to 3 distinct reasons are kept as samples), and when the window
// ends the batch goes out as ONE alert whose count is the total and whose `at` is the first
// failure. A failure after that opens a new batch.
//
// Every other kind goes out at once, except that a repeat of the same kind for the same
// destination within `window` of the last one sent is held: further repeats add to its count,
// and when the window ends it goes out once, with the latest details and the number of
// repeats as its count (then a new window starts). So the operator always hears of the latest
// state, at most once per kind, destination and window. Kinds come in opposite pairs (breaker
// opened/closed, paused/resumed); to keep the last message about a destination true:
//  - when an alert goes out at once, a held alert of the opposite kind goes out just before it;
//  - when a held alert goes out, a held alert of the opposite kind goes out with it.
//
// Alerts returned together are ordered by `at`.
class AlertBatcher {
 public:
  // REQUIRES: window > 0.
  explicit AlertBatcher(Duration window);

  // Takes in an alert raised at `now`; returns what to send now (including anything already
  // due at `now`).
  std::vector<Alert> Add(Alert a, TimePoint now);
  // What is due at `now`: batches and held repeats whose window has ended.
  std::vector<Alert> Due(TimePoint now);
  // When the next batch or held repeat is due; nullopt when nothing is waiting.
  std::optional<TimePoint> NextDue() const;
  // Everything waiting, due or not (at shutdown). Forgets all state.
  std::vector<Alert> Flush();

  Duration window() const { return window_; }
  // Occurrences that were folded into another alert instead of going out on their own.
  int64_t folded() const { return folded_; }

 private:
  using Key = std::pair<std::string, Alert::Kind>;  // destination, kind
  struct Repeats {
    TimePoint last_sent;
    std::optional<Alert> held;
  };
  struct Batch {
    Alert alert;
    TimePoint due;
  };

  // Moves the held alert of `key` (if any) to `out`; its window restarts at `now`.
  void Release(const Key& key, TimePoint now, std::vector<Alert>& out);

  Duration window_;
  std::map<Key, Repeats> repeats_;
  std::map<std::string, Batch> batches_;  // by destination
  int64_t folded_ = 0;
};

}  // namespace hookrelay::alerts
