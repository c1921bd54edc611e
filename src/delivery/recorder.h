#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "delivery/engine_state.h"

namespace hookrelay::delivery {

// Recording: what each finished attempt means, written to the store, then counted.
//
// Queue hands a completion (its outcome class and end time already known, see
// DeliveryEngine::Complete) to the recorder threads: each takes everything that finished
// meanwhile (up to kMaxRecordBatch), asks the policy core what follows each (Decide: the attempt
// row and the delivery's new state: delivered, scheduled for a retry at next_attempt_at, or
// failed with the reason) and writes them with one Store::RecordAttempts call (one transaction; a
// second thread prepares the next batch while one commits). Before that write, the batch's
// breaker inputs go to the shared breaker (ApplyBreakerInputs: Store::UpdateBreaker, one call per
// destination), whose steps say which transitions this node made. Only after the write are the
// counters updated (a delivery counts as delivered once its record is committed), those
// transitions reported and acted on (the destination's waiting deliveries shown as paused, an
// alert), 410 Gone pauses the destination (in the store, for every node), and the scheduler is
// woken (retries and freed work may be due).
//
// A result the store could not write (a failed commit, a full disk) is not counted, reported or
// acted on: it is kept and written again (after 100 ms, doubling up to 5 s) until it is recorded,
// and only then settled. A result whose delivery's lease was lost (kFailedPrecondition) is let go
// uncounted: the claim that took the delivery over records its own. Stop writes the kept ones
// once more and lets go of those that still fail (their deliveries are sent again once their
// leases expire: at-least-once).
class Recorder {
 public:
  explicit Recorder(EngineState& state) : state_(state) {}
  ~Recorder() { Stop(); }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void Start(int threads);
  // Records everything queued, then stops the threads. Completions queued later are not
  // recorded (their deliveries stay leased, and are sent again once the lease expires).
  void Stop();

  // What follows `c`, decided at the time it ended (c.decided.now). Runs on a recorder thread,
  // not the sender's: the policy's reason texts cost allocations the sender's thread, the
  // engine's busiest, does not need to pay.
  Decided Decide(const Completion& c);
  void Queue(Completion c);

 private:
  void Loop();
  // Records the attempts of `batch` in one store write, then settles each recorded one; keeps
  // up to `room` of those whose write failed for another try, unless `last_chance`.
  void RecordBatch(std::vector<Completion>& batch, bool last_chance, size_t room);
  // Applies the outcomes of `batch` not applied yet to the shared breaker (Store::UpdateBreaker,
  // one call per destination) and fills in each one's transition, snapshot after and epoch.
  void ApplyBreakerInputs(std::vector<Completion>& batch);
  // Counters, alerts and the breaker's transition for one recorded completion.
  void Settle(const Completion& c);
  // A result let go unrecorded: only its in-flight count ends.
  void Release();

  static constexpr std::chrono::milliseconds kMinRecordRetryDelay{100};
  static constexpr std::chrono::milliseconds kMaxRecordRetryDelay{5000};

  EngineState& state_;
  Mutex mu_;
  std::condition_variable cv_;
  std::vector<Completion> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  // Results whose write failed, to be written again at retry_at_.
  std::vector<Completion> unrecorded_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point retry_at_ GUARDED_BY(mu_){};
  std::chrono::milliseconds retry_delay_ GUARDED_BY(mu_) = kMinRecordRetryDelay;
  std::vector<std::thread> threads_;
};

}  // namespace hookrelay::delivery
