#include "store/sqlite/migrations.h"

#include <string>

namespace hookrelay::store::sqlite {
namespace {

// Times are INTEGER Unix milliseconds; statuses are the names DeliveryStatusName() returns, so the
// database reads well in the sqlite3 shell.
constexpr Migration kMigrations[] = {
    {1, "events, deliveries, attempts, breakers", R"sql(
CREATE TABLE events (
  id TEXT PRIMARY KEY NOT NULL,
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
-- Dedup lookups: same source and key, received within the window.
CREATE INDEX events_dedup ON events(source, dedup_key, received_at) WHERE dedup_key IS NOT NULL;
-- Retention purges the oldest first.
CREATE INDEX events_received_at ON events(received_at);

CREATE TABLE deliveries (
  id INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  destination TEXT NOT NULL,
  chain INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL
    CHECK (status IN ('scheduled', 'delivering', 'delivered', 'failed', 'paused')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  next_attempt_at INTEGER NOT NULL,
  deadline INTEGER,
  first_failure_at INTEGER,
  last_delay_ms INTEGER NOT NULL DEFAULT 0,
  reason TEXT,
  lease_until INTEGER,
  lease_owner TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- Due work (and NextDueAt) without scanning the backlog.
CREATE INDEX deliveries_due ON deliveries(status, next_attempt_at);
-- Pause/resume and per-destination filters.
CREATE INDEX deliveries_destination ON deliveries(destination, status);
-- An event's deliveries, the ON DELETE CASCADE from events, and the next replay chain number.
CREATE INDEX deliveries_event ON deliveries(event_id, destination, chain);
-- Leases of crashed senders, found by expiry.
CREATE INDEX deliveries_leased ON deliveries(lease_until) WHERE status = 'delivering';

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
)sql"},
    {2, "per-destination due index", R"sql(
-- Due work of one destination (ClaimDue and NextDueAt for a destination) without walking other
-- destinations' backlogs. Its prefix (destination, status) serves pause/resume and the
-- per-destination filters, so it replaces deliveries_destination: ingest keeps writing as many
-- indexes per delivery as before.
CREATE INDEX deliveries_destination_due ON deliveries(destination, status, next_attempt_at);
DROP INDEX deliveries_destination;
)sql"},
    {3, "audit trail", R"sql(
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
)sql"},
    {4, "bulk replay jobs", R"sql(
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
  lease_owner TEXT NOT NULL DEFAULT ''
);
-- Claims look at unfinished jobs only, oldest first.
CREATE INDEX replays_open ON replays(state, created_at) WHERE state IN ('queued', 'running');
)sql"},
    {5, "catalog", R"sql(
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
)sql"},
    {6, "current delivery chains, replay waiting, typeable route ids", R"sql(
-- A delivery's status is that of its latest chain: a successful replay takes an event out of
-- status=failed. `current` marks the latest chain of each (event, destination); a replay clears
-- it on the chains before (their rows stay, as history). A flag rather than a MAX(chain)
-- subquery, so the event list's status filter stays one indexed probe per event, as before.
-- ADD COLUMN with a constant default does not rewrite the table.
ALTER TABLE deliveries ADD COLUMN current INTEGER NOT NULL DEFAULT 1;
UPDATE deliveries SET current = 0 WHERE EXISTS (SELECT 1 FROM deliveries l
  WHERE l.event_id = deliveries.event_id AND l.destination = deliveries.destination
    AND l.chain > deliveries.chain);
-- Only superseded chains (replays are rare next to ingest, which never writes this index):
-- a count of current deliveries in a status is the deliveries_due count minus this one.
CREATE INDEX deliveries_superseded ON deliveries(status) WHERE current = 0;

-- Why a bulk replay cannot make progress now (JSON), shown with the job.
ALTER TABLE replays ADD COLUMN waiting TEXT;

-- Default route ids were "source->destination"; '>' is a shell redirection, so they are now
-- "source:destination" (':' is in no source or destination name). Ids given explicitly stay.
UPDATE OR IGNORE catalog
  SET name = json_extract(spec, '$.source') || ':' || json_extract(spec, '$.destination')
  WHERE kind = 'route' AND json_extract(spec, '$.id') IS NULL
    AND name = json_extract(spec, '$.source') || '->' || json_extract(spec, '$.destination');
)sql"},
    {7, "per-minute counts for the dashboard's charts", R"sql(
-- Counts per minute (Unix minutes) and destination ('' for events received), written in the
-- transaction that ingests an event or records an attempt, so GET /api/v1/stats reads at most
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
};

Status RecordVersion(Connection& db, const Migration& m, TimePoint now, const std::string& what) {
  Result<Statement> ins = db.Prepare(
      "INSERT INTO schema_version(version, applied_at, description) VALUES (?1, ?2, ?3)");
  if (!ins.ok()) return ins.status();
  return ins->BindInt(1, m.version)
      .BindTime(2, now)
      .BindText(3, m.description)
      .Exec("record " + what);
}

}  // namespace

std::span<const Migration> SchemaMigrations() { return kMigrations; }

Result<int> SchemaVersion(Connection& db) {
  Result<Statement> stmt = db.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_version");
  if (!stmt.ok()) return stmt.status();
  Result<bool> row = stmt->Step("read schema_version");
  if (!row.ok()) return row.status();
  return *row ? static_cast<int>(stmt->Int(0)) : 0;
}

Result<MigrationResult> ApplyMigrations(Connection& db, std::span<const Migration> migrations,
                                        TimePoint now) {
  HR_RETURN_IF_ERROR(db.ExecScript(
      "CREATE TABLE IF NOT EXISTS schema_version ("
      "version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL, description TEXT NOT NULL)",
      "create schema_version"));
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
    Status s = db.ExecScript(m.sql, what);
    if (s.ok()) s = RecordVersion(db, m, now, what);
    if (s.ok()) s = db.ExecScript("COMMIT", what);
    if (!s.ok()) {
      if (db.InTransaction()) db.ExecScript("ROLLBACK", what);
      return s;
    }
    result.version = m.version;
    ++result.applied;
  }
  return result;
}

}  // namespace hookrelay::store::sqlite
