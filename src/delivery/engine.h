#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "alerts/alert.h"
#include "common/clock.h"
#include "common/random.h"
#include "common/result.h"
#include "delivery/destination_control.h"
#include "delivery/latency_window.h"
#include "delivery/request_sender.h"
#include "model/registry.h"
#include "policy/breaker.h"
#include "store/store.h"
#include "transform/runner.h"

namespace hookrelay::delivery {

struct EngineOptions {
  std::string node_id;  // lease owner; stable across restarts of the same data directory
  // A delivery's lease is its attempt timeout plus this margin; a crashed node's leases expire
  // after it and the work is taken over (at-least-once).
  Duration lease_margin = std::chrono::seconds(30);
  // The scheduler never sleeps longer than this (picks up expired leases, catalog changes).
  Duration poll_interval = std::chrono::seconds(1);
  // The oldest due-but-unsent delivery older than this raises a kStalled alert.
  Duration stall_threshold = std::chrono::minutes(5);
  // Threads recording attempt results. Each takes every result that finished meanwhile and
  // records them in one store write; a second thread prepares the next batch while one commits.
  int recorder_threads = 2;
  // Threads claiming (and reading the events of) due deliveries; one claim per destination at a
  // time, so this is how many destinations claim at once.
  int claimer_threads = 4;
  // Called after each claim, on a claimer thread, with the destination, the time it claimed at
  // (the clock's) and how many deliveries it got, before they are sent. For tests, which wait on
  // it to know the engine has looked; it must not block.
  std::function<void(const std::string& destination, TimePoint now, int got)> on_claim;
  // Where transforms run (docs/transforms.md); not owned, outlives the engine. Null: a delivery
  // whose destination or route has a transform fails for good, saying transforms are off.
  transform::Runner* transforms = nullptr;
};

// What the engine counts; monotonic except the gauges.
struct EngineStats {
  int64_t attempts = 0;
  int64_t attempts_success = 0;
  int64_t attempts_retryable = 0;
  int64_t attempts_final = 0;
  int64_t delivered = 0;
  int64_t failed = 0;
  int64_t retries_scheduled = 0;
  int64_t in_flight = 0;                 // gauge: claimed, not yet recorded
  int64_t breakers_open = 0;             // gauge
  Duration oldest_due_age{0};            // gauge: age of the oldest due-but-unsent delivery
  int64_t due_backlog = 0;               // gauge: scheduled deliveries due now but not yet sent
  std::vector<int64_t> latency_buckets;  // attempt latency histogram, see kLatencyBoundsMs
  int64_t latency_sum_ms = 0;
  int64_t alerts_raised = 0;  // alerts raised, whether or not an alert channel is configured
};
inline constexpr int64_t kLatencyBoundsMs[] = {5,    10,   25,   50,    100,   250,  500,
                                               1000, 2500, 5000, 10000, 30000, 60000};
// The histogram's buckets: one per bound, and the last for longer attempts (+Inf).
inline constexpr size_t kLatencyBuckets = std::size(kLatencyBoundsMs) + 1;
// The bucket an attempt of `duration_ms` counts in: the first bound it does not exceed.
inline size_t LatencyBucket(int64_t duration_ms) {
  size_t bucket = 0;
  while (bucket < std::size(kLatencyBoundsMs) && duration_ms > kLatencyBoundsMs[bucket]) ++bucket;
  return bucket;
}

// The live state of one destination, for the API and metrics.
struct DestinationState {
  policy::BreakerSnapshot breaker;
  int allowed_concurrency = 0;
  int max_concurrency = 0;  // the limit allowed_concurrency was computed under
  int in_flight = 0;        // requests out at the destination (results being recorded not counted)
  // The one answer to "is it paused" (DestinationControl::View): by the catalog, the operator
  // (API, CLI) or after 410 Gone; the stored reason, else "paused in the configuration".
  bool paused = false;
  PausedBy paused_by = PausedBy::kNone;
  std::string paused_reason;
  // Counted since this process started serving the destination (reset when it is deleted), for
  // the per-destination metrics.
  int64_t delivered = 0;
  int64_t failed = 0;  // given up
  int64_t attempts_success = 0;
  int64_t attempts_retryable = 0;
  int64_t attempts_final = 0;
  int64_t due_backlog = 0;  // gauge: scheduled deliveries due now, not yet sent (once a second)
  // Attempt latency, counted like the global histogram (EngineStats::latency_buckets) since the
  // destination was first served: its buckets (not cumulative) and the sum of the durations.
  std::array<int64_t, kLatencyBuckets> latency_buckets{};
  int64_t latency_sum_ms = 0;
  // p50 and p99 of its last LatencyWindow::kCapacity attempts.
  LatencySummary latency;
};

struct EngineState;
struct Completion;
class Scheduler;
class Claimer;
class Recorder;

// The delivery engine: claims due deliveries from the store (leased), sends them through a
// RequestSender within each destination's limits (adaptive concurrency, rate limit, circuit
// breaker), records every attempt, and decides what follows with the policy core.
//
// Fairness: work is claimed per destination, only as much as that destination may send now, so
// a slow or failing destination never holds the slots of a healthy one. Memory holds only what
// is in flight; the backlog stays in the store.
//
// Its parts (see docs/delivery.md, "Inside the engine"): the Scheduler (scheduler.h) decides
// which destination may send how much now; the Claimer (claimer.h) leases that many due
// deliveries and sends them; the Recorder (recorder.h) writes the results, a drain at a time, and
// counts them. They share one EngineState (engine_state.h). Every decision reads time from the
// injected clock and the scheduler sleeps through it (Clock::WaitUntil), so a FakeClock drives the
// engine; only Stop's grace is real time.
class DeliveryEngine {
 public:
  DeliveryEngine(store::Store& store, model::Registry& registry, RequestSender& sender,
                 alerts::AlertSink* alerts, const Clock& clock, Random& random,
                 EngineOptions options);
  ~DeliveryEngine();
  DeliveryEngine(const DeliveryEngine&) = delete;
  DeliveryEngine& operator=(const DeliveryEngine&) = delete;

  void Start();
  // Stops claiming and waits (up to `grace`, real time: it bounds how long a shutdown takes,
  // whatever the clock) for attempts in flight to be recorded. Leases of attempts still out then
  // simply expire; their results, if they come later, are not recorded (the deliveries are sent
  // again once the lease expires). The sender must not call back into the engine once it is
  // destroyed: destroy (or stop) the sender first.
  void Stop(Duration grace = std::chrono::seconds(10));
  // New work may be due (an event was stored, a destination resumed): look now.
  void Wake();

  EngineStats Stats() const;
  // When the scheduler last began a round (real steady time); nullopt before Start. It begins one
  // at least every poll_interval while the engine works, so an old one means a stalled engine
  // (a store that does not answer, a deadlock): what serve's watchdog checks.
  std::optional<std::chrono::steady_clock::time_point> LastRound() const;
  std::map<std::string, DestinationState> Destinations() const;

  // Operator controls (the API calls these): pause keeps deliveries as `paused`; resume makes
  // them due now with slow start; reset closes the breaker.
  Status Pause(const std::string& destination, const std::string& reason);
  Status Resume(const std::string& destination);
  Status ResetBreaker(const std::string& destination);

 private:
  // An attempt ended (on the sender's thread): decide, tell the scheduler, queue the record.
  void Complete(Completion c);

  std::unique_ptr<EngineState> state_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<Claimer> claimer_;
  std::unique_ptr<Scheduler> scheduler_;
  bool started_ = false;
};

}  // namespace hookrelay::delivery
