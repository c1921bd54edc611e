// PostgresStore (postgres_store.h): The delivery queue: claims and leases, recorded attempts,
// replay chains, ordered queues held behind their head.

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "common/list_limits.h"
#include "store/event_id.h"
#include "store/postgres/postgres_store.h"
#include "store/postgres/statements.h"
#include "store/row_codec.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;
using pg::PgStatement;
using pg_store::ArrayLiteral;
using pg_store::FlushStats;
using pg_store::kDeliveryColumns;
using pg_store::kWorkChannel;
using pg_store::PipelineError;
using pg_store::ReadDelivery;
using pg_store::StatsCounts;
using pg_store::StatsDelta;

namespace {

// The claimable rows of `deliveries`: unordered, or the head of their ordered queue (no open
// delivery of the queue has a lower id). ClaimDue and EarliestScheduled.
constexpr char kHeadOfItsQueue[] =
    " AND (order_key IS NULL OR NOT EXISTS (SELECT 1 FROM deliveries h"
    " WHERE h.destination = deliveries.destination AND h.order_key = deliveries.order_key"
    " AND h.order_key IS NOT NULL AND h.status IN ('scheduled', 'delivering', 'paused')"
    " AND h.id < deliveries.id))";

}  // namespace

// ---------------------------------------------------------------------------------------------
// Claims and results

Result<std::vector<Delivery>> PostgresStore::ClaimDue(TimePoint now, int limit, Duration lease,
                                                      const std::string& owner,
                                                      const std::string& destination) {
  if (limit <= 0) return std::vector<Delivery>{};
  // Claimable: scheduled and due, or delivering with an expired lease (claim_at is the one or the
  // other), oldest first. SKIP LOCKED: claimers on other nodes take other rows instead of
  // waiting for these. One statement: its own transaction.
  PgParams p;
  std::string sql =
      "WITH c AS (SELECT id, claim_at FROM deliveries WHERE claim_at <= " + p.Time(now);
  if (!destination.empty()) sql += " AND destination = " + p.Text(destination);
  // Ordered delivery: a delivery with an order key only as the head of its queue, i.e. no open
  // delivery of the queue (scheduled, delivering, paused) has a lower id. A head being sent is
  // 'delivering' and row-locked until its claim commits, so another node's claim neither takes it
  // (SKIP LOCKED) nor the one behind it (which still sees the head open): one node at a time
  // sends a queue's head. Unordered rows pass on `order_key IS NULL` (deliveries_ordered).
  sql += kHeadOfItsQueue;
  sql += " ORDER BY claim_at, id LIMIT " + p.Int(limit) + " FOR UPDATE SKIP LOCKED)";
  sql += " UPDATE deliveries d SET status = 'delivering', lease_until = " + p.Time(now + lease) +
         ", lease_owner = " + p.Text(owner) + " FROM c WHERE d.id = c.id RETURNING ";
  std::string columns;
  for (std::string_view rest = kDeliveryColumns; !rest.empty();) {
    const size_t comma = rest.find(',');
    std::string_view col = rest.substr(0, comma);
    while (!col.empty() && col.front() == ' ') col.remove_prefix(1);
    columns += (columns.empty() ? "d." : ", d.") + std::string(col);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  sql += columns + ", c.claim_at";
  // The claim must walk its index range in order and stop after `limit` rows: a bitmap scan of
  // every due row and a sort (what the planner picks while the table's statistics are stale, as
  // after a burst: it then expects a few due rows) cost as much as the whole due backlog on every
  // claim of every node, and a hash join with a scan of the table for the UPDATE as much as the
  // table. Measured in the postgres benchmark on 10,000 due deliveries: 12-16 ms per claim of
  // about 70 rows, 27 ms on the full backlog, against under 1 ms with the index walked in order.
  // The planner switches are local to the claim's transaction; BEGIN, them, the claim and COMMIT
  // go in one round trip (pipeline mode).
  std::vector<PgStatement> claim;
  claim.push_back({"BEGIN", PgParams(), "begin the claim"});
  claim.push_back(
      {"SELECT set_config('enable_bitmapscan', 'off', true),"
       " set_config('enable_sort', 'off', true),"
       " set_config('enable_hashjoin', 'off', true),"
       " set_config('enable_mergejoin', 'off', true)",
       PgParams(), "plan the claim"});
  claim.push_back({sql, std::move(p), "claim due deliveries"});
  claim.push_back({"COMMIT", PgParams(), "commit the claim"});
  return WithConn<std::vector<Delivery>>([&](PgConn& db) -> Result<std::vector<Delivery>> {
    size_t failed_at = 0;
    Result<std::vector<PgResult>> done = db.Pipeline(claim, &failed_at);
    if (!done.ok()) {
      db.RollbackIfOpen();
      // A failed COMMIT is the store's failure, as for the appends: the claim may be retried.
      return PipelineError(done.status(), failed_at, claim.size());
    }
    const PgResult& r = (*done)[2];
    std::vector<std::pair<std::pair<int64_t, int64_t>, Delivery>> rows;
    for (int i = 0; i < r.rows(); ++i) {
      HR_ASSIGN_OR_RETURN(Delivery d, ReadDelivery(r, i, event_id_bits_));
      rows.push_back({{r.Int(i, 18), d.id}, std::move(d)});
    }
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Delivery> out;
    out.reserve(rows.size());
    for (auto& [order, d] : rows) out.push_back(std::move(d));
    return out;
  });
}

Result<std::optional<TimePoint>> PostgresStore::EarliestScheduled(const std::string& destination,
                                                                  std::optional<TimePoint> by) {
  PgParams p;
  std::string sql =
      "SELECT claim_at FROM deliveries WHERE claim_at IS NOT NULL AND status = 'scheduled'";
  if (by) sql += " AND claim_at <= " + p.Time(*by);
  if (!destination.empty()) sql += " AND destination = " + p.Text(destination);
  sql += kHeadOfItsQueue;  // a delivery held behind its queue's head is not due
  sql += " ORDER BY claim_at LIMIT 1";
  return WithConn<std::optional<TimePoint>>([&](PgConn& db) -> Result<std::optional<TimePoint>> {
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "earliest due delivery"));
    if (r.rows() == 0) return std::optional<TimePoint>();
    return r.OptTime(0, 0);
  });
}

