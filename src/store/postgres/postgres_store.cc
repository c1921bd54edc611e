#include "store/postgres/postgres_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "common/crypto.h"
#include "common/id.h"
#include "common/list_limits.h"
#include "store/event_id.h"
#include "store/postgres/migrations.h"
#include "store/row_codec.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;
using pg::PgStatement;

namespace {

struct Unit {};

std::string ArrayLiteral(const std::vector<int64_t>& keys) {
  std::string out = "{";
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(keys[i]);
  }
  return out + "}";
}

constexpr char kEventColumns[] =
    "e.id, e.source, e.received_at, e.content_type, e.size, e.dedup_key, e.headers";

Result<Event> ReadEvent(const PgResult& r, int row, bool with_body, uint64_t id_bits) {
  Event e;
  e.id = EventIdFromKey(r.Int(row, 0), id_bits);
  e.source = r.Text(row, 1);
  e.received_at = r.Time(row, 2);
  e.content_type = r.Bytes(row, 3);
  e.size = r.Int(row, 4);
  e.dedup_key = r.OptBytes(row, 5);
  HR_ASSIGN_OR_RETURN(e.headers, DecodeHeaders(r.Bytes(row, 6)));
  if (with_body) e.body = r.Bytes(row, 7);
  return e;
}

constexpr char kDeliveryColumns[] =
    "id, event_id, destination, chain, status, attempts, max_attempts, next_attempt_at, deadline,"
    " first_failure_at, last_delay_ms, reason, lease_until, lease_owner, created_at, updated_at,"
    " order_key, uncounted_attempts";

Result<Delivery> ReadDelivery(const PgResult& r, int row, uint64_t id_bits) {
  Delivery d;
  d.id = r.Int(row, 0);
  d.event_id = EventIdFromKey(r.Int(row, 1), id_bits);
  d.destination = r.Text(row, 2);
  d.chain = static_cast<int>(r.Int(row, 3));
  const std::string status = r.Text(row, 4);
  std::optional<DeliveryStatus> parsed = ParseDeliveryStatus(status);
  if (!parsed) return Status::Internal("unknown delivery status in the database: " + status);
  d.status = *parsed;
  d.attempts = static_cast<int>(r.Int(row, 5));
  d.max_attempts = static_cast<int>(r.Int(row, 6));
  d.next_attempt_at = r.Time(row, 7);
  d.deadline = r.OptTime(row, 8);
  d.first_failure_at = r.OptTime(row, 9);
  d.last_delay = Duration(r.Int(row, 10));
  d.reason = r.OptText(row, 11);
  d.lease_until = r.OptTime(row, 12);
  d.lease_owner = r.Text(row, 13);
  d.created_at = r.Time(row, 14);
  d.updated_at = r.Time(row, 15);
  d.order_key = r.OptText(row, 16);
  d.uncounted_attempts = static_cast<int>(r.Int(row, 17));
  return d;
}

Result<std::vector<Delivery>> ReadDeliveries(const PgResult& r, uint64_t id_bits) {
  std::vector<Delivery> out;
  out.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    HR_ASSIGN_OR_RETURN(Delivery d, ReadDelivery(r, i, id_bits));
    out.push_back(std::move(d));
  }
  return out;
}

// The claimable rows of `deliveries`: unordered, or the head of their ordered queue (no open
// delivery of the queue has a lower id). ClaimDue and EarliestScheduled.
constexpr char kHeadOfItsQueue[] =
    " AND (order_key IS NULL OR NOT EXISTS (SELECT 1 FROM deliveries h"
    " WHERE h.destination = deliveries.destination AND h.order_key = deliveries.order_key"
    " AND h.order_key IS NOT NULL AND h.status IN ('scheduled', 'delivering', 'paused')"
    " AND h.id < deliveries.id))";

constexpr char kReplayJobColumns[] =
    "id, created_at, updated_at, filter, rate, state, total, done, failed, cursor, error,"
    " lease_until, lease_owner, waiting";

Result<ReplayJob> ReadReplayJob(const PgResult& r, int row) {
  ReplayJob j;
  j.id = r.Text(row, 0);
  j.created_at = r.Time(row, 1);
  j.updated_at = r.Time(row, 2);
  j.filter = r.Text(row, 3);
  j.rate = r.Double(row, 4);
  const std::string state = r.Text(row, 5);
  std::optional<ReplayJobState> parsed = ParseReplayJobState(state);
  if (!parsed) return Status::Internal("unknown replay job state in the database: " + state);
  j.state = *parsed;
  j.total = r.Int(row, 6);
  j.done = r.Int(row, 7);
  j.failed = r.Int(row, 8);
  j.cursor = r.Text(row, 9);
  j.error = r.OptText(row, 10);
  j.lease_until = r.OptTime(row, 11);
  j.lease_owner = r.Text(row, 12);
  j.waiting = r.OptText(row, 13);
  return j;
}

Result<std::optional<ReplayJob>> SelectReplayJob(PgConn& db, const std::string& id) {
  PgParams p;
  const std::string sql =
      std::string("SELECT ") + kReplayJobColumns + " FROM replays WHERE id = " + p.Text(id);
  HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get replay job " + id));
  if (r.rows() == 0) return std::optional<ReplayJob>();
  HR_ASSIGN_OR_RETURN(ReplayJob j, ReadReplayJob(r, 0));
  return std::optional<ReplayJob>(std::move(j));
}

Status InsertAudit(PgConn& db, const AuditEntry& entry) {
  PgParams p;
  const std::string sql = "INSERT INTO audit (at, actor, action, target, count, detail) VALUES (" +
                          p.Time(entry.at) + ", " + p.Text(entry.actor) + ", " +
                          p.Text(entry.action) + ", " + p.Text(entry.target) + ", " +
                          p.Int(entry.count) + ", " + p.Text(entry.detail) + ")";
  return db.Exec(sql, p, "append audit entry " + entry.action).status();
}

// The dashboard's counters, by (Unix minute, destination), summed over a transaction and written
// once per key at its end, in key order (two transactions never wait for each other's rows in
// opposite orders).
struct StatsCounts {
  int64_t received = 0, delivered = 0, failed = 0, attempts = 0, attempt_failures = 0;
};
using StatsDelta = std::map<std::pair<int64_t, std::string>, StatsCounts>;

// The channels other nodes LISTEN on (Watch).
constexpr std::string_view kWorkChannel = "hookrelay_work";
constexpr std::string_view kCatalogChannel = "hookrelay_catalog";
constexpr std::string_view kReplaysChannel = "hookrelay_replays";

// The upsert of `delta` into stats_minute (nullopt when it is empty).
std::optional<PgStatement> StatsStatement(const StatsDelta& delta) {
  if (delta.empty()) return std::nullopt;
  PgParams p;
  std::string sql =
      "INSERT INTO stats_minute (minute, destination, received, delivered, failed, attempts,"
      " attempt_failures) VALUES ";
  bool first = true;
  for (const auto& [key, c] : delta) {
    if (!first) sql += ", ";
    first = false;
    sql += "(" + p.Int(key.first) + ", " + p.Text(key.second) + ", " + p.Int(c.received) + ", " +
           p.Int(c.delivered) + ", " + p.Int(c.failed) + ", " + p.Int(c.attempts) + ", " +
           p.Int(c.attempt_failures) + ")";
  }
  sql +=
      " ON CONFLICT (minute, destination) DO UPDATE SET"
      " received = stats_minute.received + excluded.received,"
      " delivered = stats_minute.delivered + excluded.delivered,"
      " failed = stats_minute.failed + excluded.failed,"
      " attempts = stats_minute.attempts + excluded.attempts,"
      " attempt_failures = stats_minute.attempt_failures + excluded.attempt_failures";
  return PgStatement{std::move(sql), std::move(p), "add to the per-minute counts"};
}

Status FlushStats(PgConn& db, const StatsDelta& delta) {
  std::optional<PgStatement> st = StatsStatement(delta);
  if (!st) return Status::Ok();
  return db.Exec(st->sql, st->params, st->what).status();
}

// Shows the destination's waiting deliveries as paused; those in flight (delivering) finish their
// attempt. Returns how many were paused.
Result<int64_t> PauseScheduled(PgConn& db, const std::string& destination,
                               const std::string& reason, TimePoint now) {
  PgParams p;
  const std::string sql = "UPDATE deliveries SET status = 'paused', reason = " + p.Text(reason) +
                          ", updated_at = " + p.Time(now) +
                          " WHERE destination = " + p.Text(destination) +
                          " AND status = 'scheduled'";
  HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "pause deliveries to " + destination));
  return r.affected();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Open / close, connections

