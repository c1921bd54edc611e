#include "retention/retention_job.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>

#include "retention/retention_policy.h"

namespace hookrelay::retention {

RetentionJob::RetentionJob(store::Store& store, const model::Registry& registry, const Clock& clock,
                           RetentionOptions options)
    : store_(store),
      registry_(registry),
      clock_(clock),
      options_(options),
      loop_("hr-retention", clock) {}

RetentionJob::~RetentionJob() { Stop(); }

void RetentionJob::Start() {
  loop_.Start([this] { return Pass(); });
}

void RetentionJob::Stop() { loop_.Stop(); }

Duration RetentionJob::Pass() {
  Result<int64_t> purged = RunOnce();
  if (!purged.ok()) {
    spdlog::warn("retention pass failed (will retry): {}", purged.status().ToString());
  } else if (*purged > 0) {
    spdlog::info("retention: {} {} deleted past the replay window", *purged,
                 *purged == 1 ? "event" : "events");
  } else {
    spdlog::debug("retention: nothing to delete");
  }
  return options_.interval;
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
    if (*n < batch) break;
    lock.unlock();
    // Gives queued writes (ingest) the store's writer; ends at once on Stop().
    if (!loop_.Pause(options_.pause)) break;
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
      if (*n < batch || loop_.stopping()) break;
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