Result<std::optional<TimePoint>> PostgresStore::NextDueAt(const std::string& destination) {
  return EarliestScheduled(destination, std::nullopt);
}

PgStatement PostgresStore::AttemptStatement(const Attempt& attempt, const DeliveryUpdate& update,
                                            const std::string& owner, TimePoint now) {
  const std::string what = "delivery " + std::to_string(attempt.delivery_id);
  // Only while `owner` holds the lease: a delivery whose lease expired and was claimed by
  // another owner is not written (the late report is refused). A chain a replay replaced while
  // this attempt was out is not retried (see InsertReplay).
  PgParams p;
  const std::string id = p.Int(attempt.delivery_id);
  const std::string status = p.Text(DeliveryStatusName(update.status));
  const std::string n = p.Int(attempt.n);
  const std::string counted = p.Bool(attempt.counted);
  const Attempt::Transformed* t = attempt.transformed ? &*attempt.transformed : nullptr;
  const std::string transformed = t ? p.Int(t->body_size) + "::bigint, " + p.Text(t->body_sha256) +
                                          "::text, " + p.Text(t->headers_changed) + "::text"
                                    : std::string("NULL::bigint, NULL::text, NULL::text");
  const std::string sql =
      "WITH u AS (UPDATE deliveries SET"
      " status = CASE WHEN NOT current AND " +
      status +
      "::text IN ('scheduled', 'paused')"
      "  THEN 'failed' ELSE " +
      status +
      "::text END,"
      " reason = CASE WHEN NOT current AND " +
      status +
      "::text IN ('scheduled', 'paused')"
      "  THEN 'replaced by a replay before it was delivered' ELSE " +
      p.OptText(update.reason) +
      "::text END,"
      // Both from the old row: attempt n is counted, or not (Store::RecordAttempt).
      " attempts = CASE WHEN " +
      counted + "::boolean THEN " + n +
      "::integer - uncounted_attempts ELSE attempts END,"
      " uncounted_attempts = CASE WHEN " +
      counted + "::boolean THEN uncounted_attempts ELSE " + n +
      "::integer - attempts END, next_attempt_at = " + p.Time(update.next_attempt_at) +
      ", deadline = " + p.OptTime(update.deadline) +
      ", first_failure_at = " + p.OptTime(update.first_failure_at) +
      ", last_delay_ms = " + p.Int(update.last_delay.count()) + ", updated_at = " + p.Time(now) +
      ", lease_until = NULL, lease_owner = ''"
      " WHERE id = " +
      id + "::bigint AND status = 'delivering' AND lease_owner = " + p.Text(owner) +
      " RETURNING destination, event_id),"
      " a AS (INSERT INTO attempts (delivery_id, event_id, n, started_at, duration_ms,"
      " status_code, error, retry_after, snippet, probe, counted, sent_size, sent_sha256,"
      " headers_changed) SELECT " +
      id + "::bigint, u.event_id, " + n + "::integer, " + p.Time(attempt.started_at) +
      "::bigint, " + p.Int(attempt.duration_ms) + "::bigint, " +
      p.OptInt(attempt.status_code ? std::optional<int64_t>(*attempt.status_code) : std::nullopt) +
      "::integer, " + p.OptText(attempt.error) + "::text, " + p.OptText(attempt.retry_after) +
      "::text, " + p.Bytes(attempt.response_snippet) + "::bytea, " + p.Bool(attempt.probe) +
      "::boolean, " + counted + "::boolean, " + transformed +
      " FROM u)"
      " SELECT (SELECT destination FROM u), EXISTS (SELECT 1 FROM deliveries WHERE id = " +
      id + "::bigint)";
  return PgStatement{sql, std::move(p), "record an attempt of " + what};
}

