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
#include "store/event_store.h"

namespace hookrelay::store {

// One replay chain to create (Store::CreateReplays).
struct NewReplay {
  std::string event_id;
  std::string destination;
  int max_attempts = 1;
  TimePoint due{};
};

// The new state of a delivery after an attempt (written with the attempt, atomically).
struct DeliveryUpdate {
  DeliveryStatus status = DeliveryStatus::kDelivered;
  TimePoint next_attempt_at{};
  std::optional<TimePoint> deadline;
  std::optional<TimePoint> first_failure_at;
  Duration last_delay{0};
  std::optional<std::string> reason;
};

// One attempt with the delivery's new state, for Store::RecordAttempts.
struct AttemptRecord {
  Attempt attempt;
  DeliveryUpdate update;
};

// An ordered queue whose head holds deliveries back (Store::ListHeldQueues): the head is the
// oldest delivery of (destination, order_key) that is not final, and `waiting` more wait for it.
struct HeldQueue {
  std::string order_key;      // "" for a destination ordered as a whole
  Delivery head;              // with its lease overlaid (kDelivering while being sent)
  int64_t waiting = 0;        // open deliveries behind the head (>= 1)
  TimePoint waiting_since{};  // created_at of the oldest of them: how long the queue has held it
};

// The queues that wait longest first (waiting_since, then the head's id); `total` counts every
// held queue of the destination, `queues` holds at most the limit asked for.
struct HeldQueues {
  std::vector<HeldQueue> queues;
  int64_t total = 0;
};

// The delivery queue: claims of due deliveries, the results of their attempts, ordered queues'
// heads, replays' new chains and the counts of due deliveries. A role of Store (store.h); the
// embedded store implements it in sqlite/deliveries.cc (counts: sqlite/stats.cc).
class DeliveryQueue {
 public:
  virtual ~DeliveryQueue() = default;

  // Leases up to `limit` deliveries that are kScheduled with next_attempt_at <= now, or
  // kDelivering with an expired lease (a crashed sender), oldest due first: they become
  // kDelivering with lease_until = now + lease and lease_owner = owner. With a non-empty
  // `destination`, only that destination's deliveries are considered. Either way the cost grows
  // with `limit`, not with the backlog (of this destination or of others).
  // A store used by one process only (the embedded one: its data directory is locked) may keep
  // leases in memory and write nothing durable here; reads still show a leased delivery as
  // kDelivering with its lease. After a crash such leases are gone and what was in flight is
  // simply due again (sent again with the same webhook-id: at-least-once). A store shared by
  // several nodes persists them, so that a dead node's leases expire and are taken over.
  virtual Result<std::vector<Delivery>> ClaimDue(TimePoint now, int limit, Duration lease,
                                                 const std::string& owner,
                                                 const std::string& destination = "") = 0;
  // The earliest next_attempt_at among kScheduled deliveries that may be claimed (of
  // `destination` when it is not empty), to sleep until; nullopt when there are none. An ordered
  // delivery held behind its queue's head is not one of them: it is claimable only once it is
  // the head.
  virtual Result<std::optional<TimePoint>> NextDueAt(const std::string& destination = "") = 0;
  // For the stall metrics: how many kScheduled deliveries are due at `now` (next_attempt_at <=
  // now), and the earliest next_attempt_at among those that may be claimed (now minus it is the
  // age of the oldest due-but-unsent delivery; nullopt when none is due). Leases, expired or not,
  // are not counted. The count includes ordered deliveries held behind their queue's head (they
  // are waiting to be sent); the age does not (a head retrying on its schedule is not a stalled
  // engine): at most 4,096 held ones in a row are looked past (SQLite).
  virtual Result<int64_t> CountDue(TimePoint now) = 0;
  virtual Result<std::optional<TimePoint>> OldestDueAt(TimePoint now) = 0;
  // CountDue per destination (destinations with none due are absent), for the per-destination
  // metrics. The default answers kUnavailable (the gauges then stay 0).
  virtual Result<std::map<std::string, int64_t>> CountDueByDestination(TimePoint /*now*/) {
    return Status::Unavailable("this store does not count due deliveries per destination");
  }

  // Records an attempt and the delivery's new state in one transaction; clears the lease.
  // `attempt.n` is the attempt's number among all of the delivery's attempts (counted or not):
  // a counted attempt sets the delivery's attempts to n - uncounted_attempts, one not counted
  // sets its uncounted_attempts to n - attempts (so attempt n + 1 comes next either way).
  // kFailedPrecondition when the delivery is no longer leased by `owner`; kNotFound when there is
  // no such delivery. Nothing is written when it fails.
  virtual Status RecordAttempt(const Attempt& attempt, const DeliveryUpdate& update,
                               const std::string& owner) = 0;
  // Records many attempts as RecordAttempt does, all in one transaction (one commit for the
  // batch). Returns one Status per record, in order: kFailedPrecondition / kNotFound for a record
  // whose delivery is not leased by `owner` / does not exist (nothing of that record is written;
  // the others are). When the batch cannot be written (a failed commit, a full disk), every
  // record reports that error and nothing is written. Each record is durable when this returns OK
  // for it.
  virtual std::vector<Status> RecordAttempts(const std::vector<AttemptRecord>& records,
                                             const std::string& owner) = 0;
  // Gives back claims that will not be sent (the destination was paused while the claim ran):
  // each delivery still leased by `owner` is unleased, unchanged and claimable again; no attempt
  // is recorded. Others (not leased, or leased by another owner) are left alone. Returns how many
  // were released.
  virtual Result<int64_t> ReleaseClaims(const std::vector<int64_t>& delivery_ids,
                                        const std::string& owner) = 0;

  // The head of an ordered delivery queue: the oldest delivery of `destination` with this
  // order key that is not final (delivered or failed), which the others of the queue wait for;
  // nullopt when the queue is empty. For the event detail ("held behind …").
  virtual Result<std::optional<Delivery>> OrderHead(const std::string& destination,
                                                    const std::string& order_key) = 0;

  // The ordered queues of `destination` whose head holds at least one delivery back, longest
  // waiting first, at most `limit` (clamped to 1..kMaxListLimit) of them; for the destination's
  // detail ("held behind evt_… since 14:02"). Reads the open ordered deliveries of the
  // destination (the partial index deliveries_ordered), so it costs one pass over its backlog.
  virtual Result<HeldQueues> ListHeldQueues(const std::string& destination, int limit) = 0;

  // Starts a new delivery chain for an event to one destination (a replay): chain = previous
  // max + 1, attempts 0, due at `now`. kNotFound when the event does not exist. The new chain
  // keeps the order key of the chain before it, and as a new delivery it queues at the tail of
  // that key's queue.
  virtual Result<Delivery> CreateReplay(const std::string& event_id, const std::string& destination,
                                        int max_attempts, TimePoint now) = 0;

  // Many replays in one transaction (a bulk replay's batch): each starts a chain as CreateReplay
  // does, due at its own `due` (which may be in the future: the engine sends it then). Replays of
  // events that no longer exist are skipped. Returns how many chains were created.
  virtual Result<int64_t> CreateReplays(const std::vector<NewReplay>& replays) = 0;

  // Counts for metrics and readiness: current deliveries (latest chains, as EventFilter::status
  // means) in `status`. For kScheduled, kDelivering and kPaused it costs an index count or less,
  // not a walk of the table; the embedded store walks its deliveries for kDelivered and kFailed
  // (no index covers them, so that ingest and results write less).
  virtual Result<int64_t> CountDeliveries(DeliveryStatus status) = 0;
};

}  // namespace hookrelay::store