PostgresStore::PostgresStore(PostgresOptions options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

Result<std::unique_ptr<Store>> OpenPostgresStore(const PostgresOptions& options,
                                                 const Clock& clock) {
  Result<std::unique_ptr<PostgresStore>> s = PostgresStore::Open(options, clock);
  if (!s.ok()) return s.status();
  return std::unique_ptr<Store>(std::move(*s));
}

Result<std::unique_ptr<PostgresStore>> PostgresStore::Open(const PostgresOptions& options,
                                                           const Clock& clock) {
  PostgresOptions opts = options;
  if (opts.display.empty()) opts.display = "(the configured server)";
  std::unique_ptr<PostgresStore> s(new PostgresStore(std::move(opts), clock));
  s->notify_token_ = RandomHexToken(8);
  HR_ASSIGN_OR_RETURN(Conn db, PgConn::Connect(s->options_.url, s->options_.display));
  HR_ASSIGN_OR_RETURN(pg::MigrationResult m, pg::ApplyMigrations(*db, pg::SchemaMigrations(),
                                                                 clock.Now(), s->options_.display));
  s->schema_version_ = m.version;
  s->migrations_applied_ = m.applied;
  if (m.applied > 0) {
    spdlog::info("PostgreSQL store at {}: applied {} migration(s), schema version {}",
                 s->options_.display, m.applied, m.version);
  }
  HR_ASSIGN_OR_RETURN(PgResult bits, db->Exec("SELECT value FROM store_meta WHERE key = "
                                              "'event_id_bits'",
                                              "read the event id bits"));
  if (bits.rows() != 1) return Status::Internal("store_meta has no event_id_bits");
  s->event_id_bits_ = static_cast<uint64_t>(bits.Int(0, 0));
  {
    // Today's and tomorrow's partitions, so that the first appends do not wait for them.
    const int64_t today = KeyDay(EventKeyFloor(clock.Now()));
    HR_RETURN_IF_ERROR(s->EnsurePartitions(*db, {today, today + 1}));
  }
  s->Release(std::move(db));
  s->writer_ = std::thread([p = s.get()] { p->WriterLoop(); });
  return s;
}

PostgresStore::~PostgresStore() {
  {
    std::unique_ptr<pg::PgListener> listener;
    {
      MutexLock lock(listen_mu_);
      listener = std::move(listener_);
    }
    listener.reset();  // no more callbacks from here on
  }
  {
    MutexLock lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

Result<PostgresStore::Conn> PostgresStore::Acquire() {
  {
    MutexLock lock(pool_mu_);
    if (!idle_.empty()) {
      Conn c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  Result<Conn> c = PgConn::Connect(options_.url, options_.display);
  if (!c.ok()) {
    // Once the store is open, any failure to connect is the server being away (or refusing for
    // now): retrying may succeed.
    return Status::Unavailable(c.status().message());
  }
  return c;
}

void PostgresStore::Release(Conn conn) {
  if (!conn || conn->InTransaction()) return;
  MutexLock lock(pool_mu_);
  if (conn->broken()) {
    // The server went away (restart, failover, admin terminate): the idle connections are most
    // likely gone too; the next calls connect anew instead of each failing on one of them.
    idle_.clear();
    return;
  }
  if (idle_.size() < static_cast<size_t>(options_.max_idle_connections)) {
    idle_.push_back(std::move(conn));
  }
}

template <typename T>
Result<T> PostgresStore::WithConn(const std::function<Result<T>(PgConn&)>& fn) {
  HR_ASSIGN_OR_RETURN(Conn c, Acquire());
  Result<T> r = fn(*c);
  if (!r.ok() && c->broken()) {
    spdlog::warn("PostgreSQL store: {} (reconnecting on next use)", r.status().message());
  }
  Release(std::move(c));
  return r;
}

template <typename T>
Result<T> PostgresStore::InTransaction(const std::function<Result<T>(PgConn&)>& fn) {
  HR_ASSIGN_OR_RETURN(Conn c, Acquire());
  Status begin = c->Script("BEGIN", "begin");
  Result<T> r = begin.ok() ? fn(*c) : Result<T>(begin);
  if (r.ok()) {
    Status commit = c->Script("COMMIT", "commit");
    if (!commit.ok())
      r = commit.code() == Status::Code::kInternal ? Status::Unavailable(commit.message()) : commit;
  }
  if (!r.ok()) {
    c->RollbackIfOpen();
    if (c->broken()) {
      spdlog::warn("PostgreSQL store: {} (reconnecting on next use)", r.status().message());
    }
  }
  Release(std::move(c));
  return r;
}

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
          " body) VALUES ";
      const size_t end = std::min(stored.size(), at + kEventsPerStatement);
      for (size_t i = at; i < end; ++i) {
        const Stored& s = stored[i];
        if (i > at) sql += ", ";
        sql += "(" + p.Int(s.key) + ", " + p.Text(s.event->source) + ", " + p.Time(s.received_at) +
               ", " + p.Bytes(s.event->content_type) + ", " +
               p.Int(static_cast<int64_t>(s.event->body.size())) + ", " +
               p.OptBytes(s.event->dedup_key) + ", " + p.Bytes(EncodeHeaders(s.event->headers)) +
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
      const Status& st = done.status();
      return st.code() == Status::Code::kInternal && failed_at + 1 == writes.size()
                 ? Status::Unavailable(st.message())
                 : st;
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

// ---------------------------------------------------------------------------------------------
// Time partitions

namespace {
// Serialises the creation and the dropping of partitions across nodes ("hrpartit").
constexpr int64_t kPartitionLock = 0x6872706172746974;
constexpr int64_t kDayMillis = 86'400'000;
}  // namespace

int64_t PostgresStore::KeyDay(int64_t key) {
  return ToUnixMillis(EventKeyTime(key)) / kDayMillis;  // keys are never negative
}

std::set<int64_t> PostgresStore::MissingDays(const std::set<int64_t>& days) const {
  std::set<int64_t> missing;
  MutexLock lock(partition_mu_);
  for (int64_t d : days) {
    if (!partition_days_.count(d)) missing.insert(d);
  }
  return missing;
}

Status PostgresStore::EnsurePartitions(PgConn& db, const std::set<int64_t>& days) {
  const std::set<int64_t> missing = MissingDays(days);
  if (missing.empty()) return Status::Ok();
  std::vector<int64_t> list(missing.begin(), missing.end());
  auto run = [&]() -> Status {
    HR_RETURN_IF_ERROR(db.Script("BEGIN", "begin making partitions"));
    PgParams p;
    const std::string sql = "SELECT pg_advisory_xact_lock(" + p.Int(kPartitionLock) +
                            "), hookrelay_day_partitions(d) FROM unnest(" +
                            p.Text(ArrayLiteral(list)) + "::bigint[]) d";
    HR_RETURN_IF_ERROR(db.Exec(sql, p, "make the partitions of new days").status());
    Status commit = db.Script("COMMIT", "commit the new partitions");
    if (!commit.ok() && commit.code() == Status::Code::kInternal) {
      return Status::Unavailable(commit.message());
    }
    return commit;
  };
  Status st = run();
  if (!st.ok()) {
    db.RollbackIfOpen();
    return st;
  }
  MutexLock lock(partition_mu_);
  partition_days_.insert(missing.begin(), missing.end());
  return Status::Ok();
}

Result<int64_t> PostgresStore::DropExpiredPartitions(TimePoint cutoff) {
  // The day partitions wholly before the cutoff, oldest first (their names carry their day).
  struct Day {
    int64_t day;
    std::string events, attempts;
  };
  const int64_t cutoff_ms = ToUnixMillis(cutoff);
  HR_ASSIGN_OR_RETURN(
      std::vector<Day> expired,
      WithConn<std::vector<Day>>([&](PgConn& db) -> Result<std::vector<Day>> {
        HR_ASSIGN_OR_RETURN(
            PgResult r,
            db.Exec("SELECT c.relname, (to_date(substr(c.relname, 9), 'YYYYMMDD')"
                    " - DATE '1970-01-01')::bigint FROM pg_inherits i"
                    " JOIN pg_class c ON c.oid = i.inhrelid"
                    " WHERE i.inhparent = 'events'::regclass AND c.relname ~ '^events_p[0-9]{8}$'"
                    " ORDER BY 2",
                    "list the event partitions"));
        std::vector<Day> out;
        for (int i = 0; i < r.rows(); ++i) {
          const int64_t day = r.Int(i, 1);
          if ((day + 1) * kDayMillis > cutoff_ms) break;
          const std::string name = r.Text(i, 0);
          out.push_back({day, name, "attempts_p" + name.substr(8)});
        }
        return out;
      }));
  int64_t purged = 0;
  for (const Day& d : expired) {
    PgParams range;
    const std::string lo = range.Int(EventKeyFloor(FromUnixMillis(d.day * kDayMillis)));
    const std::string hi = range.Int(EventKeyFloor(FromUnixMillis((d.day + 1) * kDayMillis)));
    const std::string in_range = "event_id >= " + lo + " AND event_id < " + hi;
    // First the deliveries of its events, while the partition is held in EXCLUSIVE mode (reads go
    // on; a replay, which locks its event's row, waits): none may be open, or the day is kept
    // and only its finished events go, row by row (PurgeEventsBefore).
    HR_ASSIGN_OR_RETURN(
        std::optional<int64_t> events,
        InTransaction<std::optional<int64_t>>([&](PgConn& db) -> Result<std::optional<int64_t>> {
          HR_RETURN_IF_ERROR(db.Script("SET LOCAL lock_timeout = '2s'", "set lock_timeout"));
          HR_RETURN_IF_ERROR(db.Script("LOCK TABLE " + d.events + " IN EXCLUSIVE MODE",
                                       "hold the partition " + d.events));
          HR_ASSIGN_OR_RETURN(PgResult open,
                              db.Exec("SELECT EXISTS (SELECT 1 FROM deliveries WHERE " + in_range +
                                          " AND status IN ('scheduled', 'delivering', 'paused'))",
                                      range, "look for open deliveries in " + d.events));
          if (open.Bool(0, 0)) return std::optional<int64_t>();
          HR_ASSIGN_OR_RETURN(PgResult n, db.Exec("SELECT COUNT(*) FROM " + d.events,
                                                  "count the events of " + d.events));
          HR_RETURN_IF_ERROR(db.Exec("DELETE FROM deliveries WHERE " + in_range, range,
                                     "delete the deliveries of " + d.events)
                                 .status());
          return std::optional<int64_t>(n.Int(0, 0));
        }));
    if (!events) continue;
    // Then the partitions, in a short transaction holding the parents (ACCESS EXCLUSIVE, as any
    // DROP of a partition): only if no delivery was made for its events meanwhile (a replay
    // that committed between the two transactions keeps the day for a later pass).
    HR_ASSIGN_OR_RETURN(
        bool dropped, InTransaction<bool>([&](PgConn& db) -> Result<bool> {
          PgParams p;
          HR_RETURN_IF_ERROR(db.Exec("SELECT pg_advisory_xact_lock(" + p.Int(kPartitionLock) + ")",
                                     p, "take the partition lock")
                                 .status());
          HR_RETURN_IF_ERROR(db.Script("SET LOCAL lock_timeout = '2s'", "set lock_timeout"));
          HR_RETURN_IF_ERROR(db.Script("LOCK TABLE ONLY events IN ACCESS EXCLUSIVE MODE",
                                       "hold events to drop " + d.events));
          HR_ASSIGN_OR_RETURN(
              PgResult any,
              db.Exec("SELECT EXISTS (SELECT 1 FROM deliveries WHERE " + in_range + ")", range,
                      "look for new deliveries in " + d.events));
          if (any.Bool(0, 0)) return false;
          HR_RETURN_IF_ERROR(db.Script("DROP TABLE IF EXISTS " + d.attempts + ", " + d.events,
                                       "drop the partitions " + d.events));
          return true;
        }));
    if (!dropped) continue;
    {
      MutexLock lock(partition_mu_);
      partition_days_.erase(d.day);
    }
    spdlog::info("PostgreSQL store: retention dropped the partitions {} and {} ({} events)",
                 d.events, d.attempts, *events);
    purged += *events;
  }
  return purged;
}

// ---------------------------------------------------------------------------------------------
// Reads of events and deliveries

Result<std::optional<Event>> PostgresStore::GetEvent(const std::string& id) {
  const std::optional<int64_t> key = EventKeyFromId(id, event_id_bits_);
  if (!key) return std::optional<Event>();  // not an id of this store: no such event
  return WithConn<std::optional<Event>>([&](PgConn& db) -> Result<std::optional<Event>> {
    PgParams p;
    const std::string sql = std::string("SELECT ") + kEventColumns +
                            ", e.body FROM events e WHERE e.id = " + p.Int(*key);
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get event " + id));
    if (r.rows() == 0) return std::optional<Event>();
    HR_ASSIGN_OR_RETURN(Event e, ReadEvent(r, 0, true, event_id_bits_));
    return std::optional<Event>(std::move(e));
  });
}

Result<std::vector<std::optional<Event>>> PostgresStore::GetEvents(
    const std::vector<std::string>& ids) {
  std::vector<std::optional<Event>> out(ids.size());
  std::vector<int64_t> keys;
  for (const std::string& id : ids) {
    if (std::optional<int64_t> k = EventKeyFromId(id, event_id_bits_)) keys.push_back(*k);
  }
  if (keys.empty()) return out;
  Result<std::map<int64_t, Event>> found =
      WithConn<std::map<int64_t, Event>>([&](PgConn& db) -> Result<std::map<int64_t, Event>> {
        PgParams p;
        const std::string sql = std::string("SELECT ") + kEventColumns +
                                ", e.body FROM events e WHERE e.id = ANY (" +
                                p.Text(ArrayLiteral(keys)) + "::bigint[])";
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get events"));
        std::map<int64_t, Event> m;
        for (int i = 0; i < r.rows(); ++i) {
          HR_ASSIGN_OR_RETURN(Event e, ReadEvent(r, i, true, event_id_bits_));
          m.emplace(r.Int(i, 0), std::move(e));
        }
        return m;
      });
  if (!found.ok()) return found.status();
  for (size_t i = 0; i < ids.size(); ++i) {
    std::optional<int64_t> k = EventKeyFromId(ids[i], event_id_bits_);
    if (!k) continue;
    auto it = found->find(*k);
    if (it != found->end()) out[i] = it->second;
  }
  return out;
}

Result<EventPage> PostgresStore::ListEvents(const EventFilter& filter, const std::string& cursor,
                                            int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  std::optional<int64_t> after;
  if (!cursor.empty()) {
    after = EventKeyFromId(cursor, event_id_bits_);
    if (!after) return BadCursor();
  }
  PgParams p;
  std::string sql = std::string("SELECT ") + kEventColumns + " FROM events e WHERE true";
  if (after) sql += " AND e.id < " + p.Int(*after);
  if (filter.source) sql += " AND e.source = " + p.Text(*filter.source);
  // A time range is a key range (keys are time-ordered).
  if (filter.since) sql += " AND e.id >= " + p.Int(EventKeyFloor(*filter.since));
  if (filter.until) sql += " AND e.id < " + p.Int(EventKeyFloor(*filter.until));
  if (filter.status || filter.destination) {
    // Both set: one delivery must match both (a failed delivery *to* that destination).
    sql += " AND EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id";
    if (filter.status) {
      sql += " AND d.status = " + p.Text(DeliveryStatusName(*filter.status)) + " AND d.current";
    }
    if (filter.destination) sql += " AND d.destination = " + p.Text(*filter.destination);
    sql += ")";
  }
  sql += " ORDER BY e.id DESC LIMIT " + p.Int(limit + 1);  // one more: is there a next page?
  return WithConn<EventPage>([&](PgConn& db) -> Result<EventPage> {
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "list events"));
    EventPage page;
    std::vector<int64_t> keys;
    for (int i = 0; i < r.rows(); ++i) {
      if (static_cast<int>(page.items.size()) == limit) {
        page.next_cursor = page.items.back().id;
        break;
      }
      HR_ASSIGN_OR_RETURN(Event e, ReadEvent(r, i, false, event_id_bits_));
      keys.push_back(r.Int(i, 0));
      page.items.push_back(std::move(e));
    }
    if (keys.empty()) return page;
    // Each event's current deliveries, in one query for the page.
    PgParams q;
    const std::string cur_sql =
        "SELECT event_id, destination, status, chain FROM deliveries WHERE event_id = ANY (" +
        q.Text(ArrayLiteral(keys)) +
        "::bigint[]) AND current ORDER BY event_id, destination COLLATE \"C\"";
    HR_ASSIGN_OR_RETURN(PgResult cur, db.Exec(cur_sql, q, "current deliveries"));
    std::map<int64_t, std::vector<CurrentDelivery>> by_event;
    for (int i = 0; i < cur.rows(); ++i) {
      const std::string status = cur.Text(i, 2);
      std::optional<DeliveryStatus> parsed = ParseDeliveryStatus(status);
      if (!parsed) return Status::Internal("unknown delivery status in the database: " + status);
      by_event[cur.Int(i, 0)].push_back({cur.Text(i, 1), *parsed, static_cast<int>(cur.Int(i, 3))});
    }
    for (size_t i = 0; i < page.items.size(); ++i) {
      auto it = by_event.find(keys[i]);
      if (it != by_event.end()) page.items[i].current = std::move(it->second);
    }
    return page;
  });
}

Result<std::vector<Delivery>> PostgresStore::GetDeliveries(const std::string& event_id) {
  const std::optional<int64_t> key = EventKeyFromId(event_id, event_id_bits_);
  if (!key) return std::vector<Delivery>{};
  return WithConn<std::vector<Delivery>>([&](PgConn& db) -> Result<std::vector<Delivery>> {
    PgParams p;
    const std::string sql = std::string("SELECT ") + kDeliveryColumns +
                            " FROM deliveries WHERE event_id = " + p.Int(*key) + " ORDER BY id";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get deliveries of " + event_id));
    return ReadDeliveries(r, event_id_bits_);
  });
}

Result<std::vector<Attempt>> PostgresStore::GetAttempts(int64_t delivery_id) {
  return WithConn<std::vector<Attempt>>([&](PgConn& db) -> Result<std::vector<Attempt>> {
    // The delivery's event first: its key as a constant prunes the attempts to one partition
    // when the query is planned (with a subquery instead, every day's partition was planned and
    // pruned only when the plan ran: several times slower with a month of days).
    PgParams q;
    const std::string ev = "SELECT event_id FROM deliveries WHERE id = " + q.Int(delivery_id);
    HR_ASSIGN_OR_RETURN(PgResult e, db.Exec(ev, q, "get the event of a delivery"));
    if (e.rows() == 0) return std::vector<Attempt>{};
    PgParams p;
    const std::string sql =
        "SELECT delivery_id, n, started_at, duration_ms, status_code, error, retry_after, snippet,"
        " probe, counted FROM attempts WHERE delivery_id = " +
        p.Int(delivery_id) + " AND event_id = " + p.Int(e.Int(0, 0)) + " ORDER BY n";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get attempts"));
    std::vector<Attempt> out;
    for (int i = 0; i < r.rows(); ++i) {
      Attempt a;
      a.delivery_id = r.Int(i, 0);
      a.n = static_cast<int>(r.Int(i, 1));
      a.started_at = r.Time(i, 2);
      a.duration_ms = r.Int(i, 3);
      if (!r.IsNull(i, 4)) a.status_code = static_cast<int>(r.Int(i, 4));
      a.error = r.OptText(i, 5);
      a.retry_after = r.OptText(i, 6);
      a.response_snippet = r.Bytes(i, 7);
      a.probe = r.Bool(i, 8);
      a.counted = r.Bool(i, 9);
      out.push_back(std::move(a));
    }
    return out;
  });
}

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
      const Status& st = done.status();
      return st.code() == Status::Code::kInternal && failed_at + 1 == claim.size()
                 ? Status::Unavailable(st.message())
                 : st;
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

Result<std::optional<TimePoint>> PostgresStore::OldestDueAt(TimePoint now) {
  return EarliestScheduled("", now);
}

Result<int64_t> PostgresStore::CountDue(TimePoint now) {
  return WithConn<int64_t>([&](PgConn& db) -> Result<int64_t> {
    PgParams p;
    const std::string sql = "SELECT COUNT(*) FROM deliveries WHERE claim_at <= " + p.Time(now) +
                            " AND status = 'scheduled'";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "count due deliveries"));
    return r.Int(0, 0);
  });
}

Result<std::map<std::string, int64_t>> PostgresStore::CountDueByDestination(TimePoint now) {
  return WithConn<std::map<std::string, int64_t>>(
      [&](PgConn& db) -> Result<std::map<std::string, int64_t>> {
        PgParams p;
        const std::string sql =
            "SELECT destination, COUNT(*) FROM deliveries WHERE claim_at <= " + p.Time(now) +
            " AND status = 'scheduled' GROUP BY destination";
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "count due deliveries per destination"));
        std::map<std::string, int64_t> out;
        for (int i = 0; i < r.rows(); ++i) out[r.Text(i, 0)] = r.Int(i, 1);
        return out;
      });
}

