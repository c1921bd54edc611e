#include "store/postgres/postgres_store.h"

#include <spdlog/spdlog.h>

#include <thread>
#include <utility>

#include "common/crypto.h"
#include "store/event_id.h"
#include "store/postgres/migrations.h"
#include "store/postgres/statements.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;
using pg_store::kCatalogChannel;
using pg_store::kReplaysChannel;
using pg_store::kWorkChannel;
using pg_store::Unit;

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
  if (!s->options_.migrate) {
    HR_ASSIGN_OR_RETURN(const int version, pg::ReadSchemaVersion(*db));
    const int latest = pg::SchemaMigrations().back().version;
    if (version < latest) {
      return Status::FailedPrecondition(
          "PostgreSQL database " + s->options_.display + " has schema version " +
          std::to_string(version) + " and this build needs " + std::to_string(latest) +
          "; [store] migrate = \"manual\": run `hookrelay migrate` (see its --dry-run) first");
    }
  }
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
