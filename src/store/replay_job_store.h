#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace hookrelay::store {

// A bulk replay job (POST /api/v1/replays): any node may claim it, so all its state is here.
enum class ReplayJobState { kQueued, kRunning, kDone, kCancelled, kFailed };
std::string_view ReplayJobStateName(ReplayJobState s);  // "queued", "running", …
std::optional<ReplayJobState> ParseReplayJobState(std::string_view name);
inline bool IsFinal(ReplayJobState s) {
  return s == ReplayJobState::kDone || s == ReplayJobState::kCancelled ||
         s == ReplayJobState::kFailed;
}

struct ReplayJob {
  std::string id;  // ULID, chosen by the caller
  TimePoint created_at{};
  TimePoint updated_at{};  // set by the store on every write
  std::string filter;      // JSON text: {"status", "source", "destination", "since", "until"}
  double rate = 0;         // chains created per second
  ReplayJobState state = ReplayJobState::kQueued;
  // Events to replay: counted once, before the first chain is created (by the API when it
  // creates the job), and never changed afterwards.
  int64_t total = 0;
  int64_t done = 0;    // events whose replay chains were created
  int64_t failed = 0;  // events that could not be replayed (past the replay window, …)
  std::string cursor;  // where the runner resumes (a ListEvents cursor); empty: from the start
  std::optional<std::string> error;  // why the job failed
  // JSON text of why the job cannot make progress now ({"reason", "destination", "until",
  // "message"}: an open breaker, a paused destination); nullopt while it can. Written by the
  // runner with its progress.
  std::optional<std::string> waiting;
  std::optional<TimePoint> lease_until;
  std::string lease_owner;
  bool operator==(const ReplayJob&) const = default;
};

// Newest first. `next_cursor` is opaque; empty when there is no next page.
struct ReplayJobPage {
  std::vector<ReplayJob> items;
  std::string next_cursor;
};

// Bulk replay jobs, leased by one node at a time. A role of Store (store.h); the embedded store
// implements it in sqlite/replay_jobs.cc.
class ReplayJobStore {
 public:
  virtual ~ReplayJobStore() = default;

  // Bulk replay jobs. CreateReplayJob stores `job` as given (kInvalidArgument for an empty id,
  // kFailedPrecondition when the id exists).
  virtual Status CreateReplayJob(const ReplayJob& job) = 0;
  virtual Result<std::optional<ReplayJob>> GetReplayJob(const std::string& id) = 0;
  // Up to `limit` (clamped to [1, 1000]) jobs, newest first, starting after `cursor` (a
  // next_cursor from an earlier page; empty for the first). Pages stay stable while jobs are
  // added (job ids are time-ordered ULIDs). kInvalidArgument for a cursor that cannot be one.
  virtual Result<ReplayJobPage> ListReplayJobs(const std::string& cursor, int limit) = 0;
  // Leases the oldest job that is kQueued, or kRunning with a lease expired at `now` (its node
  // died): it becomes kRunning with lease_until = now + lease and lease_owner = owner. nullopt
  // when there is none.
  virtual Result<std::optional<ReplayJob>> ClaimReplayJob(TimePoint now, Duration lease,
                                                          const std::string& owner) = 0;
  // Writes a claimed job's progress (state, total, done, failed, cursor, error, waiting,
  // lease_until).
  // kFailedPrecondition when the job is no longer leased by `owner` or is no longer kRunning
  // (cancelled: the runner stops); kNotFound when there is no such job. Nothing is written then.
  virtual Status UpdateReplayJob(const ReplayJob& job, const std::string& owner) = 0;
  // A kQueued or kRunning job becomes kCancelled (lease cleared); a final job is left as it is.
  // Returns the job as it is afterwards; nullopt when there is no such job.
  virtual Result<std::optional<ReplayJob>> CancelReplayJob(const std::string& id,
                                                           TimePoint now) = 0;
};

}  // namespace hookrelay::store