Result<std::vector<StatsRow>> PostgresStore::GetStats(TimePoint since, TimePoint until) {
  return WithConn<std::vector<StatsRow>>([&](PgConn& db) -> Result<std::vector<StatsRow>> {
    PgParams p;
    const std::string sql =
        "SELECT minute, destination, received, delivered, failed, attempts, attempt_failures"
        " FROM stats_minute WHERE minute >= " +
        p.Int(UnixMinute(since)) + " AND minute < " +
        p.Int(UnixMinute(until + std::chrono::minutes(1) - Duration(1))) +
        " ORDER BY minute, destination COLLATE \"C\"";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "read stats"));
    std::vector<StatsRow> out;
    for (int i = 0; i < r.rows(); ++i) {
      StatsRow s;
      s.minute = r.Int(i, 0);
      s.destination = r.Text(i, 1);
      s.received = r.Int(i, 2);
      s.delivered = r.Int(i, 3);
      s.failed = r.Int(i, 4);
      s.attempts = r.Int(i, 5);
      s.attempt_failures = r.Int(i, 6);
      out.push_back(std::move(s));
    }
    return out;
  });
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
      " status_code, error, retry_after, snippet, probe, counted) SELECT " +
      id + "::bigint, u.event_id, " + n + "::integer, " + p.Time(attempt.started_at) +
      "::bigint, " + p.Int(attempt.duration_ms) + "::bigint, " +
      p.OptInt(attempt.status_code ? std::optional<int64_t>(*attempt.status_code) : std::nullopt) +
      "::integer, " + p.OptText(attempt.error) + "::text, " + p.OptText(attempt.retry_after) +
      "::text, " + p.Bytes(attempt.response_snippet) + "::bytea, " + p.Bool(attempt.probe) +
      "::boolean, " + counted +
      "::boolean FROM u)"
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

