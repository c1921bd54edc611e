#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"

namespace hookrelay::alerts {

// Something an operator should hear about, about one destination.
struct Alert {
  enum class Kind {
    kBreakerOpened,  // `until`: when the breaker lets a probe through
    kBreakerClosed,
    kDeliveriesFailed,  // deliveries given up for good (status failed); batched, see `count`
    kDestinationPaused,
    kDestinationResumed,
    kStalled,  // due deliveries are not moving
  };
  Kind kind = Kind::kDeliveriesFailed;
  std::string destination;
  // When it happened; for a batch of failures, when the first one of the batch happened.
  TimePoint at;
  // Why, in words for a human ("20 consecutive failures; last: 503 Service Unavailable"). For a
  // batch, the latest reason.
  std::string reason;
  // How many occurrences this alert stands for: failures in a batch, or repeats of the same
  // kind that were held back (see AlertBatcher).
  int64_t count = 1;
  std::optional<TimePoint> until;
  // For a batch of failures: up to 3 distinct reasons seen in the batch, oldest first.
  std::vector<std::string> sample_reasons;
};

// Where alerts are raised. Implementations must not block the caller (the delivery engine
// raises alerts on its own threads). Thread-safe.
class AlertSink {
 public:
  virtual ~AlertSink() = default;
  virtual void Raise(Alert a) = 0;
};

}  // namespace hookrelay::alerts
