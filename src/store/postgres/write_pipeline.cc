// PostgresStore (postgres_store.h): Appends: the writer thread and group commit.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "store/event_id.h"
#include "store/postgres/postgres_store.h"
#include "store/postgres/statements.h"
#include "store/row_codec.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;
using pg::PgStatement;
using pg_store::kWorkChannel;
using pg_store::PipelineError;
using pg_store::StatsDelta;
using pg_store::StatsStatement;

// ---------------------------------------------------------------------------------------------
// Appends: the writer and group commit

void PostgresStore::AppendEvent(NewEvent event, AppendCallback done) {
  {
    MutexLock lock(queue_mu_);
    if (!stopping_) {
      queue_.push_back({std::move(event), std::move(done)});
      queue_cv_.notify_one();
      return;
    }
  }
  done(Status::Unavailable("the store is closing"));
}

PostgresStore::WriterStats PostgresStore::writer_stats() const {
  MutexLock lock(queue_mu_);
  return stats_;
}

void PostgresStore::WriterLoop() {
  for (;;) {
    std::vector<PendingAppend> batch;
    {
      MutexLock lock(queue_mu_);
      queue_cv_.wait(lock, [this]() REQUIRES(queue_mu_) { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued is done
      const size_t n = std::min(queue_.size(), static_cast<size_t>(options_.max_batch));
      batch.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    std::vector<Result<AppendResult>> results;
    if (!writer_conn_ || writer_conn_->broken()) {
      writer_conn_.reset();
      Result<Conn> c = PgConn::Connect(options_.url, options_.display);
      if (c.ok()) {
        writer_conn_ = std::move(*c);
      } else {
        const Status st = Status::Unavailable(c.status().message());
        results.assign(batch.size(), st);
      }
    }
    if (writer_conn_) {
      results = AppendBatch(*writer_conn_, batch);
      if (writer_conn_->broken()) {
        spdlog::warn("PostgreSQL store: the writer's connection was lost (reconnecting)");
        writer_conn_.reset();
      }
    }
    // An append that stored a new event learns whether another one of this commit follows.
    std::vector<bool> follows(batch.size(), false);
    bool later = false;
    for (size_t i = batch.size(); i-- > 0;) {
      follows[i] = later;
      if (results[i].ok() && !results[i]->duplicate) later = true;
    }
    {
      MutexLock lock(queue_mu_);
      ++stats_.batches;
      stats_.appends += static_cast<int64_t>(batch.size());
      stats_.largest_batch = std::max<int64_t>(stats_.largest_batch, std::ssize(batch));
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      if (results[i].ok() && !results[i]->duplicate) results[i]->more_follow = follows[i];
      batch[i].done(std::move(results[i]));
    }
  }
}

std::vector<Result<AppendResult>> PostgresStore::AppendBatch(PgConn& db,
                                                             std::vector<PendingAppend>& batch) {
  Result<std::vector<Result<AppendResult>>> all = TryAppendBatch(db, batch, 0, batch.size());
  if (all.ok()) return std::move(*all);
  if (db.broken() || batch.size() == 1) {
    return std::vector<Result<AppendResult>>(batch.size(), all.status());
  }
  // Something in the batch failed (not the connection): each append alone, so only the one at
  // fault fails.
  std::vector<Result<AppendResult>> out;
  out.reserve(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    if (db.broken()) {
      out.push_back(Status::Unavailable("PostgreSQL at " + options_.display + ": connection lost"));
      continue;
    }
    Result<std::vector<Result<AppendResult>>> one = TryAppendBatch(db, batch, i, 1);
    if (one.ok()) {
      out.push_back(std::move((*one)[0]));
    } else {
      out.push_back(one.status());
    }
  }
  return out;
}

Result<std::vector<Result<AppendResult>>> PostgresStore::TryAppendBatch(
    PgConn& db, std::vector<PendingAppend>& batch, size_t from, size_t count) {
  // Days whose partitions were missing when the keys were assigned: the transaction is rolled
  // back, they are made, and the batch runs again.
  std::set<int64_t> missing;
  auto run = [&]() -> Result<std::vector<Result<AppendResult>>> {
    // The newest key, locked until COMMIT: appends of every node take their keys in turn, so keys
    // are assigned in commit order (pages stay stable) and dedup lookups see every earlier event.
    // BEGIN and the lock in one round trip (pipeline mode).
    std::vector<PgStatement> begin;
    begin.push_back({"BEGIN", PgParams(), "begin appends"});
    begin.push_back({"SELECT value FROM store_meta WHERE key = 'last_event_key' FOR UPDATE",
                     PgParams(), "lock the event keys"});
    HR_ASSIGN_OR_RETURN(std::vector<PgResult> begun, db.Pipeline(begin));
    const PgResult& last_row = begun.back();
    if (last_row.rows() != 1) return Status::Internal("store_meta has no last_event_key");
    int64_t last = last_row.Int(0, 0);
    const int64_t last_before = last;

    struct Stored {
      int64_t key;
      TimePoint received_at;
      const NewEvent* event;
    };
    std::vector<Stored> stored;
    std::vector<Result<AppendResult>> results;
    std::map<std::pair<std::string, std::string>, int64_t> batch_keys;  // dedup within the batch
    StatsDelta stats;
    for (size_t i = from; i < from + count; ++i) {
      const NewEvent& ev = batch[i].event;
      // Strictly increasing whatever the clock does; the stored receive time is the key's
      // millisecond (held at the last time seen when the clock steps back).
      const int64_t key = std::max(last + 1, EventKeyFloor(ev.received_at));
      const TimePoint received_at = EventKeyTime(key);
      if (ev.dedup_key) {
        const int64_t floor = EventKeyFloor(received_at - ev.dedup_window);
        std::optional<int64_t> earlier;
        auto it = batch_keys.find({ev.source, *ev.dedup_key});
        if (it != batch_keys.end() && it->second >= floor) {
          earlier = it->second;
        } else {
          PgParams p;
          const std::string sql = "SELECT id FROM events WHERE source = " + p.Text(ev.source) +
                                  " AND dedup_key = " + p.Bytes(*ev.dedup_key) +
                                  " AND id >= " + p.Int(floor) + " ORDER BY id DESC LIMIT 1";
          HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "dedup lookup"));
          if (r.rows() > 0) earlier = r.Int(0, 0);
        }
        if (earlier) {
          results.push_back(AppendResult{EventIdFromKey(*earlier, event_id_bits_), true, false});
          continue;
        }
        batch_keys[{ev.source, *ev.dedup_key}] = key;
      }
      last = key;
      stored.push_back({key, received_at, &ev});
      ++stats[{UnixMinute(received_at), std::string()}].received;
      results.push_back(AppendResult{EventIdFromKey(key, event_id_bits_), false, false});
    }
    {
      std::set<int64_t> days;
      for (const Stored& s : stored) days.insert(KeyDay(s.key));
      missing = MissingDays(days);
      if (!missing.empty()) return Status::Unavailable("no partition yet for a day of these keys");
    }

    // Multi-row inserts (chunks stay well under the protocol's 65,535 parameters), the counters,
    // the new newest key and COMMIT are sent together in pipeline mode: one round trip for the
    // rest of the batch while the key row is locked, instead of one per statement
    // (docs/postgres.md, "Group commit").
    std::vector<PgStatement> writes;
    constexpr size_t kEventsPerStatement = 1000;
    for (size_t at = 0; at < stored.size(); at += kEventsPerStatement) {
      PgParams p;
      std::string sql =
          "INSERT INTO events (id, source, received_at, content_type, size, dedup_key, headers,"
          " type, routed, route_misses, body) VALUES ";
      const size_t end = std::min(stored.size(), at + kEventsPerStatement);
      for (size_t i = at; i < end; ++i) {
        const Stored& s = stored[i];
        if (i > at) sql += ", ";
        sql += "(" + p.Int(s.key) + ", " + p.Text(s.event->source) + ", " + p.Time(s.received_at) +
               ", " + p.Bytes(s.event->content_type) + ", " +
               p.Int(static_cast<int64_t>(s.event->body.size())) + ", " +
               p.OptBytes(s.event->dedup_key) + ", " + p.Bytes(EncodeHeaders(s.event->headers)) +
               ", " + p.OptText(s.event->type) + ", " + p.Bool(s.event->routed) + ", " +
               (s.event->route_misses.empty() ? std::string("NULL")
                                              : p.Bytes(EncodeRouteMisses(s.event->route_misses))) +
               ", " + p.Bytes(s.event->body) + ")";
      }
      writes.push_back({std::move(sql), std::move(p), "insert events"});
    }
    const TimePoint now = clock_.Now();
    constexpr size_t kDeliveriesPerStatement = 2000;
    PgParams p;
    std::string sql;
    size_t rows = 0;
    auto flush = [&]() {
      if (rows == 0) return;
      writes.push_back({std::move(sql), std::move(p), "insert deliveries"});
      p = PgParams();
      sql.clear();
      rows = 0;
    };
    bool due_work = false;  // deliveries other nodes may claim now: wake them (Watch)
    for (const Stored& s : stored) {
      for (const NewDelivery& d : s.event->deliveries) {
        due_work = due_work || d.status == DeliveryStatus::kScheduled;
        // Due when received (as ingest makes them): due at the stored receive time, which may
        // be later than the clock's when the clock stepped back.
        const bool at_receipt =
            d.status == DeliveryStatus::kScheduled && d.next_attempt_at == s.event->received_at;
        sql += rows == 0 ? "INSERT INTO deliveries (event_id, destination, chain, status,"
                           " max_attempts, next_attempt_at, reason, created_at, updated_at,"
                           " order_key) VALUES "
                         : ", ";
        const std::string created = p.Time(now);
        sql += "(" + p.Int(s.key) + ", " + p.Text(d.destination) + ", 0, " +
               p.Text(DeliveryStatusName(d.status)) + ", " + p.Int(d.max_attempts) + ", " +
               p.Time(at_receipt ? s.received_at : d.next_attempt_at) + ", " + p.OptText(d.reason) +
               ", " + created + ", " + created + ", " + p.OptText(d.order_key) + ")";
        if (++rows == kDeliveriesPerStatement) flush();
      }
    }
    flush();
    if (std::optional<PgStatement> st = StatsStatement(stats)) writes.push_back(std::move(*st));
    if (last != last_before) {
      PgParams k;
      std::string up =
          "UPDATE store_meta SET value = " + k.Int(last) + " WHERE key = 'last_event_key'";
      writes.push_back({std::move(up), std::move(k), "advance the event keys"});
    }
    if (due_work) writes.push_back(NotifyStatement(kWorkChannel));
    writes.push_back({"COMMIT", PgParams(), "commit appends"});
    size_t failed_at = 0;
    Result<std::vector<PgResult>> done = db.Pipeline(writes, &failed_at);
    if (!done.ok()) {
      // A failed COMMIT may be retried (as on SQLite); a failed statement before it is the
      // batch's own fault (each append is then tried alone).
      return PipelineError(done.status(), failed_at, writes.size());
    }
    return results;
  };
  Result<std::vector<Result<AppendResult>>> r = run();
  for (int tries = 0; !r.ok() && !missing.empty() && tries < 3; ++tries) {
    db.RollbackIfOpen();
    if (Status made = EnsurePartitions(db, missing); !made.ok()) return made;
    missing.clear();
    r = run();
  }
  if (!r.ok()) db.RollbackIfOpen();
  return r;
}

}  // namespace hookrelay::store
