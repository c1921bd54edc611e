#pragma once

// The state the delivery engine's parts share (internal to src/delivery; see engine.h for the
// engine's contract and docs/delivery.md, "Inside the engine", for how the parts fit).

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "alerts/alert.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/random.h"
#include "delivery/destination_control.h"
#include "delivery/engine.h"
#include "delivery/request_sender.h"
#include "model/destination.h"
#include "model/registry.h"
#include "pacing/adaptive_concurrency.h"
#include "pacing/token_bucket.h"
#include "policy/breaker.h"
#include "policy/decision.h"
#include "store/store.h"

namespace hookrelay::delivery {

// One destination as the engine serves it: its limits (breaker, adaptive concurrency, rate limit,
// pause: DestinationControl), the slots in use, and its counters.
struct DestState {
  DestState(const model::Destination& d, const store::DestinationControl& stored)
      : max_concurrency(d.max_concurrency),
        concurrency(d.max_concurrency),
        control(d.breaker, stored) {}

  int max_concurrency;
  pacing::AdaptiveConcurrency concurrency;
  std::optional<pacing::TokenBucket> bucket;
  double bucket_rate = 0;
  int in_flight = 0;
  int claims_out = 0;      // claims queued or running (at most kMaxClaimsOut, scheduler.cc)
  int reserved = 0;        // of in_flight: slots held for claims out, not yet requests
  TimePoint idle_until{};  // a claim came up short: nothing is due before this
  // Per-destination counters, see DestinationState.
  int64_t delivered = 0, failed = 0;
  int64_t attempts_success = 0, attempts_retryable = 0, attempts_final = 0;
  int64_t due_backlog = 0;
  std::array<int64_t, kLatencyBuckets> latency_buckets{};
  int64_t latency_sum_ms = 0;
  LatencyWindow latency_window;
  // The breaker copy, pending inputs, epochs, the probe's resume and the pause: the rules for
  // changing them are DestinationControl's.
  DestinationControl control;
};

// A claim the scheduler asked for: `want` slots of the destination are reserved for it.
struct ClaimJob {
  std::shared_ptr<const model::Destination> destination;
  int want = 0;  // slots reserved for it (DestState::in_flight)
  bool probe = false;
  TimePoint now{};
  uint64_t work_gen = 0;  // EngineState::work_gen when it was queued
};

// What follows from one completion: the decision and what to record.
struct Decided {
  TimePoint now{};
  policy::RetryDecision decision;
  store::Attempt attempt;
  store::DeliveryUpdate update;
};

// One finished attempt (or a delivery that could not be sent), on its way to be recorded.
struct Completion {
  std::shared_ptr<const model::Destination> destination;  // shared by a claim's deliveries
  store::Delivery delivery;
  SendResult result;
  bool not_sent = false;  // the event was gone: record a failure without an HTTP attempt
  // What a transform made the request send (recorded with the attempt); nullopt without one.
  std::optional<store::Attempt::Transformed> transformed;
  // Sent as the breaker's half-open probe: a retryable failure is not counted toward the
  // delivery's max_attempts (policy::DeliveryProgress::probe).
  bool probe = false;
  // Filled in as soon as the attempt ends: the decision, and what the outcome did to the
  // destination's breaker (fed then, not once the record is committed, so no request leaves
  // after the failure that opened it).
  Decided decided;
  policy::BreakerTransition breaker = policy::BreakerTransition::kNone;
  // What the outcome tells the shared breaker (nullopt: nothing, e.g. a success while the breaker
  // is closed with no failure counted), set when the attempt ends; applied by the recorder, once.
  std::optional<policy::BreakerInput> breaker_input;
  bool breaker_applied = false;
  // The shared breaker right after that transition (as the store applied it), and
  // DestState::breaker_epoch then: the recorder reports the transition as it happened, and not at
  // all when the operator reset the breaker meanwhile (the breaker's state then says nothing of
  // this transition: trip 0, 0 failures).
  policy::BreakerSnapshot breaker_after;
  uint64_t breaker_epoch = 0;
  // Decided by the recorder and written at least once (a failed write keeps the decision).
  bool record_pending = false;
};

// What the scheduler, the claimer, the recorder and the operator controls share: the injected
// dependencies, and the per-destination state and counters under one mutex (held only for
// bookkeeping, never across a store call or a send).
struct EngineState {
  EngineState(store::Store& store, model::Registry& registry, alerts::AlertSink* alerts,
              const Clock& clock, Random& random, EngineOptions options)
      : store(store),
        registry(registry),
        alerts(alerts),
        clock(clock),
        random(random),
        options(std::move(options)) {
    stats.latency_buckets.assign(kLatencyBuckets, 0);
  }

  // The destination's state, made on first use (its breaker read from the store) and brought up
  // to date with `d` (changed limits apply at once).
  DestState& StateOf(const std::string& name, const model::Destination& d) REQUIRES(mu);
  // New work may be due anywhere: the scheduler looks at every destination again.
  void Wake();
  void RaiseAlert(alerts::Alert a);
  // Takes the shared state read from the store into `s` (DestinationControl::Adopt), and
  // slow-starts it when another node resumed it or closed its breaker.
  void AdoptControl(DestState& s, const store::DestinationControl& c, uint64_t read_gen)
      REQUIRES(mu);

  store::Store& store;
  model::Registry& registry;
  alerts::AlertSink* alerts;
  const Clock& clock;
  Random& random GUARDED_BY(random_mu);
  const EngineOptions options;

  // When the scheduler's loop last began a round (steady clock, nanoseconds since its epoch; 0:
  // not started). Real time, whatever the injected clock: it is what a service manager's watchdog
  // is fed from (DeliveryEngine::LastRound).
  std::atomic<int64_t> last_round_ns{0};

  mutable Mutex mu;
  std::condition_variable wake_cv;  // the scheduler waits on it
  std::condition_variable idle_cv;  // notified when stats.in_flight drops to 0 (Stop waits)
  bool wake GUARDED_BY(mu) = false;
  bool stopping GUARDED_BY(mu) = false;
  std::map<std::string, std::unique_ptr<DestState>> dests GUARDED_BY(mu);
  uint64_t work_gen GUARDED_BY(mu) = 0;  // bumped by Wake()
  EngineStats stats GUARDED_BY(mu);

  Mutex random_mu;  // Random is not thread-safe
};

}  // namespace hookrelay::delivery