// ---------------------------------------------------------------------------------------------
// Breakers, pause and resume, replays, retention

Result<std::optional<policy::BreakerSnapshot>> PostgresStore::GetBreaker(
    const std::string& destination) {
  return WithConn<std::optional<policy::BreakerSnapshot>>(
      [&](PgConn& db) -> Result<std::optional<policy::BreakerSnapshot>> {
        PgParams p;
        const std::string sql =
            "SELECT state, consecutive_failures, trips, open_until, closed_since, probe_in_flight"
            " FROM breakers WHERE destination = " +
            p.Text(destination);
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get breaker of " + destination));
        if (r.rows() == 0) return std::optional<policy::BreakerSnapshot>();
        policy::BreakerSnapshot s;
        const std::string state = r.Text(0, 0);
        std::optional<policy::BreakerState> parsed = ParseBreakerStateName(state);
        if (!parsed) return Status::Internal("unknown breaker state in the database: " + state);
        s.state = *parsed;
        s.consecutive_failures = static_cast<int>(r.Int(0, 1));
        s.trips = static_cast<int>(r.Int(0, 2));
        s.open_until = r.OptTime(0, 3);
        s.closed_since = r.OptTime(0, 4);
        s.probe_in_flight = r.Bool(0, 5);
        return std::optional<policy::BreakerSnapshot>(s);
      });
}

Status PostgresStore::PutBreaker(const std::string& destination,
                                 const policy::BreakerSnapshot& snapshot) {
  return WithConn<Unit>([&](PgConn& db) -> Result<Unit> {
           PgParams p;
           const std::string sql =
               "INSERT INTO breakers (destination, state, consecutive_failures, trips,"
               " open_until, closed_since, probe_in_flight) VALUES (" +
               p.Text(destination) + ", " + p.Text(policy::BreakerStateName(snapshot.state)) +
               ", " + p.Int(snapshot.consecutive_failures) + ", " + p.Int(snapshot.trips) + ", " +
               p.OptTime(snapshot.open_until) + ", " + p.OptTime(snapshot.closed_since) + ", " +
               p.Bool(snapshot.probe_in_flight) +
               ") ON CONFLICT (destination) DO UPDATE SET state = excluded.state,"
               " consecutive_failures = excluded.consecutive_failures, trips = excluded.trips,"
               " open_until = excluded.open_until, closed_since = excluded.closed_since,"
               " probe_in_flight = excluded.probe_in_flight";
           HR_RETURN_IF_ERROR(db.Exec(sql, p, "store breaker of " + destination).status());
           return Unit{};
         })
      .status();
}