Status PostgresStore::AttemptWritten(const PgResult& r, const Attempt& attempt,
                                     const std::string& owner, bool* refused,
                                     std::string* destination) {
  *refused = false;
  const std::string what = "delivery " + std::to_string(attempt.delivery_id);
  if (r.rows() != 1) return Status::Internal("recording " + what + " returned no row");
  if (r.IsNull(0, 0)) {
    *refused = true;
    if (!r.Bool(0, 1)) return Status::NotFound(what + " not found");
    return Status::FailedPrecondition(what + " is not leased by " + owner);
  }
  *destination = r.Text(0, 0);
  return Status::Ok();
}

Status PostgresStore::RecordAttempt(const Attempt& attempt, const DeliveryUpdate& update,
                                    const std::string& owner) {
  std::vector<Status> st = RecordAttempts({AttemptRecord{attempt, update}}, owner);
  return st.empty() ? Status::Internal("no result") : st[0];
}

std::vector<Status> PostgresStore::RecordAttempts(const std::vector<AttemptRecord>& records,
                                                  const std::string& owner) {
  if (records.empty()) return {};
  const TimePoint now = clock_.Now();
  Result<std::vector<Status>> r =
      InTransaction<std::vector<Status>>([&](PgConn& db) -> Result<std::vector<Status>> {
        // Every attempt's statement in one round trip (pipeline mode), not one each.
        std::vector<PgStatement> writes;
        writes.reserve(records.size());
        for (const AttemptRecord& rec : records) {
          writes.push_back(AttemptStatement(rec.attempt, rec.update, owner, now));
        }
        HR_ASSIGN_OR_RETURN(std::vector<PgResult> written, db.Pipeline(writes));
        std::vector<Status> out;
        out.reserve(records.size());
        StatsDelta stats;
        for (size_t i = 0; i < records.size(); ++i) {
          const AttemptRecord& rec = records[i];
          bool refused = false;
          std::string destination;
          Status st = AttemptWritten(written[i], rec.attempt, owner, &refused, &destination);
          if (!st.ok() && !refused) return st;
          if (st.ok()) {
            // One attempt in the minute it is recorded, and the outcome when it was final.
            StatsCounts& c = stats[{UnixMinute(now), destination}];
            ++c.attempts;
            if (rec.update.status == DeliveryStatus::kDelivered) {
              ++c.delivered;
            } else {
              ++c.attempt_failures;
              if (rec.update.status == DeliveryStatus::kFailed) ++c.failed;
            }
          }
          out.push_back(std::move(st));
        }
        HR_RETURN_IF_ERROR(FlushStats(db, stats));
        return out;
      });
  if (!r.ok()) return std::vector<Status>(records.size(), r.status());
  return std::move(*r);
}

