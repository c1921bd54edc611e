// SqliteStore: the delivery queue: claims, recorded attempts, ordered heads, held queues and
// replays' chains.

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <future>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "common/crypto.h"
#include "common/id.h"
#include "common/list_limits.h"
#include "common/thread_name.h"
#include "store/event_id.h"
#include "store/row_codec.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/statements.h"
#include "store/sqlite/write_ops.h"

namespace hookrelay::store {

using sqlite::Connection;
using sqlite::Statement;

namespace {

// Scheduled deliveries (of destination ?2 in the second form), oldest due first, from the due
// indexes; the ones leased in memory are skipped by the caller, so the walk is as long as the
// limit plus what is in flight.
// Destinations that have deliveries waiting for a retry or paused: a skip-scan of
// deliveries_waiting, one index probe per destination.
constexpr char kWaitingDestinationsSql[] =
    "WITH RECURSIVE d(name) AS ("
    " SELECT MIN(destination) FROM deliveries WHERE status IN ('scheduled', 'paused')"
    " UNION ALL SELECT (SELECT MIN(destination) FROM deliveries WHERE destination > d.name"
    "  AND status IN ('scheduled', 'paused')) FROM d WHERE d.name IS NOT NULL)"
    " SELECT name FROM d WHERE name IS NOT NULL";
// Served by the covering index deliveries_waiting (the claim's walk reads no table row)...
constexpr char kDestinationScheduledSql[] =
    "SELECT id, next_attempt_at FROM deliveries WHERE destination = ?2 AND status = 'scheduled'"
    " AND status IN ('scheduled', 'paused') AND next_attempt_at <= ?1"
    " ORDER BY next_attempt_at, id";
// ...and with each row's order key (a table row each), for a walk that skips held deliveries.
constexpr char kDestinationScheduledKeysSql[] =
    "SELECT id, next_attempt_at, order_key FROM deliveries WHERE destination = ?2"
    " AND status = 'scheduled' AND status IN ('scheduled', 'paused') AND next_attempt_at <= ?1"
    " ORDER BY next_attempt_at, id";
// New deliveries from a frontier on, in rowid (arrival) order: a walk of the table itself.
constexpr char kPendingSql[] =
    "SELECT id, next_attempt_at, destination, order_key FROM deliveries WHERE id >= ?1"
    " AND status = 'pending' ORDER BY id";
constexpr char kDestinationPendingSql[] =
    "SELECT id, next_attempt_at, destination, order_key FROM deliveries WHERE id >= ?1"
    " AND destination = ?2 AND status = 'pending' ORDER BY id";
// The head of an ordered queue: the lowest id among its deliveries that are not final (the
// partial index deliveries_ordered; its WHERE terms are repeated so the planner may use it).
constexpr char kOrderHeadSql[] =
    "SELECT MIN(id) FROM deliveries WHERE destination = ?1 AND order_key = ?2"
    " AND order_key IS NOT NULL AND status IN ('pending', 'scheduled', 'paused')";
// How many blocked ordered deliveries one walk of new deliveries, or of those due for a retry,
// skips at most: beyond that, keys further back wait for a later claim (a whole-destination queue
// skips all but its head, so without a bound a long backlog would be walked at every claim).
constexpr int kMaxOrderedSkips = 4096;

}  // namespace

Result<std::vector<std::pair<TimePoint, int64_t>>> SqliteStore::ScheduledDue(
    Connection& db, const std::string& destination, TimePoint by, size_t limit,
    bool heads_only) const {
  std::vector<std::string> destinations;
  if (!destination.empty()) {
    destinations.push_back(destination);
  } else {
    Result<Statement> q = db.Prepare(kWaitingDestinationsSql);
    if (!q.ok()) return q.status();
    for (;;) {
      Result<bool> row = q->Step("destinations with waiting deliveries");
      if (!row.ok()) return row.status();
      if (!*row) break;
      destinations.push_back(q->Text(0));
    }
  }
  std::vector<std::pair<TimePoint, int64_t>> out;
  Result<Statement> q =
      db.Prepare(heads_only ? kDestinationScheduledKeysSql : kDestinationScheduledSql);
  if (!q.ok()) return q.status();
  for (const std::string& d : destinations) {
    q->Reset();
    q->BindInt(1, ToUnixMillis(by)).BindText(2, d);
    std::map<std::string, int64_t> heads;  // heads_only: each ordered queue's head, looked up once
    int ordered_skips = 0;
    for (size_t taken = 0; taken < limit;) {
      Result<bool> row = q->Step("find due deliveries");
      if (!row.ok()) return row.status();
      if (!*row) break;
      const int64_t id = q->Int(0);
      if (LeaseOf(id)) continue;
      if (std::optional<std::string> key = heads_only ? q->OptText(2) : std::nullopt) {
        // A resumed ordered delivery is not due until it is its queue's head.
        auto it = heads.find(*key);
        if (it == heads.end()) {
          Result<int64_t> head = OrderHeadId(db, d, *key);
          if (!head.ok()) return head.status();
          it = heads.emplace(std::move(*key), *head).first;
        }
        if (it->second != id) {
          if (++ordered_skips > kMaxOrderedSkips) break;
          continue;
        }
      }
      out.emplace_back(q->Time(1), id);
      ++taken;
    }
  }
  std::sort(out.begin(), out.end());
  if (out.size() > limit) out.resize(limit);
  return out;
}

Result<std::vector<std::pair<TimePoint, int64_t>>> SqliteStore::PendingDue(
    Connection& db, const std::string& destination, int64_t frontier, TimePoint by, size_t limit,
    std::optional<int64_t>* first) const {
  Result<Statement> q = db.Prepare(destination.empty() ? kPendingSql : kDestinationPendingSql);
  if (!q.ok()) return q.status();
  q->BindInt(1, frontier);
  if (!destination.empty()) q->BindText(2, destination);
  std::vector<std::pair<TimePoint, int64_t>> out;
  // Ordered queues (destination, key) seen in this walk: their head was met (claimable or in
  // flight), so every later delivery of theirs waits.
  std::set<std::pair<std::string, std::string>> queues_seen;
  int ordered_skips = 0;
  while (out.size() < limit) {
    Result<bool> row = q->Step("find new deliveries");
    if (!row.ok()) return row.status();
    if (!*row) break;
    const int64_t id = q->Int(0);
    if (first && !*first) *first = id;
    if (std::optional<std::string> key = q->OptText(3)) {
      auto [it, added] = queues_seen.emplace(q->Text(2), std::move(*key));
      if (!added) {
        if (++ordered_skips > kMaxOrderedSkips) break;
        continue;
      }
      Result<bool> head = IsOrderHead(db, id, it->first, it->second);
      if (!head.ok()) return head.status();
      if (!*head) continue;
    }
    if (LeaseOf(id) || q->Time(1) > by) continue;
    out.emplace_back(q->Time(1), id);
  }
  return out;
}

Result<std::vector<Delivery>> SqliteStore::ClaimDue(TimePoint now, int limit, Duration lease,
                                                    const std::string& owner,
                                                    const std::string& destination) {
  if (limit <= 0) return std::vector<Delivery>{};
  // The delivery engine asks every destination with spare capacity, most of the time in vain. A
  // look first (counters, then a reader) keeps those calls off the writer, where they would wait
  // for a commit (a reader sees every commit made before this call; what commits later waits for
  // the next). Something is claimable when a lease has expired, a new delivery is not leased, or
  // a delivery waiting for a retry is due and not leased.
  {
    bool any = UnleasedPending(destination) > 0;
    if (!any) {
      MutexLock lock(leases_mu_);
      for (const auto& [id, l] : leases_) {
        if (l.until <= now && (destination.empty() || l.destination == destination)) {
          any = true;
          break;
        }
      }
    }
    if (!any) {
      Result<Reader> reader = AcquireReader();
      if (!reader.ok()) return reader.status();
      Result<std::vector<std::pair<TimePoint, int64_t>>> due =
          ScheduledDue(**reader, destination, now, 1);
      if (!due.ok()) return due.status();
      any = !due->empty();
    }
    if (!any) return std::vector<Delivery>{};
  }
  return Write<std::vector<Delivery>>(
      [this, now, limit, lease, owner,
       destination](Connection& db) -> Result<std::vector<Delivery>> {
        return ClaimOnWriter(db, now, limit, lease, owner, destination);
      },
      /*claim=*/true);
}

Result<std::vector<Delivery>> SqliteStore::ClaimOnWriter(Connection& db, TimePoint now, int limit,
                                                         Duration lease, const std::string& owner,
                                                         const std::string& destination) {
  // Candidates by (due, id): leases expired at `now` (a crashed or stuck sender; due since they
  // expired), deliveries waiting for a retry that are due and not held (the due index), and new
  // deliveries not held (a walk from the frontier). The writer is the only thread that changes
  // leases, so what it reads here holds until it changes it.
  std::vector<std::pair<TimePoint, int64_t>> due;
  {
    MutexLock lock(leases_mu_);
    for (const auto& [id, l] : leases_) {
      if (l.until <= now && (destination.empty() || l.destination == destination)) {
        due.emplace_back(l.until, id);
      }
    }
  }
  std::sort(due.begin(), due.end());
  if (due.size() > static_cast<size_t>(limit)) due.resize(static_cast<size_t>(limit));
  {
    Result<std::vector<std::pair<TimePoint, int64_t>>> waiting =
        ScheduledDue(db, destination, now, static_cast<size_t>(limit));
    if (!waiting.ok()) return waiting.status();
    due.insert(due.end(), waiting->begin(), waiting->end());
  }
  if (std::optional<int64_t> frontier = PendingFrontier(destination)) {
    std::optional<int64_t> first;  // the lowest pending rowid seen, held or not
    Result<std::vector<std::pair<TimePoint, int64_t>>> fresh =
        PendingDue(db, destination, *frontier, now, static_cast<size_t>(limit), &first);
    if (!fresh.ok()) return fresh.status();
    due.insert(due.end(), fresh->begin(), fresh->end());
    if (!destination.empty() && op_) {
      // The frontier moves up to the first pending row (or past the end when there is none).
      // A claim runs outside any transaction (RunClaimsFirst), so it saw only committed rows,
      // and the move is applied as soon as it returns.
      if (first) {
        op_->frontier_moves[destination] = *first;
      } else {
        Result<Statement> m = db.Prepare("SELECT COALESCE(MAX(id), 0) + 1 FROM deliveries");
        if (!m.ok()) return m.status();
        Result<bool> row = m->Step("last delivery");
        if (!row.ok()) return row.status();
        if (*row) op_->frontier_moves[destination] = m->Int(0);
      }
    }
  }
  std::sort(due.begin(), due.end());
  if (due.size() > static_cast<size_t>(limit)) due.resize(static_cast<size_t>(limit));

  std::vector<Delivery> claimed;
  claimed.reserve(due.size());
  Result<Statement> q = db.Prepare(std::string("SELECT ") + kDeliveryColumns +
                                   ", current FROM deliveries WHERE id = ?1");
  if (!q.ok()) return q.status();
  for (const auto& [when, id] : due) {
    q->Reset();
    q->BindInt(1, id);
    Result<bool> row = q->Step("load due delivery");
    if (!row.ok()) return row.status();
    if (!*row) return Status::Internal("delivery " + std::to_string(id) + " vanished");
    Result<Delivery> d = ReadDelivery(*q, event_id_bits_);
    if (!d.ok()) return d.status();
    if (d->order_key) {
      // A retry due or a resumed delivery: claimable only as its queue's head, and one head per
      // queue per claim (a queue's head is claimed once; the rest of it waits for its result).
      Result<bool> head = IsOrderHead(db, id, d->destination, *d->order_key);
      if (!head.ok()) return head.status();
      if (!*head) continue;
    }
    const bool current = q->Int(16) != 0;
    const bool pending = q->Text(4) == "pending";
    d->status = DeliveryStatus::kDelivering;
    d->lease_until = now + lease;
    d->lease_owner = owner;
    SetLease(id, Lease{owner, now + lease, d->destination, d->next_attempt_at, current, pending});
    claimed.push_back(std::move(*d));
  }
  return claimed;
}

Status SqliteStore::WriteAttempt(Connection& db, const Attempt& attempt,
                                 const DeliveryUpdate& update, const std::string& owner,
                                 TimePoint now, bool* refused) {
  *refused = false;
  const std::string what = "delivery " + std::to_string(attempt.delivery_id);
  std::optional<Lease> lease = LeaseOf(attempt.delivery_id);
  if (!lease || lease->owner != owner) {
    Result<Statement> q = db.Prepare("SELECT 1 FROM deliveries WHERE id = ?1");
    if (!q.ok()) return q.status();
    q->BindInt(1, attempt.delivery_id);
    Result<bool> row = q->Step("look for delivery");
    if (!row.ok()) return row.status();
    *refused = true;
    if (!*row) return Status::NotFound(what + " not found");
    return Status::FailedPrecondition(what + " is not leased by " + owner);
  }
  // The lease names the destination: no RETURNING, which would cost the UPDATE an ephemeral
  // table per row (about a tenth of the writer's time when recording, measured).
  const std::string& destination = lease->destination;
  {
    Result<Statement> up = db.Prepare(
        // A chain a replay replaced while this attempt was out is not retried (see InsertReplay).
        "UPDATE deliveries SET"
        " status = CASE WHEN current = 0 AND ?2 IN ('scheduled', 'paused') THEN 'failed'"
        "  ELSE ?2 END,"
        " reason = CASE WHEN current = 0 AND ?2 IN ('scheduled', 'paused')"
        "  THEN 'replaced by a replay before it was delivered' ELSE ?8 END,"
        // Both from the old row: attempt n is counted, or not (Store::RecordAttempt).
        " attempts = CASE WHEN ?10 THEN ?3 - uncounted_attempts ELSE attempts END,"
        " uncounted_attempts = CASE WHEN ?10 THEN uncounted_attempts ELSE ?3 - attempts END,"
        " next_attempt_at = ?4, deadline = ?5,"
        " first_failure_at = ?6, last_delay_ms = ?7, updated_at = ?9"
        " WHERE id = ?1");
    if (!up.ok()) return up.status();
    up->BindInt(1, attempt.delivery_id)
        .BindText(2, DeliveryStatusName(update.status))
        .BindInt(3, attempt.n)
        .BindTime(4, update.next_attempt_at)
        .BindOptTime(5, update.deadline)
        .BindOptTime(6, update.first_failure_at)
        .BindInt(7, update.last_delay.count())
        .BindOptText(8, update.reason)
        .BindTime(9, now)
        .BindInt(10, attempt.counted ? 1 : 0);
    HR_RETURN_IF_ERROR(up->Exec("update delivery"));
    if (db.Changes() == 0) {
      *refused = true;
      return Status::NotFound(what + " not found");
    }
  }
  SetLease(attempt.delivery_id, std::nullopt);
  if (op_ && lease->pending) --op_->pending_delta[lease->destination];  // no longer 'pending'
  if (op_) {
    // The dashboard's counters: one attempt in the minute it is recorded, and the delivery's
    // outcome when this attempt made it final.
    StatsCounts& c = op_->stats[{UnixMinute(now), destination}];
    ++c.attempts;
    if (update.status == DeliveryStatus::kDelivered) {
      ++c.delivered;
    } else {
      ++c.attempt_failures;
      if (update.status == DeliveryStatus::kFailed) ++c.failed;
    }
  }
  Result<Statement> ins = db.Prepare(
      "INSERT INTO attempts(delivery_id, n, started_at, duration_ms, status_code, error,"
      " retry_after, snippet, probe, counted, sent_size, sent_sha256, headers_changed)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  if (!ins.ok()) return ins.status();
  std::optional<int64_t> code;
  if (attempt.status_code) code = *attempt.status_code;
  ins->BindInt(1, attempt.delivery_id)
      .BindInt(2, attempt.n)
      .BindTime(3, attempt.started_at)
      .BindInt(4, attempt.duration_ms)
      .BindOptInt(5, code)
      .BindOptText(6, attempt.error)
      .BindOptText(7, attempt.retry_after)
      .BindBlob(8, attempt.response_snippet)
      .BindInt(9, attempt.probe ? 1 : 0)
      .BindInt(10, attempt.counted ? 1 : 0);
  if (const auto& t = attempt.transformed) {
    ins->BindInt(11, t->body_size).BindText(12, t->body_sha256).BindText(13, t->headers_changed);
  } else {
    ins->BindNull(11).BindNull(12).BindNull(13);
  }
  return ins->Exec("insert attempt");
}

Status SqliteStore::RecordAttempt(const Attempt& attempt, const DeliveryUpdate& update,
                                  const std::string& owner) {
  const TimePoint now = clock_.Now();
  Result<Unit> r =
      Write<Unit>([this, &attempt, &update, &owner, now](Connection& db) -> Result<Unit> {
        bool refused;
        HR_RETURN_IF_ERROR(WriteAttempt(db, attempt, update, owner, now, &refused));
        return Unit{};
      });
  return r.ok() ? Status::Ok() : r.status();
}

Result<int64_t> SqliteStore::ReleaseClaims(const std::vector<int64_t>& delivery_ids,
                                           const std::string& owner) {
  if (delivery_ids.empty()) return int64_t{0};
  // Leases change on the writer only. Normally this changes no row, but a chain that a replay
  // replaced while it was claimed is still 'scheduled' (InsertReplay leaves a leased chain to
  // its attempt): given back, it would be claimed and sent next to the replay. It is failed as
  // InsertReplay fails a chain waiting for a retry. This is rare (a destination paused between a
  // claim and its send), so every release is a durable write rather than a claim.
  return Write<int64_t>([this, &delivery_ids, &owner](Connection& db) -> Result<int64_t> {
    std::vector<std::pair<int64_t, Lease>> mine;
    for (int64_t id : delivery_ids) {
      std::optional<Lease> lease = LeaseOf(id);
      if (lease && lease->owner == owner) mine.emplace_back(id, std::move(*lease));
    }
    const TimePoint now = clock_.Now();
    for (const auto& [id, lease] : mine) {
      if (lease.current) continue;
      Result<Statement> up = db.Prepare(
          "UPDATE deliveries SET status = 'failed',"
          " reason = 'replaced by a replay before it was delivered', updated_at = ?2"
          " WHERE id = ?1 AND current = 0 AND status IN ('pending', 'scheduled', 'paused')");
      if (!up.ok()) return up.status();
      up->BindInt(1, id).BindTime(2, now);
      HR_RETURN_IF_ERROR(up->Exec("fail replaced delivery " + std::to_string(id)));
      if (op_ && lease.pending && db.Changes() > 0) --op_->pending_delta[lease.destination];
    }
    // The leases go only once every row change above has succeeded (a failed write rolls back).
    for (const auto& [id, lease] : mine) SetLease(id, std::nullopt);
    return static_cast<int64_t>(mine.size());
  });
}

std::vector<Status> SqliteStore::RecordAttempts(const std::vector<AttemptRecord>& records,
                                                const std::string& owner) {
  if (records.empty()) return {};
  const TimePoint now = clock_.Now();
  // One write operation for the whole batch. A record whose lease is gone is answered on its own
  // and writes nothing; any other error fails the operation, which the writer rolls back alone.
  Result<std::vector<Status>> r = Write<std::vector<Status>>(
      [this, &records, &owner, now](Connection& db) -> Result<std::vector<Status>> {
        std::vector<Status> out;
        out.reserve(records.size());
        for (const AttemptRecord& rec : records) {
          bool refused;
          Status st = WriteAttempt(db, rec.attempt, rec.update, owner, now, &refused);
          if (!st.ok() && !refused) return st;
          out.push_back(std::move(st));
        }
        return out;
      });
  if (!r.ok()) return std::vector<Status>(records.size(), r.status());
  return std::move(*r);
}

Result<int64_t> SqliteStore::OrderHeadId(Connection& db, const std::string& destination,
                                         const std::string& order_key) {
  Result<Statement> q = db.Prepare(kOrderHeadSql);
  if (!q.ok()) return q.status();
  q->BindText(1, destination).BindText(2, order_key);
  Result<bool> row = q->Step("head of an ordered queue");
  if (!row.ok()) return row.status();
  return *row && !q->IsNull(0) ? q->Int(0) : int64_t{0};
}

Result<bool> SqliteStore::IsOrderHead(Connection& db, int64_t id, const std::string& destination,
                                      const std::string& order_key) {
  Result<int64_t> head = OrderHeadId(db, destination, order_key);
  if (!head.ok()) return head.status();
  return *head == id;
}

Result<std::optional<Delivery>> SqliteStore::ReadOrderHeadIn(Connection& db,
                                                             const std::string& destination,
                                                             const std::string& order_key) const {
  Result<Statement> q = db.Prepare(kOrderHeadSql);
  if (!q.ok()) return q.status();
  q->BindText(1, destination).BindText(2, order_key);
  Result<bool> row = q->Step("head of an ordered queue");
  if (!row.ok()) return row.status();
  if (!*row || q->IsNull(0)) return std::optional<Delivery>();
  const int64_t id = q->Int(0);
  Result<Delivery> d = LoadDelivery(db, id, event_id_bits_);
  if (!d.ok()) return d.status();
  OverlayLease(*d);
  return std::optional<Delivery>(std::move(*d));
}

Result<std::optional<Delivery>> SqliteStore::OrderHead(const std::string& destination,
                                                       const std::string& order_key) {
  Result<Reader> reader = AcquireReader();
  if (!reader.ok()) return reader.status();
  return ReadOrderHeadIn(**reader, destination, order_key);
}

Result<HeldQueues> SqliteStore::ListHeldQueues(const std::string& destination, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  Result<Reader> reader = AcquireReader();
  if (!reader.ok()) return reader.status();
  Connection& db = **reader;
  // One pass over the destination's open ordered deliveries (deliveries_ordered, whose WHERE
  // terms are repeated so the planner may use it): each queue's head and size; then, for the
  // queues that hold something, when the oldest delivery behind the head was created.
  Result<Statement> q = db.Prepare(
      "WITH q AS (SELECT order_key AS k, MIN(id) AS head, COUNT(*) AS n FROM deliveries"
      "  WHERE destination = ?1 AND order_key IS NOT NULL"
      "  AND status IN ('pending', 'scheduled', 'paused') GROUP BY order_key HAVING COUNT(*) > 1)"
      " SELECT k, head, n - 1,"
      "  (SELECT MIN(created_at) FROM deliveries d WHERE d.destination = ?1 AND d.order_key = q.k"
      "   AND d.order_key IS NOT NULL AND d.status IN ('pending', 'scheduled', 'paused')"
      "   AND d.id > q.head) AS since,"
      "  COUNT(*) OVER ()"
      " FROM q ORDER BY since, head LIMIT ?2");
  if (!q.ok()) return q.status();
  q->BindText(1, destination).BindInt(2, limit);
  HeldQueues held;
  for (;;) {
    Result<bool> row = q->Step("held ordered queues");
    if (!row.ok()) return row.status();
    if (!*row) break;
    HeldQueue h;
    h.order_key = q->Text(0);
    h.head.id = q->Int(1);
    h.waiting = q->Int(2);
    h.waiting_since = q->Time(3);
    held.total = q->Int(4);
    held.queues.push_back(std::move(h));
  }
  for (HeldQueue& h : held.queues) {
    Result<Delivery> d = LoadDelivery(db, h.head.id, event_id_bits_);
    if (!d.ok()) return d.status();
    h.head = std::move(*d);
    OverlayLease(h.head);
  }
  return held;
}

// Starts one replay chain (CreateReplay, CreateReplays); returns its delivery id, or kNotFound
// when the event does not exist.
Result<int64_t> SqliteStore::InsertReplay(Connection& db, const std::string& event_id,
                                          const std::string& destination, int max_attempts,
                                          TimePoint due) {
  const std::optional<int64_t> key = EventKeyFromId(event_id, event_id_bits_);
  if (!key) return Status::NotFound("event " + event_id + " not found");
  int64_t chain = 0;
  int64_t in_flight = 0;                 // the id of the current chain's delivery when it is leased
  std::optional<std::string> order_key;  // the latest chain's: the replay queues at its tail
  {
    Result<Statement> q = db.Prepare(
        "SELECT EXISTS (SELECT 1 FROM events WHERE id = ?1),"
        " (SELECT COALESCE(MAX(chain), 0) + 1 FROM deliveries"
        "  WHERE event_id = ?1 AND destination = ?2),"
        " (SELECT order_key FROM deliveries WHERE event_id = ?1 AND destination = ?2"
        "  ORDER BY chain DESC LIMIT 1)");
    if (!q.ok()) return q.status();
    q->BindInt(1, *key).BindText(2, destination);
    Result<bool> row = q->Step("replay lookup");
    if (!row.ok()) return row.status();
    if (!*row || q->Int(0) == 0) return Status::NotFound("event " + event_id + " not found");
    chain = q->Int(1);
    order_key = q->OptText(2);
  }
  {
    // The chain in flight, if any: leased in memory, its row still reads as scheduled.
    Result<Statement> q = db.Prepare(
        "SELECT id, status FROM deliveries WHERE event_id = ?1 AND destination = ?2"
        " AND current = 1");
    if (!q.ok()) return q.status();
    q->BindInt(1, *key).BindText(2, destination);
    for (;;) {
      Result<bool> row = q->Step("current chain of " + event_id);
      if (!row.ok()) return row.status();
      if (!*row) break;
      if (std::optional<Lease> l = LeaseOf(q->Int(0))) {
        l->current = false;
        SetLease(q->Int(0), std::move(*l));
        in_flight = q->Int(0);
      } else if (q->Text(1) == "pending" && op_) {
        --op_->pending_delta[destination];  // stopped below: no longer pending
      }
    }
  }
  {
    // The new chain becomes the current one; the ones before stay as history. A chain still
    // waiting for a retry (or paused) is stopped, or the event would go out twice: once through
    // the replay, once more when the old chain's retry comes due. One in flight (leased) finishes
    // its attempt; WriteAttempt schedules no retry for it.
    Result<Statement> up = db.Prepare(
        "UPDATE deliveries SET current = 0,"
        " reason = CASE WHEN status IN ('pending', 'scheduled', 'paused') AND id <> ?4 THEN ?3"
        "  ELSE reason END,"
        " status = CASE WHEN status IN ('pending', 'scheduled', 'paused') AND id <> ?4"
        "  THEN 'failed' ELSE status END"
        " WHERE event_id = ?1 AND destination = ?2 AND current = 1");
    if (!up.ok()) return up.status();
    const std::string replaced =  // bound, not copied: lives until Exec
        "replaced by replay chain " + std::to_string(chain) + " before it was delivered";
    up->BindInt(1, *key).BindText(2, destination).BindText(3, replaced).BindInt(4, in_flight);
    HR_RETURN_IF_ERROR(up->Exec("supersede the chains of " + event_id));
  }
  Result<Statement> ins = db.Prepare(
      "INSERT INTO deliveries(event_id, destination, chain, status, attempts,"
      " max_attempts, next_attempt_at, created_at, updated_at, order_key)"
      " VALUES (?1, ?2, ?3, 'scheduled', 0, ?4, ?5, ?5, ?5, ?6)");
  if (!ins.ok()) return ins.status();
  ins->BindInt(1, *key)
      .BindText(2, destination)
      .BindInt(3, chain)
      .BindInt(4, max_attempts)
      .BindTime(5, due)
      .BindOptText(6, order_key);
  HR_RETURN_IF_ERROR(ins->Exec("insert replay of " + event_id));
  return db.LastInsertRowid();
}

Result<Delivery> SqliteStore::CreateReplay(const std::string& event_id,
                                           const std::string& destination, int max_attempts,
                                           TimePoint now) {
  return Write<Delivery>(
      [this, &event_id, &destination, max_attempts, now](Connection& db) -> Result<Delivery> {
        Result<int64_t> id = InsertReplay(db, event_id, destination, max_attempts, now);
        if (!id.ok()) return id.status();
        return LoadDelivery(db, *id, event_id_bits_);
      });
}

Result<int64_t> SqliteStore::CreateReplays(const std::vector<NewReplay>& replays) {
  if (replays.empty()) return int64_t{0};
  return Write<int64_t>([this, &replays](Connection& db) -> Result<int64_t> {
    int64_t created = 0;
    for (const NewReplay& r : replays) {
      Result<int64_t> id = InsertReplay(db, r.event_id, r.destination, r.max_attempts, r.due);
      if (id.ok()) {
        ++created;
      } else if (id.status().code() != Status::Code::kNotFound) {
        return id.status();
      }
    }
    return created;
  });
}

Result<std::vector<Delivery>> SqliteStore::ReadDeliveriesIn(Connection& db, int64_t event_key,
                                                            const std::string& event_id) const {
  Result<Statement> q = db.Prepare(std::string("SELECT ") + kDeliveryColumns +
                                   " FROM deliveries WHERE event_id = ?1 ORDER BY id");
  if (!q.ok()) return q.status();
  q->BindInt(1, event_key);
  Result<std::vector<Delivery>> out =
      ReadDeliveries(*q, "get deliveries of " + event_id, event_id_bits_);
  if (!out.ok()) return out;
  for (Delivery& d : *out) OverlayLease(d);
  return out;
}

Result<std::vector<Delivery>> SqliteStore::GetDeliveries(const std::string& event_id) {
  const std::optional<int64_t> key = EventKeyFromId(event_id, event_id_bits_);
  if (!key) return std::vector<Delivery>{};
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  return ReadDeliveriesIn(**db, *key, event_id);
}

Result<std::vector<Attempt>> SqliteStore::ReadAttemptsIn(Connection& db, int64_t delivery_id) {
  Result<Statement> q = db.Prepare(
      "SELECT delivery_id, n, started_at, duration_ms, status_code, error, retry_after, snippet,"
      " probe, counted, sent_size, sent_sha256, headers_changed FROM attempts"
      " WHERE delivery_id = ?1 ORDER BY n");
  if (!q.ok()) return q.status();
  q->BindInt(1, delivery_id);
  std::vector<Attempt> out;
  for (;;) {
    Result<bool> row = q->Step("get attempts");
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Attempt a;
    a.delivery_id = q->Int(0);
    a.n = static_cast<int>(q->Int(1));
    a.started_at = q->Time(2);
    a.duration_ms = q->Int(3);
    if (!q->IsNull(4)) a.status_code = static_cast<int>(q->Int(4));
    a.error = q->OptText(5);
    a.retry_after = q->OptText(6);
    a.response_snippet = q->Blob(7);
    a.probe = q->Int(8) != 0;
    a.counted = q->Int(9) != 0;
    if (!q->IsNull(10)) a.transformed = Attempt::Transformed{q->Int(10), q->Text(11), q->Text(12)};
    out.push_back(std::move(a));
  }
}

Result<std::vector<Attempt>> SqliteStore::GetAttempts(int64_t delivery_id) {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  return ReadAttemptsIn(**db, delivery_id);
}

Result<std::optional<TimePoint>> SqliteStore::NextDueAt(const std::string& destination) {
  return EarliestScheduled(destination, std::nullopt);
}

Result<std::optional<TimePoint>> SqliteStore::EarliestScheduled(const std::string& destination,
                                                                std::optional<TimePoint> by) {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  const int64_t limit = by ? ToUnixMillis(*by) : std::numeric_limits<int64_t>::max();
  std::optional<TimePoint> best;
  // Waiting for a retry: in due order from the due index, skipping those leased in memory (a walk
  // as long as what is in flight, not as the backlog).
  {
    Result<std::vector<std::pair<TimePoint, int64_t>>> first =
        ScheduledDue(**db, destination, FromUnixMillis(limit), 1, /*heads_only=*/true);
    if (!first.ok()) return first.status();
    if (!first->empty()) best = first->front().first;
  }
  // New ones: the first claimable from the frontier on (they arrive in due order, so the walk
  // stops at it, due by `by` or not).
  if (std::optional<int64_t> frontier = PendingFrontier(destination)) {
    Result<std::vector<std::pair<TimePoint, int64_t>>> first =
        PendingDue(**db, destination, *frontier, TimePoint::max(), 1, nullptr);
    if (!first.ok()) return first.status();
    if (!first->empty() && ToUnixMillis(first->front().first) <= limit &&
        (!best || first->front().first < *best)) {
      best = first->front().first;
    }
  }
  return best;
}

}  // namespace hookrelay::store