Result<int64_t> PostgresStore::PauseDeliveries(const std::string& destination,
                                               const std::string& reason) {
  const TimePoint now = clock_.Now();
  return WithConn<int64_t>(
      [&](PgConn& db) -> Result<int64_t> { return PauseScheduled(db, destination, reason, now); });
}

Result<int64_t> PostgresStore::ResumeDeliveries(const std::string& destination, TimePoint now) {
  return InTransaction<int64_t>([&](PgConn& db) -> Result<int64_t> {
    PgParams p;
    const std::string at = p.Time(now);
    const std::string sql = "UPDATE deliveries SET status = 'scheduled', next_attempt_at = " + at +
                            ", reason = NULL, updated_at = " + at +
                            " WHERE destination = " + p.Text(destination) +
                            " AND status = 'paused'";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "resume deliveries to " + destination));
    if (r.affected() > 0) HR_RETURN_IF_ERROR(NotifyOthers(db, kWorkChannel));
    return r.affected();
  });
}

// ---- Shared breaker and pause (one row of `breakers` per destination) ----

namespace {

constexpr char kControlColumns[] =
    "state, consecutive_failures, trips, open_until, closed_since, probe_in_flight,"
    " paused_reason, paused_since";

// The row's columns (kControlColumns) from `col`.
Result<DestinationControl> ReadControl(const PgResult& r, int row, int col) {
  DestinationControl c;
  const std::string state = r.Text(row, col);
  std::optional<policy::BreakerState> parsed = ParseBreakerStateName(state);
  if (!parsed) return Status::Internal("unknown breaker state in the database: " + state);
  c.breaker.state = *parsed;
  c.breaker.consecutive_failures = static_cast<int>(r.Int(row, col + 1));
  c.breaker.trips = static_cast<int>(r.Int(row, col + 2));
  c.breaker.open_until = r.OptTime(row, col + 3);
  c.breaker.closed_since = r.OptTime(row, col + 4);
  c.breaker.probe_in_flight = r.Bool(row, col + 5);
  if (std::optional<TimePoint> since = r.OptTime(row, col + 7)) {
    c.pause = DestinationPause{r.OptText(row, col + 6).value_or(""), *since};
  }
  return c;
}

// The destination's row, locked until the transaction ends (made first when there is none, so
// two nodes that find none still serialise on it).
Result<policy::BreakerSnapshot> LockBreakerRow(PgConn& db, const std::string& destination) {
  for (int pass = 0; pass < 2; ++pass) {
    PgParams p;
    const std::string sql = std::string("SELECT ") + kControlColumns +
                            " FROM breakers WHERE destination = " + p.Text(destination) +
                            " FOR UPDATE";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "lock breaker of " + destination));
    if (r.rows() > 0) {
      HR_ASSIGN_OR_RETURN(DestinationControl c, ReadControl(r, 0, 0));
      return c.breaker;
    }
    PgParams ins;
    const std::string insert =
        "INSERT INTO breakers (destination, state, consecutive_failures, trips,"
        " probe_in_flight) VALUES (" +
        ins.Text(destination) + ", 'closed', 0, 0, false) ON CONFLICT (destination) DO NOTHING";
    HR_RETURN_IF_ERROR(db.Exec(insert, ins, "create breaker of " + destination).status());
  }
  return Status::Internal("the breaker row of " + destination + " vanished while locked");
}

}  // namespace

Result<std::vector<policy::BreakerStep>> PostgresStore::UpdateBreaker(
    const std::string& destination, const policy::BreakerConfig& config,
    const std::vector<BreakerInputAt>& inputs) {
  if (inputs.empty()) return Status::InvalidArgument("no breaker inputs", "inputs");
  return InTransaction<std::vector<policy::BreakerStep>>(
      [&](PgConn& db) -> Result<std::vector<policy::BreakerStep>> {
        // The row lock serialises the nodes: each applies its inputs to what the last one wrote.
        HR_ASSIGN_OR_RETURN(policy::BreakerSnapshot before, LockBreakerRow(db, destination));
        std::vector<policy::BreakerStep> steps;
        steps.reserve(inputs.size());
        policy::BreakerSnapshot s = before;
        for (const BreakerInputAt& in : inputs) {
          steps.push_back(policy::ApplyBreakerInput(config, s, in.input, in.at));
          s = steps.back().after;
        }
        if (s == before) return steps;
        PgParams p;
        const std::string sql =
            "UPDATE breakers SET state = " + p.Text(policy::BreakerStateName(s.state)) +
            ", consecutive_failures = " + p.Int(s.consecutive_failures) +
            ", trips = " + p.Int(s.trips) + ", open_until = " + p.OptTime(s.open_until) +
            ", closed_since = " + p.OptTime(s.closed_since) +
            ", probe_in_flight = " + p.Bool(s.probe_in_flight) +
            " WHERE destination = " + p.Text(destination);
        HR_RETURN_IF_ERROR(db.Exec(sql, p, "update breaker of " + destination).status());
        return steps;
      });
}

Result<DestinationControl> PostgresStore::GetDestinationControl(const std::string& destination) {
  return WithConn<DestinationControl>([&](PgConn& db) -> Result<DestinationControl> {
    PgParams p;
    const std::string sql = std::string("SELECT ") + kControlColumns +
                            " FROM breakers WHERE destination = " + p.Text(destination);
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get control of " + destination));
    if (r.rows() == 0) return DestinationControl{};
    return ReadControl(r, 0, 0);
  });
}

Result<std::map<std::string, DestinationControl>> PostgresStore::ListDestinationControls() {
  return WithConn<std::map<std::string, DestinationControl>>(
      [&](PgConn& db) -> Result<std::map<std::string, DestinationControl>> {
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(std::string("SELECT destination, ") +
                                                    kControlColumns + " FROM breakers",
                                                "list destination controls"));
        std::map<std::string, DestinationControl> out;
        for (int i = 0; i < r.rows(); ++i) {
          HR_ASSIGN_OR_RETURN(DestinationControl c, ReadControl(r, i, 1));
          out.emplace(r.Text(i, 0), std::move(c));
        }
        return out;
      });
}

Result<int64_t> PostgresStore::PauseDestination(const std::string& destination,
                                                const std::string& reason, TimePoint now) {
  return InTransaction<int64_t>([&](PgConn& db) -> Result<int64_t> {
    {
      PgParams p;
      const std::string sql =
          "INSERT INTO breakers (destination, state, consecutive_failures, trips,"
          " probe_in_flight, paused_reason, paused_since) VALUES (" +
          p.Text(destination) + ", 'closed', 0, 0, false, " + p.Text(reason) + ", " + p.Time(now) +
          ") ON CONFLICT (destination) DO UPDATE SET paused_reason = excluded.paused_reason,"
          " paused_since = COALESCE(breakers.paused_since, excluded.paused_since)";
      HR_RETURN_IF_ERROR(db.Exec(sql, p, "pause " + destination).status());
    }
    return PauseScheduled(db, destination, reason, now);
  });
}

