#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/background_loop.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/random.h"
#include "common/result.h"
#include "model/registry.h"
#include "replay/replay_filter.h"
#include "store/store.h"

namespace hookrelay::replay {

// The rates a bulk replay job may have, per second: about one event per 28 hours up to 100,000
// per second (beyond, the pacer's arithmetic would overflow). The API refuses others (400
// `rate`); the runner fails a stored job with one.
inline constexpr double kMinReplayRate = 0.00001;
inline constexpr double kMaxReplayRate = 100000;

struct ReplayRunnerOptions {
  std::string node_id = "node";  // lease owner of the jobs this runner claims
  // A claimed job's lease; renewed with every progress write (at least every progress_interval),
  // so only a dead node's job becomes claimable by another node.
  Duration lease = std::chrono::seconds(60);
  Duration poll_interval = std::chrono::seconds(1);  // how often to look for a queued job
  Duration progress_interval = std::chrono::milliseconds(250);
  int page_size = 100;  // events read per ListEvents page
  // Chains are created (in one store commit per batch) up to this long before they are due; the
  // engine sends each at its due time. Also how late a cancel can be: chains already created go.
  Duration lookahead = std::chrono::milliseconds(100);
  // Why `destination` is paused (by the API or the engine), nullopt when it is not; a
  // destination paused in the config is seen through the registry. May be empty. While a
  // destination is paused (or its breaker open) the job holds back only that destination's
  // chains (chains created then would only pile up as paused deliveries and all go at once on
  // resume) and goes on with the others; when only held-back chains are left it waits, with the
  // job's `waiting` saying so.
  std::function<std::optional<std::string>(const std::string& destination)> paused_reason;
  // Jobs this node runs at the same time, each on its own thread with its own pace, so a slow
  // job (1/h) does not hold back the others. A job past this waits in the queue.
  int max_concurrent_jobs = 16;
  // Chains a job holds back for blocked destinations before it stops walking and waits.
  size_t max_held_back = 10000;
};

// What a job waits for, for ReplayJob::waiting: {"reason": "breaker_open" |
// "destination_paused", "destination", "until": RFC 3339 | null, "message"}.
struct Waiting {
  std::string reason;
  std::string destination;
  std::optional<TimePoint> until;
  std::string detail;  // a paused destination's reason, if any
};
std::string WaitingToJson(const Waiting& w);

// The events a bulk replay sends `event_id` to: for each destination of its deliveries whose
// latest chain is in filter.status (and is filter.destination when set), in delivery order.
std::vector<std::string> ReplayTargets(const std::vector<store::Delivery>& deliveries,
                                       const ReplayFilter& filter);

// How many events a bulk replay with `filter` would replay now (ReplayTargets not empty): the
// job's total, counted once by whoever creates the job, before the first chain is created.
Result<int64_t> CountReplayable(store::Store& store, const ReplayFilter& filter,
                                int page_size = 500);

// Runs bulk replay jobs (store::ReplayJob) on its own thread: claims a queued job (or one whose
// node died), then walks the matching events page by page (the total was counted when the job
// was created and is never changed here) and, for each
// event and target destination, creates a replay chain due at the time the job's ReplayPacer
// gives (Store::CreateReplays, in batches at most `lookahead` ahead of the due times), so the
// engine sends them at the job's rate with jitter. Chains to a destination whose breaker is open
// or that is paused are held back (in order) while the walk goes on with the other destinations,
// and created once it is no longer blocked; an event counts as replayed when its first chain is
// created. When only held-back chains are left, the job waits, saying so in its `waiting` (and
// renewing its lease). Events it cannot replay (destination no longer
// configured, past its replay window) count as failed. Progress is written at least every
// progress_interval; a write refused because the job was cancelled stops the job at once. Delivery
// is at least once per chain: a node dying mid-page makes the next claimant redo that page.
//
// Thread-safe. All references must outlive the runner.
class ReplayRunner {
 public:
  // `wake` is called after chains are created (DeliveryEngine::Wake); may be empty.
  ReplayRunner(store::Store& store, const model::Registry& registry, const Clock& clock,
               Random& random, std::function<void()> wake, ReplayRunnerOptions options = {});
  ~ReplayRunner();
  ReplayRunner(const ReplayRunner&) = delete;
  ReplayRunner& operator=(const ReplayRunner&) = delete;

  void Start();  // REQUIRES: not started
  // Stops the thread: a running job keeps its lease (another node, or this one after a restart,
  // resumes it once the lease expires). Idempotent.
  void Stop();
  // Wakes the runner: to look for a job now (after POST /api/v1/replays), and every job's wait,
  // so a cancelled job (DELETE /api/v1/replays/{id}) stops at once and a job waiting for a
  // breaker or a pause looks again. (Waits are the clock's: a FakeClock moved past a wait's
  // deadline wakes it without a Notify.)
  void Notify();

  // Claims and runs one job to its end on the calling thread (tests). False when there was none.
  Result<bool> RunOnce();

 private:
  // One pass of the loop: joins ended workers, claims a job when there is room and starts it
  // on a worker thread; returns when to look again.
  Duration Pass();
  // Waits until `clock` reaches `t`, waking on Notify (to re-read the clock and see whether job
  // `id` was cancelled: kFailedPrecondition then) and on Stop (*stopping is set then).
  // *seen is the Notify generation the job last looked at (a Notify before the wait counts).
  // With `any_notify` a Notify also ends the wait (a destination may have been resumed).
  Status SleepUntil(TimePoint t, const std::string& id, uint64_t* seen, bool* stopping,
                    bool any_notify = false);
  uint64_t Generation();
  // kFailedPrecondition when job `id` is no longer running under this node (cancelled).
  Status CheckStillOurs(const std::string& id);
  bool Stopping();
  // Claims a job; nullopt when there is none.
  Result<std::optional<store::ReplayJob>> Claim();
  // Runs a claimed job and logs how it ended.
  Status RunClaimed(store::ReplayJob job);
  // Runs a claimed job; returns when it is final, cancelled or the runner stops.
  Status RunJob(store::ReplayJob job, Random& random);
  // Logs how job `id` ended (finished, cancelled, failed, paused by shutdown) after RunJob.
  void LogJobEnd(const std::string& id, const Status& run);
  // Writes progress (renewing the lease). kFailedPrecondition: cancelled, stop.
  Status Save(store::ReplayJob& job);
  // Why chains to `destination` cannot go now: its breaker is open (per the store, shared by
  // all nodes) or it is paused; nullopt when they can.
  std::optional<Waiting> Blocked(const std::string& destination);

  store::Store& store_;
  const model::Registry& registry_;
  const Clock& clock_;
  std::function<void()> wake_;
  const ReplayRunnerOptions options_;

  Random& random_ GUARDED_BY(mu_);  // seeds each job's own generator (jobs run on several threads)

  Mutex mu_;
  std::condition_variable cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t generation_ GUARDED_BY(mu_) = 0;  // bumped by Notify, wakes waits
  int active_ GUARDED_BY(mu_) = 0;           // jobs running on worker threads
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Worker> workers_;  // used by the loop's passes (and Stop after it ended) only
  BackgroundLoop loop_{"hr-replay", clock_};  // looks for jobs: every poll_interval, or on Notify
};

}  // namespace hookrelay::replay
