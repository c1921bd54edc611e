#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "common/background_loop.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/result.h"
#include "model/registry.h"
#include "store/store.h"

namespace hookrelay::retention {

struct RetentionOptions {
  // Time between passes (the first pass runs at Start).
  Duration interval = std::chrono::minutes(1);
  // Events deleted per store transaction. Small, so the store's single writer is never held for
  // long and ingest keeps committing between batches.
  int batch = 500;
  // Sleep between two batches of one pass, so queued ingest gets the writer.
  Duration pause = std::chrono::milliseconds(10);
  // Rejected requests (Store::AppendRejections) received longer ago than this are deleted by each
  // pass, `batch` at a time; zero keeps them (they stay bounded per source by number).
  Duration rejections_max_age = std::chrono::days(7);
};

// Counters for metrics. Monotonic except last_cutoff.
struct RetentionStats {
  int64_t purged_events = 0;      // events deleted (with their deliveries and attempts)
  int64_t purged_rejections = 0;  // rejected requests deleted past rejections_max_age
  int64_t batches = 0;            // PurgeEventsBefore calls that succeeded
  int64_t passes = 0;             // passes finished (successfully or not)
  int64_t failed_passes = 0;      // passes cut short by a store error
  std::optional<TimePoint> last_cutoff;
};

// Deletes events past every destination's replay window (see PurgeCutoff), on its own thread:
// a pass every `interval` calls store.PurgeEventsBefore(cutoff, batch) until a batch deletes fewer
// than `batch` events, sleeping `pause` between batches. Past the window an event can no longer
// be replayed; an event with a delivery not final yet (scheduled, delivering or paused) is kept
// by both stores until that delivery ends, and purged by a later pass. Each pass then deletes the
// rejected requests older than rejections_max_age (Store::PurgeRejectionsBefore).
//
// Thread-safe. `store`, `registry` and `clock` must outlive the job.
class RetentionJob {
 public:
  RetentionJob(store::Store& store, const model::Registry& registry, const Clock& clock,
               RetentionOptions options = {});
  // Stops the thread if it runs.
  ~RetentionJob();
  RetentionJob(const RetentionJob&) = delete;
  RetentionJob& operator=(const RetentionJob&) = delete;

  // Starts the thread; the first pass runs at once. REQUIRES: not started.
  void Start();
  // Stops the thread and waits for it: at most one PurgeEventsBefore batch still runs to its end,
  // no sleep is waited out. Idempotent; the job cannot be started again.
  void Stop();

  // Runs one pass on the calling thread (tests, a CLI command) and returns how many events it
  // deleted, or the first store error. Passes never overlap: this waits for a running one.
  Result<int64_t> RunOnce();

  RetentionStats stats() const;

 private:
  // One pass of the loop, logged.
  Duration Pass();

  store::Store& store_;
  const model::Registry& registry_;
  const Clock& clock_;
  const RetentionOptions options_;

  Mutex pass_mu_;  // held for a whole pass, so passes never overlap

  mutable Mutex mu_;
  RetentionStats stats_ GUARDED_BY(mu_);
  BackgroundLoop loop_;  // last: stopped first, while what its passes use still exists
};

}  // namespace hookrelay::retention
