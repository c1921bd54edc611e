#include "store/sqlite/migrations.h"

#include <optional>
#include <string>

namespace hookrelay::store::sqlite {
namespace {

// Times are INTEGER Unix milliseconds; statuses are the names DeliveryStatusName() returns, so the
// database reads well in the sqlite3 shell.
constexpr Migration kMigrations[] = {
    {1, "baseline: the first released schema", R"sql(
-- Events are keyed by a store-assigned, time-ordered integer (store/event_id.h): the received
-- millisecond << 12 plus a sequence. It is the rowid, so fetching an event by id, listing pages
-- and time ranges (since/until, retention) are all ranges of the table itself: no index exists
-- only to map an id or a receive time to the row. received_at is the key's millisecond (a receive
-- time that never goes back, even when the clock steps back), so a time range is a key range.
-- Values chosen once, when the database is created. 'event_id_bits': 64 random bits that every
-- event id of this store carries (store/event_id.h), so that two data directories never give the
-- same id (webhook-id) to events received in the same millisecond. Written at the first open.
CREATE TABLE store_meta (
  key TEXT PRIMARY KEY NOT NULL,
  value INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  source TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  content_type TEXT NOT NULL,
  size INTEGER NOT NULL,
  dedup_key TEXT,
  headers BLOB NOT NULL,
  -- Last on purpose: a column after a large body would make every list query walk the body's
  -- overflow pages to reach it. Lists never read this column.
  body BLOB NOT NULL
);
-- Dedup lookups (same source and key, within the window: a key range of the rowid each entry
-- carries). Partial: sources that use no dedup write nothing here.
CREATE INDEX events_dedup ON events(source, dedup_key) WHERE dedup_key IS NOT NULL;

-- One row per delivery (one event to one destination, one chain). Claims are not written here:
-- the data directory belongs to one process, which keeps its leases in memory.
--
-- A new delivery due at once is 'pending' (shown as "scheduled"): no index covers it, so an
-- ingested event with one route writes three B-trees (events, deliveries, deliveries_event). The
-- store finds a destination's pending deliveries by walking this table's rowid order from a
-- frontier it keeps in memory (the lowest pending rowid, found at open). A delivery waiting for a
-- retry ('scheduled', with next_attempt_at) or paused enters the partial index deliveries_waiting.
CREATE TABLE deliveries (
  id INTEGER PRIMARY KEY,
  event_id INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  destination TEXT NOT NULL,
  chain INTEGER NOT NULL DEFAULT 0,
  -- 1 for the latest chain of its (event, destination): a replay supersedes the chains before it,
  -- which stay as history. "A delivery's status" is that of its current chain.
  current INTEGER NOT NULL DEFAULT 1,
  status TEXT NOT NULL
    CHECK (status IN ('pending', 'scheduled', 'delivered', 'failed', 'paused')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  next_attempt_at INTEGER NOT NULL,
  deadline INTEGER,
  first_failure_at INTEGER,
  last_delay_ms INTEGER NOT NULL DEFAULT 0,
  reason TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- An event's deliveries, the ON DELETE CASCADE from events, and the next replay chain number.
CREATE INDEX deliveries_event ON deliveries(event_id, destination, chain);
-- Deliveries waiting for a retry or paused, per destination in due order: claims, NextDueAt, the
-- due counts, pause/resume. Partial: ingest never writes it (queries repeat its WHERE term so the
-- planner may use it).
CREATE INDEX deliveries_waiting ON deliveries(destination, status, next_attempt_at)
  WHERE status IN ('scheduled', 'paused');
-- Only superseded chains (replays are rare next to ingest, which never writes this index): a
-- count of current deliveries in a status is the status count minus this one.
CREATE INDEX deliveries_superseded ON deliveries(status) WHERE current = 0;

CREATE TABLE attempts (
  delivery_id INTEGER NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
  n INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  status_code INTEGER,
  error TEXT,
  retry_after TEXT,
  snippet BLOB NOT NULL,
  PRIMARY KEY (delivery_id, n)
);

CREATE TABLE breakers (
  destination TEXT PRIMARY KEY NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('closed', 'open', 'half_open')),
  consecutive_failures INTEGER NOT NULL,
  trips INTEGER NOT NULL,
  open_until INTEGER,
  closed_since INTEGER,
  probe_in_flight INTEGER NOT NULL
);

-- Who did what through the management API. AUTOINCREMENT: ids are never reused, even after the
-- newest entries are deleted, so a cursor (the last id seen) never points at a different entry.
CREATE TABLE audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  count INTEGER NOT NULL,
  detail TEXT NOT NULL
);

-- POST /api/v1/replays: one row per job; any node claims a queued job (or one whose lease
-- expired) and records its progress here.
CREATE TABLE replays (
  id TEXT PRIMARY KEY NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  filter TEXT NOT NULL,
  rate REAL NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'cancelled', 'failed')),
  total INTEGER NOT NULL DEFAULT 0,
  done INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  cursor TEXT NOT NULL DEFAULT '',
  error TEXT,
  lease_until INTEGER,
  lease_owner TEXT NOT NULL DEFAULT '',
  -- Why the job cannot make progress now (JSON), shown with the job.
  waiting TEXT
);
-- Claims look at unfinished jobs only, oldest first.
CREATE INDEX replays_open ON replays(state, created_at) WHERE state IN ('queued', 'running');

-- Sources, destinations and routes as written (JSON, secrets included), so objects created
-- through the API survive a restart. The config file's objects are rewritten at every start
-- (origin 'config'). seq keeps the order objects were first written in (route order).
CREATE TABLE catalog (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('source', 'destination', 'route')),
  name TEXT NOT NULL,
  spec TEXT NOT NULL,
  origin TEXT NOT NULL CHECK (origin IN ('config', 'api')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (kind, name)
);

-- Counts per minute (Unix minutes) and destination ('' for events received), summed in memory
-- over a write batch and written once per key at its commit, so GET /api/v1/stats reads at most
-- one row per minute and destination instead of scanning events.
CREATE TABLE stats_minute (
  minute INTEGER NOT NULL,
  destination TEXT NOT NULL,
  received INTEGER NOT NULL DEFAULT 0,
  delivered INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  attempt_failures INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (minute, destination)
) WITHOUT ROWID;
)sql"},
    {2, "destination pause in the store: paused_reason, paused_since on breakers", R"sql(
-- A destination paused by the operator or by a 410 Gone (DestinationPause): durable, so the pause
-- survives a restart (before, it lived in the engine's memory and a restart forgot it, leaving
-- the paused deliveries stranded). Paused iff paused_since is not NULL. The row holds the
-- destination's breaker too (a closed one when only the pause was written).
ALTER TABLE breakers ADD COLUMN paused_reason TEXT;
ALTER TABLE breakers ADD COLUMN paused_since INTEGER;
)sql"},
    {3, "rejected requests: rejections", R"sql(
-- Requests to /in/{source} refused because they failed verification (Store::AppendRejections):
-- never their bodies. Bounded: each append keeps only the newest rows of each source, retention
-- deletes rows past their age. AUTOINCREMENT: ids are never reused, so a cursor (the last id
-- seen) never points at another row after the newest ones were pruned.
CREATE TABLE rejections (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  reason TEXT NOT NULL,
  message TEXT NOT NULL,
  headers BLOB NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  remote_addr TEXT NOT NULL
);
-- A source's page, newest first, and its pruning to the newest N.
CREATE INDEX rejections_source ON rejections(source, id);
-- Retention by age.
CREATE INDEX rejections_received ON rejections(received_at);
)sql"},
    {4, "ordered delivery: order_key on deliveries, the index of the ordered queues", R"sql(
-- Ordered delivery (docs/delivery.md): NULL for an unordered delivery; '' for a destination
-- ordered as a whole; else the key's value. A delivery with a key is claimed only while it is the
-- head of its queue: the lowest id among the deliveries of its (destination, order_key) that are
-- not final. The partial index holds those only, so unordered deliveries never write it and a
-- delivery leaves it when it is delivered or fails for good (which lets the next one go).
ALTER TABLE deliveries ADD COLUMN order_key TEXT;
CREATE INDEX deliveries_ordered ON deliveries(destination, order_key, id)
  WHERE order_key IS NOT NULL AND status IN ('pending', 'scheduled', 'paused');
)sql"},
    {5, "breaker probes: probe, counted on attempts, uncounted_attempts on deliveries", R"sql(
-- A failed half-open probe is recorded as an attempt (probe = 1) that does not count toward the
-- delivery's max_attempts (counted = 0); deliveries.attempts counts the counted ones only, and
-- uncounted_attempts the others (the next attempt's n is their sum + 1).
ALTER TABLE attempts ADD COLUMN probe INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN counted INTEGER NOT NULL DEFAULT 1;
ALTER TABLE deliveries ADD COLUMN uncounted_attempts INTEGER NOT NULL DEFAULT 0;
)sql"},
    {6, "routing: type, routed and route_misses on events (the table rebuilt, body kept last)",
     R"sql(
-- An event's type (NULL: none), whether a route took it at ingest, and the routes that did not
-- with their reasons (row_codec's blob; NULL: none). ADD COLUMN would put them after the body,
-- and every list would then walk a large body's overflow pages to read them: the table is
-- rebuilt instead, with the body last again. Runs with foreign keys off (the store turns them on
-- after the migrations), so dropping the old table does not cascade to the deliveries.
CREATE TABLE events_v6 (
  id INTEGER PRIMARY KEY,
  source TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  content_type TEXT NOT NULL,
  size INTEGER NOT NULL,
  dedup_key TEXT,
  headers BLOB NOT NULL,
  type TEXT,
  routed INTEGER NOT NULL DEFAULT 1,
  route_misses BLOB,
  body BLOB NOT NULL
);
INSERT INTO events_v6 (id, source, received_at, content_type, size, dedup_key, headers, body)
  SELECT id, source, received_at, content_type, size, dedup_key, headers, body FROM events;
DROP TABLE events;
ALTER TABLE events_v6 RENAME TO events;
CREATE INDEX events_dedup ON events(source, dedup_key) WHERE dedup_key IS NOT NULL;
)sql"},
    {7, "transforms: sent_size, sent_sha256, headers_changed on attempts", R"sql(
-- What a transform made an attempt send (NULL when no transform ran): the body's size and
-- SHA-256, and the names of the headers it added, changed or removed.
ALTER TABLE attempts ADD COLUMN sent_size INTEGER;
ALTER TABLE attempts ADD COLUMN sent_sha256 TEXT;
ALTER TABLE attempts ADD COLUMN headers_changed TEXT;
)sql"},
    {8, "api tokens: api_tokens (name, SHA-256, role, expiry, last use)", R"sql(
-- Named API tokens (docs/access.md): only each token's SHA-256 is kept. "bootstrap" is the row of
-- HOOKRELAY_TOKEN (hash empty: that token is checked in memory), revoked in place.
CREATE TABLE api_tokens (
  name TEXT PRIMARY KEY,
  hash TEXT NOT NULL,
  role TEXT NOT NULL,
  scope TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  created_by TEXT NOT NULL DEFAULT '',
  last_used_at INTEGER,
  last_used_addr TEXT NOT NULL DEFAULT '',
  revoked INTEGER NOT NULL DEFAULT 0
);
)sql"},
    {9, "secrets at rest: data_keys (the data key, wrapped by each master key)", R"sql(
-- The data key the catalog's secrets are encrypted under, wrapped by a master key: one row per
-- master key that may open the store (two while a master key is rotated). docs/secrets.md.
CREATE TABLE data_keys (
  master_key_id TEXT PRIMARY KEY,
  wrapped TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
)sql"},
};

Status RecordVersion(Connection& db, const Migration& m, TimePoint now, const std::string& what) {
  HR_RETURN_IF_ERROR(db.ExecScript("PRAGMA user_version = " + std::to_string(m.version), what));
  Result<Statement> ins = db.Prepare(
      "INSERT INTO schema_migrations(version, applied_at, description) VALUES (?1, ?2, ?3)");
  if (!ins.ok()) return ins.status();
  return ins->BindInt(1, m.version)
      .BindTime(2, now)
      .BindText(3, m.description)
      .Exec("record " + what);
}

Result<int64_t> QueryInt(Connection& db, const std::string& sql) {
  Result<Statement> q = db.Prepare(sql);
  if (!q.ok()) return q.status();
  Result<bool> row = q->Step(sql);
  if (!row.ok()) return row.status();
  return *row ? q->Int(0) : int64_t{0};
}

}  // namespace

std::span<const Migration> SchemaMigrations() { return kMigrations; }

Result<int> SchemaVersion(Connection& db) {
  Result<int64_t> v = QueryInt(db, "PRAGMA user_version");
  if (!v.ok()) return v.status();
  return static_cast<int>(*v);
}

Result<std::optional<int>> DevelopmentSchemaVersion(Connection& db) {
  Result<int64_t> has = QueryInt(
      db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
  if (!has.ok()) return has.status();
  if (*has == 0) return std::optional<int>();
  Result<int64_t> v = QueryInt(db, "SELECT COALESCE(MAX(version), 0) FROM schema_version");
  if (!v.ok()) return v.status();
  return std::optional<int>(static_cast<int>(*v));
}

Result<MigrationResult> ApplyMigrations(Connection& db, std::span<const Migration> migrations,
                                        TimePoint now) {
  Result<int> current = SchemaVersion(db);
  if (!current.ok()) return current.status();
  MigrationResult result{*current, 0};
  int latest = migrations.empty() ? 0 : migrations.back().version;
  if (result.version > latest) {
    return Status::FailedPrecondition("database schema version " + std::to_string(result.version) +
                                      " is newer than this build supports (" +
                                      std::to_string(latest) + ")");
  }
  for (const Migration& m : migrations) {
    if (m.version <= result.version) continue;
    if (m.version != result.version + 1) {
      return Status::Internal("migration " + std::to_string(m.version) + " does not follow " +
                              std::to_string(result.version));
    }
    std::string what = "migration " + std::to_string(m.version) + " (" + m.description + ")";
    HR_RETURN_IF_ERROR(db.ExecScript("BEGIN IMMEDIATE", what));
    Status s = db.ExecScript(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL, description TEXT NOT NULL)",
        what);
    if (s.ok()) s = db.ExecScript(m.sql, what);
    if (s.ok()) s = RecordVersion(db, m, now, what);
    if (s.ok()) s = db.ExecScript("COMMIT", what);
    if (!s.ok()) {
      // The migration's error is the one to report; should ROLLBACK fail too, opening fails and
      // closing the connection rolls the transaction back.
      if (db.InTransaction()) (void)db.ExecScript("ROLLBACK", what);
      return s;
    }
    result.version = m.version;
    ++result.applied;
  }
  return result;
}

}  // namespace hookrelay::store::sqlite
