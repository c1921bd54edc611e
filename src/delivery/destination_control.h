#pragma once

// One destination's control as this node holds it: its copy of the shared breaker, the breaker
// inputs on their way to the store, the epochs that tell a stale read or transition from a
// current one, the probe's resume, and the pause. Internal to src/delivery (the engine's parts
// hold one per destination, under EngineState::mu); what the rest of hookrelay reads of it is the
// value ControlView, through DeliveryEngine::Destinations.

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "model/destination.h"
#include "policy/breaker.h"
#include "store/store.h"

namespace hookrelay::delivery {

// Who holds a destination back from sending, the one answer to "is it paused" that the engine,
// the API, the metrics and bulk replay read. The catalog's pause (`paused = true` in its
// definition) comes first: nothing this node or the store does undoes it.
enum class PausedBy {
  kNone,
  kConfig,    // paused in the catalog (config file or API definition)
  kOperator,  // paused through the API or CLI (the store's pause)
  kGone,      // paused by the engine after 410 Gone (the store's pause, store::kGonePauseReason)
};

// The read view: a value, copied out under the engine's lock.
struct ControlView {
  policy::BreakerSnapshot breaker;
  bool paused = false;  // paused_by != kNone
  PausedBy paused_by = PausedBy::kNone;
  // The stored pause's reason; "paused in the configuration" when only the catalog pauses it;
  // empty when not paused.
  std::string paused_reason;
};

inline constexpr std::string_view kConfigPauseReason = "paused in the configuration";

class DestinationControl {
 public:
  // From the destination's breaker settings and the control read from the store.
  DestinationControl(const policy::BreakerConfig& config, const store::DestinationControl& stored);

  // Takes the control read from the store: the pause always, the breaker unless outcomes of this
  // node are still on their way to the store (breaker_pending). `read_gen` is control_gen when the
  // read began: nothing is taken when this node changed the control since (the read may predate
  // that change). True when the destination should slow-start: it was resumed, or its breaker
  // closed, by another node.
  bool Adopt(const store::DestinationControl& c, uint64_t read_gen);
  // This node paused the destination (the store's pause is written), at `now`.
  void PausedHere(std::string reason, TimePoint now);
  // This node resumed it (the store's pause is cleared).
  void ResumedHere();
  // The operator reset the shared breaker; `after` is the store's breaker then. Transitions
  // decided before the reset are stale from here on (breaker_epoch).
  void BreakerResetHere(const policy::BreakerConfig& config, const policy::BreakerSnapshot& after);

  // The destination was changed (through the API): new thresholds and open periods apply from
  // now on; the breaker's state (failures counted, open until, trips) carries over.
  void UpdateBreakerConfig(const policy::BreakerConfig& config);

  // The one view of the three pause sources (the catalog's `paused`, the store's pause as last
  // read, and this node's own changes) and of the breaker.
  ControlView View(const model::Destination* d) const;

  // The state itself (the engine's parts read and change it under EngineState::mu; the rules
  // above are the changes made from more than one place).
  //
  // This node's copy of the shared breaker (the store's row is the breaker: Store::UpdateBreaker).
  // Fed at once by the outcomes seen here (so no request leaves after a failure that opened it
  // here), replaced by the store's snapshot when the recorder has applied them, when a claim reads
  // the row, and by the scheduler's refresh; never while outcomes of this node are still on their
  // way to the store (breaker_pending), which the copy already counts.
  policy::CircuitBreaker breaker;
  int breaker_pending = 0;  // breaker inputs queued for the store, not yet applied
  // Of those, failures. While there are any, no new claim goes out (the scheduler waits for the
  // recorder to apply them): a trip counted on several nodes is in the store before any of them
  // claims again, so each node has at most its requests already out when it opens.
  int breaker_pending_failures = 0;
  // The shared pause (Store::PauseDestination: by the operator or after 410 Gone), as last read.
  bool paused = false;
  std::string paused_reason;
  TimePoint last_pause_sweep{};
  // A probe's claim found nothing to send: the next probe resumes the destination's deliveries
  // first (a pause for the breaker, decided before it half-opened, may have landed after the
  // resume at half-open; without this the breaker would stay half-open with nothing to probe).
  bool resume_before_probe = false;
  // Bumped by ResetBreaker: a transition decided before a reset is stale once it is recorded.
  uint64_t breaker_epoch = 0;
  // Bumped by every change this node makes to the shared breaker or pause: through the operator
  // controls (pause, resume, reset, a 410's pause), by the recorder applying outcomes, and by a
  // probe's grant or return. A read of the stored control that started before such a change is
  // stale and is not adopted (Adopt), or it could undo the change here until the next refresh (a
  // claim that read "half-open, probe out" while this node's successful probe was being applied
  // would leave this node's copy half-open with nothing to probe: found by engine_shared_test
  // under ASan).
  uint64_t control_gen = 0;
};

}  // namespace hookrelay::delivery