Result<int64_t> PostgresStore::ReleaseClaims(const std::vector<int64_t>& delivery_ids,
                                             const std::string& owner) {
  if (delivery_ids.empty()) return int64_t{0};
  return WithConn<int64_t>([&](PgConn& db) -> Result<int64_t> {
    // Back to what they were before the claim (scheduled, due as before); a chain a replay
    // replaced meanwhile is not sent any more.
    PgParams p;
    const std::string sql =
        "UPDATE deliveries SET status = CASE WHEN current THEN 'scheduled' ELSE 'failed' END,"
        " reason = CASE WHEN current THEN reason"
        "  ELSE 'replaced by a replay before it was delivered' END,"
        " lease_until = NULL, lease_owner = '' WHERE id = ANY (" +
        p.Text(ArrayLiteral(delivery_ids)) + "::bigint[]) AND status = 'delivering'" +
        " AND lease_owner = " + p.Text(owner);
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "release claims"));
    return r.affected();
  });
}

Result<int64_t> PostgresStore::InsertReplay(PgConn& db, const std::string& event_id,
                                            const std::string& destination, int max_attempts,
                                            TimePoint due) {
  const std::optional<int64_t> key = EventKeyFromId(event_id, event_id_bits_);
  if (!key) return Status::NotFound("event " + event_id + " not found");
  {
    // The event's row, locked until COMMIT: replays of one event (on any node) take their chain
    // numbers in turn, and retention cannot delete it meanwhile.
    PgParams p;
    const std::string sql = "SELECT 1 FROM events WHERE id = " + p.Int(*key) + " FOR NO KEY UPDATE";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "replay lookup"));
    if (r.rows() == 0) return Status::NotFound("event " + event_id + " not found");
  }
  int64_t chain = 0;
  std::optional<std::string> order_key;  // the latest chain's: the replay queues at its tail
  {
    PgParams p;
    const std::string k = p.Int(*key);
    const std::string dest = p.Text(destination);
    const std::string sql =
        "SELECT COALESCE(MAX(chain), 0) + 1, (SELECT order_key FROM deliveries WHERE event_id = " +
        k + " AND destination = " + dest +
        " ORDER BY chain DESC LIMIT 1) FROM deliveries WHERE event_id = " + k +
        " AND destination = " + dest;
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "next chain"));
    chain = r.Int(0, 0);
    order_key = r.OptText(0, 1);
  }
  {
    // The new chain becomes the current one; those before stay as history. A chain still waiting
    // (scheduled, paused) is stopped, or the event would go out twice; one in flight
    // (delivering) finishes its attempt, and WriteAttempt schedules no retry for it.
    PgParams p;
    const std::string replaced =
        p.Text("replaced by replay chain " + std::to_string(chain) + " before it was delivered");
    const std::string sql =
        "UPDATE deliveries SET current = false,"
        " reason = CASE WHEN status IN ('scheduled', 'paused') THEN " +
        replaced +
        "::text ELSE reason END,"
        " status = CASE WHEN status IN ('scheduled', 'paused') THEN 'failed' ELSE status END"
        " WHERE event_id = " +
        p.Int(*key) + " AND destination = " + p.Text(destination) + " AND current";
    HR_RETURN_IF_ERROR(db.Exec(sql, p, "supersede the chains of " + event_id).status());
  }
  PgParams p;
  const std::string at = p.Time(due);
  const std::string sql =
      "INSERT INTO deliveries (event_id, destination, chain, status, attempts, max_attempts,"
      " next_attempt_at, created_at, updated_at, order_key) VALUES (" +
      p.Int(*key) + ", " + p.Text(destination) + ", " + p.Int(chain) + ", 'scheduled', 0, " +
      p.Int(max_attempts) + ", " + at + ", " + at + ", " + at + ", " + p.OptText(order_key) +
      ") RETURNING id";
  HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "insert replay of " + event_id));
  return r.Int(0, 0);
}

