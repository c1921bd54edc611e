#include "delivery/destination_control.h"

#include <utility>

namespace hookrelay::delivery {

DestinationControl::DestinationControl(const policy::BreakerConfig& config,
                                       const store::DestinationControl& stored)
    : breaker(config, stored.breaker) {
  if (stored.pause) {
    paused = true;
    paused_reason = stored.pause->reason;
  }
}

bool DestinationControl::Adopt(const store::DestinationControl& c, uint64_t read_gen) {
  if (control_gen != read_gen) return false;
  bool slow_start = false;
  if (breaker_pending == 0 && !(breaker.snapshot() == c.breaker)) {
    const bool was_closed = breaker.state() == policy::BreakerState::kClosed;
    breaker = policy::CircuitBreaker(breaker.config(), c.breaker);
    // Closed by another node's probe: the backlog ramps up here too.
    if (!was_closed && c.breaker.state == policy::BreakerState::kClosed) slow_start = true;
  }
  const bool now_paused = c.pause.has_value();
  if (paused && !now_paused) slow_start = true;  // resumed (through another node)
  paused = now_paused;
  paused_reason = now_paused ? c.pause->reason : "";
  return slow_start;
}

void DestinationControl::PausedHere(std::string reason, TimePoint now) {
  paused = true;
  paused_reason = std::move(reason);
  last_pause_sweep = now;
  ++control_gen;
}

void DestinationControl::ResumedHere() {
  paused = false;
  paused_reason.clear();
  ++control_gen;
}

void DestinationControl::BreakerResetHere(const policy::BreakerConfig& config,
                                          const policy::BreakerSnapshot& after) {
  breaker = policy::CircuitBreaker(config, after);
  ++breaker_epoch;
  ++control_gen;
}

void DestinationControl::UpdateBreakerConfig(const policy::BreakerConfig& config) {
  if (!(breaker.config() == config)) breaker = policy::CircuitBreaker(config, breaker.snapshot());
}

ControlView DestinationControl::View(const model::Destination* d) const {
  ControlView v;
  v.breaker = breaker.snapshot();
  if (paused) {
    v.paused_by = paused_reason == store::kGonePauseReason ? PausedBy::kGone : PausedBy::kOperator;
    v.paused_reason = paused_reason;
  }
  if (d != nullptr && d->paused) {
    v.paused_by = PausedBy::kConfig;
    // The stored reason, when there is one, is the more precise (as the API always said).
    if (v.paused_reason.empty()) v.paused_reason = std::string(kConfigPauseReason);
  }
  v.paused = v.paused_by != PausedBy::kNone;
  return v;
}

}  // namespace hookrelay::delivery