Result<int64_t> PostgresStore::ResumeDestination(const std::string& destination, TimePoint now) {
  return InTransaction<int64_t>([&](PgConn& db) -> Result<int64_t> {
    {
      PgParams p;
      const std::string sql =
          "UPDATE breakers SET paused_reason = NULL, paused_since = NULL WHERE destination = " +
          p.Text(destination);
      HR_RETURN_IF_ERROR(db.Exec(sql, p, "resume " + destination).status());
    }
    PgParams p;
    const std::string at = p.Time(now);
    const std::string sql = "UPDATE deliveries SET status = 'scheduled', next_attempt_at = " + at +
                            ", reason = NULL, updated_at = " + at +
                            " WHERE destination = " + p.Text(destination) +
                            " AND status = 'paused'";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "resume deliveries to " + destination));
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
        "SELECT COALESCE(MAX(chain), -1) + 1, (SELECT order_key FROM deliveries WHERE event_id = " +
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

Result<std::optional<Delivery>> PostgresStore::OrderHead(const std::string& destination,
                                                         const std::string& order_key) {
  return WithConn<std::optional<Delivery>>([&](PgConn& db) -> Result<std::optional<Delivery>> {
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

Result<int64_t> PostgresStore::PurgeEventsBefore(TimePoint cutoff, int batch) {
  if (batch <= 0) return int64_t{0};
  // The dashboard's counters are read for at most 7 days back: older minutes go with each pass.
  const int64_t stats_cutoff = UnixMinute(clock_.Now() - std::chrono::days(8));
  {
    // The partitions of today and tomorrow are made ahead (each pass, a no-op once they exist),
    // so appends seldom have to make one.
    const int64_t today = KeyDay(EventKeyFloor(clock_.Now()));
    HR_RETURN_IF_ERROR(WithConn<Unit>([&](PgConn& db) -> Result<Unit> {
                         HR_RETURN_IF_ERROR(EnsurePartitions(db, {today, today + 1}));
                         return Unit{};
                       }).status());
  }
  // Whole days first: a day past the cutoff none of whose events has an open delivery is dropped
  // (its partitions of events and attempts, and its deliveries). This may exceed `batch`.
  HR_ASSIGN_OR_RETURN(const int64_t dropped, DropExpiredPartitions(cutoff));
  // Then row by row, up to `batch`: the events before the cutoff in the day it falls in, and the
  // finished events of a day kept for an open delivery.
  HR_ASSIGN_OR_RETURN(
      const int64_t deleted, InTransaction<int64_t>([&](PgConn& db) -> Result<int64_t> {
        {
          PgParams p;
          const std::string sql = "DELETE FROM stats_minute WHERE minute < " + p.Int(stats_cutoff);
          HR_RETURN_IF_ERROR(db.Exec(sql, p, "purge old stats").status());
        }
        // Deliveries and attempts go with their events (deleted below). An event with a delivery
        // not final yet (scheduled, delivering, paused) is kept. Rows another transaction holds (a
        // replay starting) are skipped this time.
        //
        // Two statements, not one: a replay on another node locks the event's row, adds its chain
        // and commits. Had it committed after this statement's snapshot but before the row lock
        // below, a single DELETE would still judge the event by the old snapshot (no open delivery)
        // and take the new chain with it. The DELETE gets a new snapshot (READ COMMITTED) while
        // this transaction holds the rows: every replay that committed before the lock is seen, and
        // every later one waits for the lock and then finds the event gone (not found).
        std::string locked = "{";
        {
          PgParams p;
          const std::string sql =
              "SELECT e.id FROM events e WHERE e.id < " + p.Int(EventKeyFloor(cutoff)) +
              " AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id"
              " AND d.status IN ('scheduled', 'delivering', 'paused'))"
              " ORDER BY e.id LIMIT " +
              p.Int(batch) + " FOR UPDATE SKIP LOCKED";
          HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "lock events to purge"));
          if (r.rows() == 0) return int64_t{0};
          for (int i = 0; i < r.rows(); ++i) {
            if (i > 0) locked += ',';
            locked += std::to_string(r.Int(i, 0));
          }
        }
        locked += '}';
        // No foreign keys (partitions): the event's deliveries and attempts are deleted with it
        // here.
        PgParams p;
        const std::string keys = p.Text(locked);
        const std::string sql =
            "WITH e AS (DELETE FROM events e WHERE e.id = ANY(" + keys +
            "::bigint[]) AND NOT EXISTS (SELECT 1 FROM deliveries d"
            " WHERE d.event_id = e.id AND d.status IN ('scheduled', 'delivering', 'paused')) "
            "RETURNING e.id),"
            " d AS (DELETE FROM deliveries WHERE event_id IN (SELECT id FROM e)),"
            " a AS (DELETE FROM attempts WHERE event_id = ANY(" +
            keys +
            "::bigint[]) AND event_id IN (SELECT id FROM e))"
            " SELECT COUNT(*) FROM e";
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "purge events"));
        return r.Int(0, 0);  // the events only, not their deliveries and attempts
      }));
  return dropped + deleted;
}

Result<int64_t> PostgresStore::CountDeliveries(DeliveryStatus status) {
  return WithConn<int64_t>([&](PgConn& db) -> Result<int64_t> {
    PgParams p;
    const std::string sql =
        "SELECT COUNT(*) FROM deliveries WHERE status = " + p.Text(DeliveryStatusName(status)) +
        " AND current";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "count deliveries"));
    return r.Int(0, 0);
  });
}

// ---------------------------------------------------------------------------------------------
// Audit

Status PostgresStore::AppendAudit(const AuditEntry& entry) {
  if (entry.action.empty()) return Status::InvalidArgument("audit action is empty", "action");
  return WithConn<Unit>([&](PgConn& db) -> Result<Unit> {
           HR_RETURN_IF_ERROR(InsertAudit(db, entry));
           return Unit{};
         })
      .status();
}

Result<AuditPage> PostgresStore::ListAudit(const std::string& cursor, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  // The cursor is the id of the last entry of the previous page, in decimal.
  int64_t before = std::numeric_limits<int64_t>::max();
  if (!cursor.empty()) {
    const char* end = cursor.data() + cursor.size();
    auto [ptr, ec] = std::from_chars(cursor.data(), end, before);
    if (ec != std::errc() || ptr != end || before <= 0) return BadCursor();
  }
  return WithConn<AuditPage>([&](PgConn& db) -> Result<AuditPage> {
    PgParams p;
    const std::string sql =
        "SELECT id, at, actor, action, target, count, detail FROM audit WHERE id < " +
        p.Int(before) + " ORDER BY id DESC LIMIT " + p.Int(limit + 1);
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "list audit"));
    AuditPage page;
    for (int i = 0; i < r.rows(); ++i) {
      if (static_cast<int>(page.items.size()) == limit) {
        page.next_cursor = std::to_string(page.items.back().id);
        break;
      }
      AuditEntry e;
      e.id = r.Int(i, 0);
      e.at = r.Time(i, 1);
      e.actor = r.Text(i, 2);
      e.action = r.Text(i, 3);
      e.target = r.Text(i, 4);
      e.count = r.Int(i, 5);
      e.detail = r.Text(i, 6);
      page.items.push_back(std::move(e));
    }
    return page;
  });
}

// ---------------------------------------------------------------------------------------------
// Rejected requests

Status PostgresStore::AppendRejections(const std::vector<Rejection>& rejections,
                                       int keep_per_source) {
  HR_RETURN_IF_ERROR(CheckRejections(rejections, keep_per_source));
  if (rejections.empty()) return Status::Ok();
  return InTransaction<Unit>([&](PgConn& db) -> Result<Unit> {
           PgParams p;
           std::string sql =
               "INSERT INTO rejections (source, received_at, reason, message, headers, size,"
               " sha256, remote_addr) VALUES ";
           std::set<std::string> sources;
           for (size_t i = 0; i < rejections.size(); ++i) {
             const Rejection& x = rejections[i];
             sql += (i ? ", (" : "(") + p.Text(x.source) + ", " + p.Time(x.received_at) + ", " +
                    p.Text(x.reason) + ", " + p.Text(x.message) + ", " +
                    p.Bytes(EncodeHeaders(x.headers)) + ", " + p.Int(x.size) + ", " +
                    p.Text(x.sha256) + ", " + p.Text(x.remote_addr) + ")";
             sources.insert(x.source);
           }
           HR_RETURN_IF_ERROR(db.Exec(sql, p, "append rejections").status());
           for (const std::string& source : sources) {
             // The newest row past the ones kept: it and every older one of the source go.
             PgParams q;
             const std::string s = q.Text(source);
             const std::string del = "DELETE FROM rejections WHERE source = " + s +
                                     " AND id <= (SELECT id FROM rejections WHERE source = " + s +
                                     " ORDER BY id DESC LIMIT 1 OFFSET " + q.Int(keep_per_source) +
                                     ")";
             HR_RETURN_IF_ERROR(db.Exec(del, q, "prune rejections").status());
           }
           return Unit{};
         })
      .status();
}