Result<std::optional<Delivery>> PostgresStore::ReadOrderHeadIn(PgConn& db,
                                                               const std::string& destination,
                                                               const std::string& order_key) const {
  PgParams p;
  const std::string sql = std::string("SELECT ") + kDeliveryColumns +
                          " FROM deliveries WHERE destination = " + p.Text(destination) +
                          " AND order_key = " + p.Text(order_key) +
                          " AND order_key IS NOT NULL"
                          " AND status IN ('scheduled', 'delivering', 'paused')"
                          " ORDER BY id LIMIT 1";
  HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "head of an ordered queue"));
  if (r.rows() == 0) return std::optional<Delivery>();
  HR_ASSIGN_OR_RETURN(Delivery d, ReadDelivery(r, 0, event_id_bits_));
  return std::optional<Delivery>(std::move(d));
}

Result<std::optional<Delivery>> PostgresStore::OrderHead(const std::string& destination,
                                                         const std::string& order_key) {
  return WithConn<std::optional<Delivery>>([&](PgConn& db) -> Result<std::optional<Delivery>> {
    return ReadOrderHeadIn(db, destination, order_key);
  });
}

Result<HeldQueues> PostgresStore::ListHeldQueues(const std::string& destination, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  return WithConn<HeldQueues>([&](PgConn& db) -> Result<HeldQueues> {
    PgParams p;
    const std::string dest = p.Text(destination);
    // The open ordered deliveries of the destination (deliveries_ordered): each queue's head and
    // size; for the queues that hold something, when the oldest delivery behind the head was
    // created; then the heads themselves.
    const std::string open =
        " AND order_key IS NOT NULL"
        " AND status IN ('scheduled', 'delivering', 'paused')";
    const std::string sql =
        "WITH q AS (SELECT order_key AS k, MIN(id) AS head, COUNT(*) AS n FROM deliveries"
        " WHERE destination = " +
        dest + open +
        " GROUP BY order_key HAVING COUNT(*) > 1),"
        " s AS (SELECT head, n - 1 AS waiting,"
        " (SELECT MIN(created_at) FROM deliveries WHERE destination = " +
        dest + " AND order_key = q.k" + open +
        " AND id > q.head) AS since,"
        " COUNT(*) OVER () AS total FROM q ORDER BY since, head LIMIT " +
        p.Int(limit) +
        ")"
        " SELECT " +
        kDeliveryColumns +
        ", s.waiting, s.since, s.total"
        " FROM s JOIN deliveries ON deliveries.id = s.head ORDER BY s.since, s.head";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "held ordered queues"));
    HeldQueues held;
    for (int i = 0; i < r.rows(); ++i) {
      HeldQueue h;
      HR_ASSIGN_OR_RETURN(h.head, ReadDelivery(r, i, event_id_bits_));
      h.order_key = h.head.order_key.value_or("");
      h.waiting = r.Int(i, 18);
      h.waiting_since = r.Time(i, 19);
      held.total = r.Int(i, 20);
      held.queues.push_back(std::move(h));
    }
    return held;
  });
}

Result<Delivery> PostgresStore::CreateReplay(const std::string& event_id,
                                             const std::string& destination, int max_attempts,
                                             TimePoint now) {
  return InTransaction<Delivery>([&](PgConn& db) -> Result<Delivery> {
    HR_ASSIGN_OR_RETURN(int64_t id, InsertReplay(db, event_id, destination, max_attempts, now));
    HR_RETURN_IF_ERROR(NotifyOthers(db, kWorkChannel));
    PgParams p;
    const std::string sql =
        std::string("SELECT ") + kDeliveryColumns + " FROM deliveries WHERE id = " + p.Int(id);
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "load the replay"));
    if (r.rows() == 0) return Status::Internal("delivery " + std::to_string(id) + " vanished");
    return ReadDelivery(r, 0, event_id_bits_);
  });
}

Result<int64_t> PostgresStore::CreateReplays(const std::vector<NewReplay>& replays) {
  if (replays.empty()) return int64_t{0};
  return InTransaction<int64_t>([&](PgConn& db) -> Result<int64_t> {
    int64_t created = 0;
    for (const NewReplay& r : replays) {
      Result<int64_t> id = InsertReplay(db, r.event_id, r.destination, r.max_attempts, r.due);
      if (id.ok()) {
        ++created;
      } else if (id.status().code() != Status::Code::kNotFound) {
        return id.status();
      }
    }
    // Chains due later too: a woken node learns when the next one is due (NextDueAt).
    if (created > 0) HR_RETURN_IF_ERROR(NotifyOthers(db, kWorkChannel));
    return created;
  });
}

}  // namespace hookrelay::store
