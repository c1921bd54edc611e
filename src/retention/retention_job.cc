#include "retention/retention_job.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>

#include "common/thread_name.h"
#include "retention/retention_policy.h"

namespace hookrelay::retention {

RetentionJob::RetentionJob(store::Store& store, const model::Registry& registry, const Clock& clock,
                           RetentionOptions options)
    : store_(store), registry_(registry), clock_(clock), options_(options) {}

RetentionJob::~RetentionJob() { Stop(); }

void RetentionJob::Start() { thread_ = std::thread(&RetentionJob::Loop, this); }

void RetentionJob::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool RetentionJob::SleepUnlessStopped(Duration d) {
  MutexLock lock(mu_);
  // Through the clock: with a FakeClock, the next pass runs when a test moves the time.
  return !clock_.WaitFor(lock, cv_, d, [this]() REQUIRES(mu_) { return stopping_; });
}

void RetentionJob::Loop() {
  NameThisThread("hr-retention");
  if (!SleepUnlessStopped(Duration::zero())) return;
  do {
    Result<int64_t> purged = RunOnce();
    if (!purged.ok()) {
      spdlog::warn("retention pass failed (will retry): {}", purged.status().ToString());
    } else if (*purged > 0) {
      spdlog::info("retention: {} {} deleted past the replay window", *purged,
                   *purged == 1 ? "event" : "events");
    } else {
      spdlog::debug("retention: nothing to delete");
    }
  } while (SleepUnlessStopped(options_.interval));
}

Result<int64_t> RetentionJob::RunOnce() {
  MutexLock pass(pass_mu_);
  const int batch = std::max(1, options_.batch);
  // One cutoff for the whole pass: events that age past it during the pass wait for the next.
  const std::shared_ptr<const model::Catalog> catalog = registry_.Get();
  const TimePoint cutoff = PurgeCutoff(*catalog, clock_.Now());
  {
    MutexLock lock(mu_);
    stats_.last_cutoff = cutoff;
  }
  int64_t total = 0;
  for (;;) {
    Result<int64_t> n = store_.PurgeEventsBefore(cutoff, batch);
    MutexLock lock(mu_);
    if (!n.ok()) {
      ++stats_.passes;
      ++stats_.failed_passes;
      return n.status();
    }
    total += *n;
    stats_.purged_events += *n;
    ++stats_.batches;
    if (*n < batch || stopping_) break;
    // Gives queued writes (ingest) the store's writer; wakes at once on Stop(). Real time, not
    // the clock's: it lets other threads run now, whatever time a test's clock says it is.
    if (cv_.wait_for(lock, options_.pause, [this]() REQUIRES(mu_) { return stopping_; })) break;
  }
  if (options_.rejections_max_age > Duration::zero()) {
    const TimePoint rejections_cutoff = clock_.Now() - options_.rejections_max_age;
    for (;;) {
      Result<int64_t> n = store_.PurgeRejectionsBefore(rejections_cutoff, batch);
      MutexLock lock(mu_);
      if (!n.ok()) {
        ++stats_.passes;
        ++stats_.failed_passes;
        return n.status();
      }
      stats_.purged_rejections += *n;
      if (*n < batch || stopping_) break;
    }
  }
  MutexLock lock(mu_);
  ++stats_.passes;
  return total;
}

RetentionStats RetentionJob::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

}  // namespace hookrelay::retention
