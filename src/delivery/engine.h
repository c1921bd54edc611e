#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "alerts/alert.h"
#include "common/clock.h"
#include "common/random.h"
#include "delivery/sender.h"
#include "model/registry.h"
#include "pacing/adaptive_concurrency.h"
#include "pacing/token_bucket.h"
#include "policy/breaker.h"
#include "store/store.h"

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

// The live state of one destination, for the API and metrics.
struct DestinationState {
  policy::BreakerSnapshot breaker;
  int allowed_concurrency = 0;
  int max_concurrency = 0;  // the limit allowed_concurrency was computed under
  int in_flight = 0;        // requests out at the destination (results being recorded not counted)
  bool paused = false;      // by config/API or after 410 Gone
  std::string paused_reason;
  // Counted since this process started serving the destination (reset when it is deleted), for
  // the per-destination metrics.
  int64_t delivered = 0;
  int64_t failed = 0;  // given up
  int64_t attempts_success = 0;
  int64_t attempts_retryable = 0;
  int64_t attempts_final = 0;
  int64_t due_backlog = 0;  // gauge: scheduled deliveries due now, not yet sent (once a second)
};

// The delivery engine: claims due deliveries from the store (leased), sends them through the
// Sender within each destination's limits (adaptive concurrency, rate limit, circuit breaker),
// records every attempt, and decides what follows with the policy core.
//
// Fairness: work is claimed per destination, only as much as that destination may send now, so
// a slow or failing destination never holds the slots of a healthy one. Memory holds only what
// is in flight; the backlog stays in the store.
class DeliveryEngine {
 public:
  DeliveryEngine(store::Store& store, model::Registry& registry, Sender& sender,
                 alerts::AlertSink* alerts, const Clock& clock, Random& random,
                 EngineOptions options);
  ~DeliveryEngine();
  DeliveryEngine(const DeliveryEngine&) = delete;
  DeliveryEngine& operator=(const DeliveryEngine&) = delete;

  void Start();
  // Stops claiming and waits (up to `grace`) for attempts in flight to be recorded. Leases of
  // attempts still out then simply expire.
  void Stop(Duration grace = std::chrono::seconds(10));
  // New work may be due (an event was stored, a destination resumed): look now.
  void Wake();

  EngineStats Stats() const;
  std::map<std::string, DestinationState> Destinations() const;

  // Operator controls (the API calls these): pause keeps deliveries as `paused`; resume makes
  // them due now with slow start; reset closes the breaker.
  Status Pause(const std::string& destination, const std::string& reason);
  Status Resume(const std::string& destination);
  Status ResetBreaker(const std::string& destination);

 private:
  struct Dest;
  struct Completion;
  struct Decided;
  struct ClaimJob;

  void Loop();
  // Claims and sends what `name` may send now; returns the earliest time worth looking again.
  TimePoint ServeDestination(const model::Destination& d, TimePoint now);
  void ClaimerLoop();
  // Claims what `job` reserved slots for, frees the slots of what was not found, and sends.
  void RunClaim(const ClaimJob& job);
  void Dispatch(const std::shared_ptr<const model::Destination>& dest, store::Delivery delivery);
  // Decides a finished attempt, tells the destination's breaker and pacing, and queues it for
  // the recorders.
  void Complete(Completion c);
  void RecorderLoop();
  // Records the attempts of `batch` in one store write, then updates counters and alerts for
  // each (a delivery counts as delivered only once its record is committed). Breakers and
  // pacing learned the outcomes already, in Complete.
  void RecordBatch(std::vector<Completion>& batch);
  Decided Decide(const Completion& c);
  void Settle(const Completion& c);
  void CheckStall(TimePoint now);
  void RaiseAlert(alerts::Alert a);
  Dest& StateOf(const std::string& name, const model::Destination& d);  // REQUIRES mu_ held
  void PersistBreaker(const std::string& name, const policy::BreakerSnapshot& s);

  store::Store& store_;
  model::Registry& registry_;
  Sender& sender_;
  alerts::AlertSink* alerts_;
  const Clock& clock_;
  Random& random_;
  EngineOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool wake_ = false;                                   // GUARDED_BY(mu_)
  bool stopping_ = false;                               // GUARDED_BY(mu_)
  std::map<std::string, std::unique_ptr<Dest>> dests_;  // GUARDED_BY(mu_)
  uint64_t work_gen_ = 0;                               // GUARDED_BY(mu_); bumped by Wake()
  std::condition_variable claim_cv_;
  std::deque<ClaimJob> claim_jobs_;  // GUARDED_BY(mu_)
  bool claim_stopping_ = false;      // GUARDED_BY(mu_)
  std::vector<std::thread> claimers_;
  EngineStats stats_;  // GUARDED_BY(mu_)
  TimePoint last_stall_check_{};

  std::mutex rec_mu_;
  std::condition_variable rec_cv_;
  std::vector<Completion> completions_;  // GUARDED_BY(rec_mu_)
  bool rec_stopping_ = false;            // GUARDED_BY(rec_mu_)

  std::thread scheduler_;
  std::vector<std::thread> recorders_;
  std::mutex random_mu_;  // Random is not thread-safe
};

}  // namespace hookrelay::delivery