Result<RejectionPage> PostgresStore::ListRejections(const std::string& source,
                                                    const std::string& cursor, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  // The cursor is the id of the last row of the previous page, in decimal.
  int64_t before = std::numeric_limits<int64_t>::max();
  if (!cursor.empty()) {
    const char* end = cursor.data() + cursor.size();
    auto [ptr, ec] = std::from_chars(cursor.data(), end, before);
    if (ec != std::errc() || ptr != end || before <= 0) return BadCursor();
  }
  return WithConn<RejectionPage>([&](PgConn& db) -> Result<RejectionPage> {
    PgParams p;
    const std::string sql =
        "SELECT id, source, received_at, reason, message, headers, size, sha256, remote_addr"
        " FROM rejections WHERE source = " +
        p.Text(source) + " AND id < " + p.Int(before) + " ORDER BY id DESC LIMIT " +
        p.Int(limit + 1);
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "list rejections"));
    RejectionPage page;
    for (int i = 0; i < r.rows(); ++i) {
      if (static_cast<int>(page.items.size()) == limit) {
        page.next_cursor = std::to_string(page.items.back().id);
        break;
      }
      Rejection x;
      x.id = r.Int(i, 0);
      x.source = r.Text(i, 1);
      x.received_at = r.Time(i, 2);
      x.reason = r.Text(i, 3);
      x.message = r.Text(i, 4);
      HR_ASSIGN_OR_RETURN(x.headers, DecodeHeaders(r.Bytes(i, 5)));
      x.size = r.Int(i, 6);
      x.sha256 = r.Text(i, 7);
      x.remote_addr = r.Text(i, 8);
      page.items.push_back(std::move(x));
    }
    return page;
  });
}

Result<int64_t> PostgresStore::PurgeRejectionsBefore(TimePoint cutoff, int batch) {
  if (batch <= 0) return int64_t{0};
  return WithConn<int64_t>([&](PgConn& db) -> Result<int64_t> {
    PgParams p;
    const std::string sql =
        "DELETE FROM rejections WHERE id IN (SELECT id FROM rejections WHERE received_at < " +
        p.Time(cutoff) + " ORDER BY received_at LIMIT " + p.Int(batch) + ")";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "purge rejections"));
    return r.affected();
  });
}

// ---------------------------------------------------------------------------------------------
// Bulk replay jobs

Status PostgresStore::CreateReplayJob(const ReplayJob& job) {
  if (job.id.empty()) return Status::InvalidArgument("replay job id is empty", "id");
  const TimePoint now = clock_.Now();
  return InTransaction<Unit>([&](PgConn& db) -> Result<Unit> {
           PgParams p;
           const std::string sql =
               "INSERT INTO replays (id, created_at, updated_at, filter, rate, state, total, done,"
               " failed, cursor, error, lease_until, lease_owner, waiting) VALUES (" +
               p.Text(job.id) + ", " + p.Time(job.created_at) + ", " + p.Time(now) + ", " +
               p.Text(job.filter) + ", " + p.Double(job.rate) + ", " +
               p.Text(ReplayJobStateName(job.state)) + ", " + p.Int(job.total) + ", " +
               p.Int(job.done) + ", " + p.Int(job.failed) + ", " + p.Text(job.cursor) + ", " +
               p.OptText(job.error) + ", " + p.OptTime(job.lease_until) + ", " +
               p.Text(job.lease_owner) + ", " + p.OptText(job.waiting) +
               ") ON CONFLICT (id) DO NOTHING";
           HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "create replay job " + job.id));
           if (r.affected() == 0) {
             return Status::FailedPrecondition("replay job " + job.id + " already exists");
           }
           HR_RETURN_IF_ERROR(NotifyOthers(db, kReplaysChannel));
           return Unit{};
         })
      .status();
}

Result<std::optional<ReplayJob>> PostgresStore::GetReplayJob(const std::string& id) {
  return WithConn<std::optional<ReplayJob>>(
      [&](PgConn& db) -> Result<std::optional<ReplayJob>> { return SelectReplayJob(db, id); });
}

Result<ReplayJobPage> PostgresStore::ListReplayJobs(const std::string& cursor, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  // Job ids are ULIDs (time-ordered); the cursor is the last id of the previous page.
  if (!cursor.empty() && !IsUlid(cursor)) return BadCursor();
  return WithConn<ReplayJobPage>([&](PgConn& db) -> Result<ReplayJobPage> {
    PgParams p;
    std::string sql = std::string("SELECT ") + kReplayJobColumns + " FROM replays";
    if (!cursor.empty()) sql += " WHERE id COLLATE \"C\" < " + p.Text(cursor);
    sql += " ORDER BY id COLLATE \"C\" DESC LIMIT " + p.Int(limit + 1);
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "list replay jobs"));
    ReplayJobPage page;
    for (int i = 0; i < r.rows(); ++i) {
      if (static_cast<int>(page.items.size()) == limit) {
        page.next_cursor = page.items.back().id;
        break;
      }
      HR_ASSIGN_OR_RETURN(ReplayJob j, ReadReplayJob(r, i));
      page.items.push_back(std::move(j));
    }
    return page;
  });
}

Result<std::optional<ReplayJob>> PostgresStore::ClaimReplayJob(TimePoint now, Duration lease,
                                                               const std::string& owner) {
  return WithConn<std::optional<ReplayJob>>([&](PgConn& db) -> Result<std::optional<ReplayJob>> {
    PgParams p;
    const std::string at = p.Time(now);
    std::string columns;
    for (std::string_view rest = kReplayJobColumns; !rest.empty();) {
      const size_t comma = rest.find(',');
      std::string_view col = rest.substr(0, comma);
      while (!col.empty() && col.front() == ' ') col.remove_prefix(1);
      columns += (columns.empty() ? "r." : ", r.") + std::string(col);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    const std::string sql =
        "WITH c AS (SELECT id FROM replays WHERE state = 'queued' OR (state = 'running' AND"
        " (lease_until IS NULL OR lease_until <= " +
        at +
        "))"
        " ORDER BY created_at, id COLLATE \"C\" LIMIT 1 FOR UPDATE SKIP LOCKED)"
        " UPDATE replays r SET state = 'running', lease_until = " +
        p.Time(now + lease) + ", lease_owner = " + p.Text(owner) + ", updated_at = " + at +
        " FROM c WHERE r.id = c.id RETURNING " + columns;
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "claim a replay job"));
    if (r.rows() == 0) return std::optional<ReplayJob>();
    HR_ASSIGN_OR_RETURN(ReplayJob j, ReadReplayJob(r, 0));
    return std::optional<ReplayJob>(std::move(j));
  });
}

Status PostgresStore::UpdateReplayJob(const ReplayJob& job, const std::string& owner) {
  const TimePoint now = clock_.Now();
  return InTransaction<Unit>([&](PgConn& db) -> Result<Unit> {
           PgParams q;
           const std::string sel =
               "SELECT state, lease_owner FROM replays WHERE id = " + q.Text(job.id) +
               " FOR UPDATE";
           HR_ASSIGN_OR_RETURN(PgResult cur, db.Exec(sel, q, "get replay job " + job.id));
           if (cur.rows() == 0) return Status::NotFound("no replay job " + job.id);
           if (cur.Text(0, 0) != "running" || cur.Text(0, 1) != owner) {
             return Status::FailedPrecondition("replay job " + job.id + " is " + cur.Text(0, 0) +
                                               " and not leased by " + owner);
           }
           const bool final = IsFinal(job.state);
           PgParams p;
           const std::string sql =
               "UPDATE replays SET state = " + p.Text(ReplayJobStateName(job.state)) +
               ", total = " + p.Int(job.total) + ", done = " + p.Int(job.done) +
               ", failed = " + p.Int(job.failed) + ", cursor = " + p.Text(job.cursor) +
               ", error = " + p.OptText(job.error) +
               ", lease_until = " + p.OptTime(final ? std::nullopt : job.lease_until) +
               ", lease_owner = " + p.Text(final ? std::string() : owner) +
               ", updated_at = " + p.Time(now) +
               ", waiting = " + p.OptText(final ? std::nullopt : job.waiting) +
               " WHERE id = " + p.Text(job.id);
           HR_RETURN_IF_ERROR(db.Exec(sql, p, "update replay job " + job.id).status());
           return Unit{};
         })
      .status();
}

Result<std::optional<ReplayJob>> PostgresStore::CancelReplayJob(const std::string& id,
                                                                TimePoint now) {
  return InTransaction<std::optional<ReplayJob>>(
      [&](PgConn& db) -> Result<std::optional<ReplayJob>> {
        PgParams p;
        const std::string sql =
            "UPDATE replays SET state = 'cancelled', lease_until = NULL, lease_owner = '',"
            " waiting = NULL, updated_at = " +
            p.Time(now) + " WHERE id = " + p.Text(id) + " AND state IN ('queued', 'running')";
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "cancel replay job " + id));
        // The node running it (maybe another) stops at once rather than at its next wake-up.
        if (r.affected() > 0) HR_RETURN_IF_ERROR(NotifyOthers(db, kReplaysChannel));
        return SelectReplayJob(db, id);
      });
}

