#pragma once

#include <thread>

#include "common/clock.h"
#include "delivery/engine_state.h"
#include "model/destination.h"

namespace hookrelay::delivery {

class Claimer;

// Scheduling: which destination may send how much now, and when to look again.
//
// One thread goes over the catalog's destinations. For each it applies, in this order, the
// operator's pause (or a 410's), an open circuit breaker (nothing is claimed; the waiting
// deliveries are shown as paused), claims already out (two at most; a second only for a quarter
// of the allowed slots or more) or a claim that came up short (nothing due before idle_until), a
// half-open breaker (one probe, with no claim out), the adaptive concurrency limit and
// the rate limit; the slots it grants are reserved (DestState::in_flight, ::reserved) and handed
// to the Claimer as one ClaimJob. It then sleeps until the earliest time any destination is
// worth another look (a retry due, a breaker to half-open, a rate-limit token), a Wake, or
// poll_interval, whichever comes first. All times are read from the injected clock and the sleep
// is the clock's (Clock::WaitUntil): with a FakeClock, a test that moves the time to the
// scheduler's deadline (FakeClock::NextDeadline) wakes it, and no real time passes.
//
// It also learns each attempt's outcome as soon as it ends (OnAttemptEnded, on the sender's
// thread): the slot is free, the breaker and the adaptive concurrency take the outcome into
// account before the next claim. Once a second it refreshes the stall gauges and raises kStalled.
class Scheduler {
 public:
  Scheduler(EngineState& state, Claimer& claimer) : state_(state), claimer_(claimer) {}
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void Start();
  // Returns once the thread has seen EngineState::stopping (set it and notify wake_cv first).
  void Join();

  // The attempt behind `c` ended (its decision is in c.decided): frees its slot, feeds this
  // node's copy of the destination's breaker and the adaptive concurrency, and sets
  // c.breaker_input for the recorder, which applies it to the shared breaker.
  void OnAttemptEnded(Completion& c);

 private:
  void Loop();
  // Reserves and queues what `d` may claim now; returns the earliest time worth looking again.
  // Shows the destination's waiting deliveries as paused (`reason`), then undoes that when the
  // stored pause and breaker no longer hold them back (the decision was made on a stale copy).
  void Sweep(const model::Destination& d, const std::string& reason, TimePoint now);
  TimePoint ServeDestination(const model::Destination& d, TimePoint now);
  // Forgets destinations deleted from the catalog once nothing of theirs is out.
  void ForgetDeleted(const model::Catalog& catalog);
  void CheckStall(TimePoint now);
  // Reads every destination's shared breaker and pause (one store read) into DestState.
  void RefreshControls();

  EngineState& state_;
  Claimer& claimer_;
  std::thread thread_;
  TimePoint last_stall_check_{};      // used by the scheduler thread only
  TimePoint last_control_refresh_{};  // likewise
};

}  // namespace hookrelay::delivery