// ---------------------------------------------------------------------------------------------
// Catalog

Result<std::vector<CatalogObject>> PostgresStore::ListCatalog() {
  return WithConn<std::vector<CatalogObject>>(
      [&](PgConn& db) -> Result<std::vector<CatalogObject>> {
        HR_ASSIGN_OR_RETURN(
            PgResult r,
            db.Exec("SELECT kind, name, spec, origin, created_at, updated_at FROM catalog"
                    " ORDER BY seq",
                    "list catalog"));
        std::vector<CatalogObject> out;
        for (int i = 0; i < r.rows(); ++i) {
          CatalogObject o;
          const std::string kind = r.Text(i, 0);
          if (kind == "destination") {
            o.kind = CatalogKind::kDestination;
          } else if (kind == "route") {
            o.kind = CatalogKind::kRoute;
          }
          o.name = r.Text(i, 1);
          o.spec = r.Text(i, 2);
          o.origin = r.Text(i, 3);
          o.created_at = r.Time(i, 4);
          o.updated_at = r.Time(i, 5);
          out.push_back(std::move(o));
        }
        return out;
      });
}

Status PostgresStore::ApplyCatalogChange(const CatalogChange& change) {
  HR_RETURN_IF_ERROR(CheckCatalogChange(change));
  const TimePoint now = clock_.Now();
  return InTransaction<Unit>([&](PgConn& db) -> Result<Unit> {
           {
             // The catalog's version, raised with the change. The row stays locked until
             // COMMIT, so changes from several nodes take their versions in turn and a change
             // made against an older version is refused (if_version).
             HR_ASSIGN_OR_RETURN(
                 PgResult v,
                 db.Exec("INSERT INTO store_meta (key, value) VALUES ('catalog_version', 1)"
                         " ON CONFLICT (key) DO UPDATE SET value = store_meta.value + 1"
                         " RETURNING value",
                         "raise the catalog version"));
             const int64_t version = v.Int(0, 0);
             if (change.if_version && *change.if_version != version - 1) {
               return CatalogChangedMeanwhile(*change.if_version, version - 1);
             }
           }
           if (!change.require_no_open_deliveries.empty()) {
             // No delivery may be created or reopened between the check and the commit (a
             // replay on another node): SHARE mode lets readers on, holds writers of deliveries
             // for this short transaction.
             HR_RETURN_IF_ERROR(db.Script("LOCK TABLE deliveries IN SHARE MODE",
                                          "hold deliveries for a catalog change"));
           }
           for (const std::string& destination : change.require_no_open_deliveries) {
             PgParams p;
             const std::string sql =
                 "SELECT COUNT(*) FROM deliveries WHERE destination = " + p.Text(destination) +
                 " AND status IN ('scheduled', 'delivering', 'paused')";
             HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "count open deliveries"));
             if (const int64_t open = r.Int(0, 0); open > 0) {
               return Status::FailedPrecondition(
                   "destination \"" + destination + "\" has " + std::to_string(open) +
                   " deliveries that are not delivered or failed yet");
             }
           }
           for (const auto& [kind, name] : change.remove) {
             PgParams p;
             const std::string sql =
                 "DELETE FROM catalog WHERE kind = " + p.Text(CatalogKindName(kind)) +
                 " AND name = " + p.Text(name);
             HR_RETURN_IF_ERROR(db.Exec(sql, p, "delete catalog object " + name).status());
             if (kind == CatalogKind::kDestination && !PutsDestination(change, name)) {
               // Its breaker and pause go with it: a destination made again under this name
               // starts closed and unpaused.
               PgParams b;
               const std::string forget =
                   "DELETE FROM breakers WHERE destination = " + b.Text(name);
               HR_RETURN_IF_ERROR(db.Exec(forget, b, "forget the breaker of " + name).status());
             }
           }
           for (const CatalogObject& o : change.put) {
             PgParams p;
             const std::string at = p.Time(now);
             const std::string sql =
                 "INSERT INTO catalog (kind, name, spec, origin, created_at, updated_at) VALUES (" +
                 p.Text(CatalogKindName(o.kind)) + ", " + p.Text(o.name) + ", " + p.Text(o.spec) +
                 ", " + p.Text(o.origin) + ", " + at + ", " + at +
                 ") ON CONFLICT (kind, name) DO UPDATE SET spec = excluded.spec,"
                 " origin = excluded.origin, updated_at = excluded.updated_at";
             HR_RETURN_IF_ERROR(db.Exec(sql, p, "write catalog object " + o.name).status());
           }
           if (change.audit) HR_RETURN_IF_ERROR(InsertAudit(db, *change.audit));
           HR_RETURN_IF_ERROR(NotifyOthers(db, kCatalogChannel));
           return Unit{};
         })
      .status();
}

Result<int64_t> PostgresStore::CatalogVersion() {
  return WithConn<int64_t>([&](PgConn& db) -> Result<int64_t> {
    HR_ASSIGN_OR_RETURN(PgResult r,
                        db.Exec("SELECT value FROM store_meta WHERE key = 'catalog_version'",
                                "read the catalog version"));
    return r.rows() == 0 ? int64_t{0} : r.Int(0, 0);
  });
}

// ---------------------------------------------------------------------------------------------
// Several nodes: notifications and readiness

pg::PgStatement PostgresStore::NotifyStatement(std::string_view channel) const {
  PgParams p;
  std::string sql = "SELECT pg_notify(" + p.Text(channel) + ", " + p.Text(notify_token_) + ")";
  return {std::move(sql), std::move(p), "notify the other nodes"};
}

Status PostgresStore::NotifyOthers(PgConn& db, std::string_view channel) {
  pg::PgStatement st = NotifyStatement(channel);
  return db.Exec(st.sql, st.params, st.what).status();
}

void PostgresStore::Watch(ChangeCallback on_change) {
  MutexLock lock(listen_mu_);
  if (listener_ || !on_change) return;
  pg::PgListener::Options o;
  o.url = options_.url;
  o.display = options_.display;
  o.channels = {std::string(kWorkChannel), std::string(kCatalogChannel),
                std::string(kReplaysChannel)};
  o.own_payload = notify_token_;
  listener_ = std::make_unique<pg::PgListener>(
      std::move(o), [cb = std::move(on_change)](std::string_view channel) {
        if (channel.empty() || channel == kWorkChannel) cb(Change::kNewWork);
        if (channel.empty() || channel == kCatalogChannel) cb(Change::kCatalog);
        if (channel.empty() || channel == kReplaysChannel) cb(Change::kReplayJobs);
      });
}

void PostgresStore::Unwatch() {
  std::unique_ptr<pg::PgListener> listener;
  {
    MutexLock lock(listen_mu_);
    listener = std::move(listener_);
  }
  listener.reset();  // joins its thread, outside listen_mu_ (CheckReady takes it)
}

Status PostgresStore::CheckReady() {
  Status st = Status::Ok();
  std::optional<Status> down;
  {
    MutexLock lock(listen_mu_);
    if (listener_) down = listener_->Down();
  }
  if (down) {
    st = *down;
  } else {
    // A pooled connection the server ended while idle fails once (and empties the pool): that
    // says nothing about now, so a lost connection is probed again on a new one.
    for (int attempt = 0; attempt < 2; ++attempt) {
      st = WithConn<Unit>([](PgConn& db) -> Result<Unit> {
             HR_RETURN_IF_ERROR(db.Exec("SELECT 1", "readiness probe").status());
             return Unit{};
           }).status();
      if (st.code() != Status::Code::kUnavailable) break;
    }
  }
  const std::string reason = st.ok() ? std::string() : pg::PublicFailureReason(st.message());
  {
    MutexLock lock(listen_mu_);
    if (reason != last_ready_reason_) {
      if (st.ok()) {
        spdlog::info("readiness: PostgreSQL at {} answers again", options_.display);
      } else {
        spdlog::warn("readiness: not ready: {} ({})", reason, st.message());
      }
      last_ready_reason_ = reason;
    }
  }
  if (st.ok()) return st;
  return Status::Unavailable(reason + "; reconnecting by itself (details in the log)");
}

}  // namespace hookrelay::store
