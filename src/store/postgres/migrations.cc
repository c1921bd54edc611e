#include "store/postgres/migrations.h"

#include "common/crypto.h"

namespace hookrelay::store::pg {
namespace {

// The advisory lock that serialises migrations (any constant works; this one spells "hookrlay").
constexpr int64_t kMigrationLock = 0x686f6f6b726c6179;

// Times are bigint Unix milliseconds (the resolution of TimePoint), as in the embedded store;
// statuses are the names DeliveryStatusName() returns. Bytes that come from the wire (bodies,
// headers, content types, dedup keys, response snippets) are bytea: byte-exact, NULs and invalid
// UTF-8 included. Names from the configuration (sources, destinations) are text.
constexpr Migration kMigrations[] = {
    {1, "baseline: the first PostgreSQL schema", R"sql(
-- Constants chosen once, when the database is first migrated: 'event_id_bits' (64 random bits
-- every event id of this store carries, store/event_id.h) and 'last_event_key' (the newest
-- event's key; appends lock this row, so keys are assigned in commit order by every node).
CREATE TABLE store_meta (
  key text PRIMARY KEY,
  value bigint NOT NULL
);

-- Events are keyed by the store-assigned, time-ordered key (store/event_id.h): the received
-- millisecond << 12 plus a sequence. received_at is the key's millisecond, so a time range is a
-- key range of the primary key.
CREATE TABLE events (
  id bigint PRIMARY KEY,
  source text NOT NULL,
  received_at bigint NOT NULL,
  content_type bytea NOT NULL,
  size bigint NOT NULL,
  dedup_key bytea,
  headers bytea NOT NULL,
  body bytea NOT NULL
);
CREATE INDEX events_dedup ON events (source, dedup_key, id) WHERE dedup_key IS NOT NULL;

-- One row per delivery (one event to one destination, one chain). Claims are written here
-- (status 'delivering', lease_until, lease_owner): several nodes share the table, and a dead
-- node's leases expire and are taken over.
CREATE TABLE deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  destination text NOT NULL,
  chain integer NOT NULL DEFAULT 0,
  -- true for the latest chain of its (event, destination): a replay supersedes the chains before
  -- it, which stay as history.
  current boolean NOT NULL DEFAULT true,
  status text NOT NULL
    CHECK (status IN ('scheduled', 'delivering', 'delivered', 'failed', 'paused')),
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL,
  next_attempt_at bigint NOT NULL,
  deadline bigint,
  first_failure_at bigint,
  last_delay_ms bigint NOT NULL DEFAULT 0,
  reason text,
  lease_until bigint,
  lease_owner text NOT NULL DEFAULT '',
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  -- When the delivery can be claimed: a scheduled one when it is due, a delivering one when its
  -- lease expires; never for the others. One index serves both kinds of claim, oldest first.
  claim_at bigint GENERATED ALWAYS AS (
    CASE status WHEN 'scheduled' THEN next_attempt_at WHEN 'delivering' THEN lease_until END
  ) STORED
);
-- An event's deliveries, the ON DELETE CASCADE from events, and the next replay chain number.
CREATE UNIQUE INDEX deliveries_event ON deliveries (event_id, destination, chain);
-- Claims, NextDueAt and the due counts: only deliveries that can be claimed are in them.
CREATE INDEX deliveries_claim ON deliveries (claim_at, id) WHERE claim_at IS NOT NULL;
CREATE INDEX deliveries_claim_destination ON deliveries (destination, claim_at, id)
  WHERE claim_at IS NOT NULL;
-- Deliveries not final yet, per destination: pause and resume, the open-deliveries check of a
-- catalog change, and the counts of scheduled, delivering and paused ones.
CREATE INDEX deliveries_open ON deliveries (destination, status)
  WHERE status IN ('scheduled', 'delivering', 'paused');

CREATE TABLE attempts (
  delivery_id bigint NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  n integer NOT NULL,
  started_at bigint NOT NULL,
  duration_ms bigint NOT NULL,
  status_code integer,
  error text,
  retry_after text,
  snippet bytea NOT NULL,
  PRIMARY KEY (delivery_id, n)
);

CREATE TABLE breakers (
  destination text PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('closed', 'open', 'half_open')),
  consecutive_failures integer NOT NULL,
  trips integer NOT NULL,
  open_until bigint,
  closed_since bigint,
  probe_in_flight boolean NOT NULL
);

-- Identity ids are never reused, so a cursor (the last id seen) never points at another entry.
CREATE TABLE audit (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at bigint NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  target text NOT NULL,
  count bigint NOT NULL,
  detail text NOT NULL
);

CREATE TABLE replays (
  id text PRIMARY KEY,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  filter text NOT NULL,
  rate double precision NOT NULL,
  state text NOT NULL CHECK (state IN ('queued', 'running', 'done', 'cancelled', 'failed')),
  total bigint NOT NULL DEFAULT 0,
  done bigint NOT NULL DEFAULT 0,
  failed bigint NOT NULL DEFAULT 0,
  cursor text NOT NULL DEFAULT '',
  error text,
  lease_until bigint,
  lease_owner text NOT NULL DEFAULT '',
  waiting text
);
CREATE INDEX replays_open ON replays (created_at, id) WHERE state IN ('queued', 'running');

CREATE TABLE catalog (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('source', 'destination', 'route')),
  name text NOT NULL,
  spec text NOT NULL,
  origin text NOT NULL CHECK (origin IN ('config', 'api')),
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  UNIQUE (kind, name)
);

CREATE TABLE stats_minute (
  minute bigint NOT NULL,
  destination text NOT NULL,
  received bigint NOT NULL DEFAULT 0,
  delivered bigint NOT NULL DEFAULT 0,
  failed bigint NOT NULL DEFAULT 0,
  attempts bigint NOT NULL DEFAULT 0,
  attempt_failures bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (minute, destination)
);
)sql"},
    {2, "shared breaker and pause: paused_reason, paused_since on breakers", R"sql(
-- One row per destination holds what every node must obey: the breaker (changed only by
-- Store::UpdateBreaker, under the row's lock) and the operator's pause (paused iff paused_since
-- is not NULL; a closed breaker when only the pause was written).
ALTER TABLE breakers ADD COLUMN paused_reason text;
ALTER TABLE breakers ADD COLUMN paused_since bigint;
)sql"},
    // Retention drops whole days (docs/postgres.md, "Retention by time partitions"). The version
    // is kTimePartitionsVersion alone (renumbered there when other migrations land first).
    {kTimePartitionsVersion, "time partitions: events and attempts by day of the event key",
     R"sql(
-- One UTC day of events and of their attempts: events_pYYYYMMDD holds the event keys of that day
-- (keys are the received millisecond << 12, store/event_id.h), attempts_pYYYYMMDD the attempts of
-- those events. The store calls this for the days it is about to write and the days ahead.
CREATE FUNCTION hookrelay_day_partitions(day bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  suffix text := to_char(to_timestamp(day * 86400) AT TIME ZONE 'UTC', 'YYYYMMDD');
  lo bigint := (day * 86400000) << 12;
  hi bigint := ((day + 1) * 86400000) << 12;
BEGIN
  IF to_regclass('events_p' || suffix) IS NULL THEN
    EXECUTE format('CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%s) TO (%s)',
                   'events_p' || suffix, lo, hi);
  END IF;
  IF to_regclass('attempts_p' || suffix) IS NULL THEN
    EXECUTE format('CREATE TABLE %I PARTITION OF attempts FOR VALUES FROM (%s) TO (%s)',
                   'attempts_p' || suffix, lo, hi);
  END IF;
END $$;

-- The old tables make way; their rows are copied below, in this transaction.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_event_id_fkey;
ALTER TABLE attempts RENAME TO attempts_v1;
ALTER TABLE attempts_v1 RENAME CONSTRAINT attempts_pkey TO attempts_v1_pkey;
ALTER TABLE events RENAME TO events_v1;
ALTER TABLE events_v1 RENAME CONSTRAINT events_pkey TO events_v1_pkey;
ALTER INDEX events_dedup RENAME TO events_v1_dedup;

CREATE TABLE events (
  id bigint PRIMARY KEY,
  source text NOT NULL,
  received_at bigint NOT NULL,
  content_type bytea NOT NULL,
  size bigint NOT NULL,
  dedup_key bytea,
  headers bytea NOT NULL,
  body bytea NOT NULL
) PARTITION BY RANGE (id);
CREATE INDEX events_dedup ON events (source, dedup_key, id) WHERE dedup_key IS NOT NULL;

-- Attempts carry their event's key (the partition key): a unique key of a partitioned table must
-- include it. No foreign keys: a partition cannot be dropped while rows reference it, and the
-- cascades are the purge's own deletes (PostgresStore::PurgeEventsBefore).
CREATE TABLE attempts (
  delivery_id bigint NOT NULL,
  event_id bigint NOT NULL,
  n integer NOT NULL,
  started_at bigint NOT NULL,
  duration_ms bigint NOT NULL,
  status_code integer,
  error text,
  retry_after text,
  snippet bytea NOT NULL,
  PRIMARY KEY (delivery_id, n, event_id)
) PARTITION BY RANGE (event_id);

SELECT hookrelay_day_partitions(day)
  FROM (SELECT DISTINCT (id >> 12) / 86400000 AS day FROM events_v1) days;
INSERT INTO events SELECT id, source, received_at, content_type, size, dedup_key, headers, body
  FROM events_v1;
INSERT INTO attempts (delivery_id, event_id, n, started_at, duration_ms, status_code, error,
                      retry_after, snippet)
  SELECT a.delivery_id, d.event_id, a.n, a.started_at, a.duration_ms, a.status_code, a.error,
         a.retry_after, a.snippet
  FROM attempts_v1 a JOIN deliveries d ON d.id = a.delivery_id;
DROP TABLE attempts_v1;
DROP TABLE events_v1;

-- Deliveries not final yet by event: whether a day still has an open delivery (it is then not
-- dropped), and the purge's per-event check. Small: only open deliveries are in it.
CREATE INDEX deliveries_open_event ON deliveries (event_id)
  WHERE status IN ('scheduled', 'delivering', 'paused');
)sql"},
    {kTimePartitionsVersion + 1, "rejected requests: rejections", R"sql(
-- Requests to /in/{source} refused because they failed verification (Store::AppendRejections):
-- never their bodies. Bounded: each append keeps only the newest rows of each source it wrote
-- for, retention deletes rows past their age. Identity ids are never reused, so a cursor (the last
-- id seen) never points at another row.
CREATE TABLE rejections (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source text NOT NULL,
  received_at bigint NOT NULL,
  reason text NOT NULL,
  message text NOT NULL,
  headers bytea NOT NULL,
  size bigint NOT NULL,
  sha256 text NOT NULL,
  remote_addr text NOT NULL
);
CREATE INDEX rejections_source ON rejections (source, id);
CREATE INDEX rejections_received ON rejections (received_at);
)sql"},
    {kTimePartitionsVersion + 2,
     "ordered delivery: order_key on deliveries, the index of the ordered queues",
     R"sql(
-- Ordered delivery (docs/delivery.md): NULL for an unordered delivery; '' for a destination
-- ordered as a whole; else the key's value. A delivery with a key is claimed only while no
-- delivery of its (destination, order_key) with a lower id is still open (scheduled, delivering,
-- paused): the claim's NOT EXISTS probes this partial index, which unordered deliveries never
-- enter and a delivery leaves when it is delivered or fails for good.
ALTER TABLE deliveries ADD COLUMN order_key text;
CREATE INDEX deliveries_ordered ON deliveries (destination, order_key, id)
  WHERE order_key IS NOT NULL AND status IN ('scheduled', 'delivering', 'paused');
)sql"},
    {kTimePartitionsVersion + 3,
     "breaker probes: probe, counted on attempts, uncounted_attempts on deliveries", R"sql(
-- A failed half-open probe is recorded as an attempt (probe) that does not count toward the
-- delivery's max_attempts (NOT counted); deliveries.attempts counts the counted ones only, and
-- uncounted_attempts the others (the next attempt's n is their sum + 1). Added to the
-- partitioned attempts table, the columns reach every partition.
ALTER TABLE attempts ADD COLUMN probe boolean NOT NULL DEFAULT false;
ALTER TABLE attempts ADD COLUMN counted boolean NOT NULL DEFAULT true;
ALTER TABLE deliveries ADD COLUMN uncounted_attempts integer NOT NULL DEFAULT 0;
)sql"},
    {kTimePartitionsVersion + 4, "routing: type, routed and route_misses on events", R"sql(
-- An event's type (NULL: none), whether a route took it at ingest, and the routes that did not
-- with their reasons (row_codec's blob; NULL: none). Added to the partitioned events table, the
-- columns reach every partition; TOAST keeps the body out of the way of lists, wherever it is.
ALTER TABLE events ADD COLUMN type text;
ALTER TABLE events ADD COLUMN routed boolean NOT NULL DEFAULT true;
ALTER TABLE events ADD COLUMN route_misses bytea;
)sql"},
    {kTimePartitionsVersion + 5, "transforms: sent_size, sent_sha256, headers_changed on attempts",
     R"sql(
-- What a transform made an attempt send (NULL when no transform ran): the body's size and
-- SHA-256, and the names of the headers it added, changed or removed.
ALTER TABLE attempts ADD COLUMN sent_size bigint;
ALTER TABLE attempts ADD COLUMN sent_sha256 text;
ALTER TABLE attempts ADD COLUMN headers_changed text;
)sql"},
    {kTimePartitionsVersion + 6, "api tokens: api_tokens (name, SHA-256, role, expiry, last use)",
     R"sql(
-- Named API tokens (docs/access.md): only each token's SHA-256 is kept. "bootstrap" is the row of
-- HOOKRELAY_TOKEN (hash empty: that token is checked in memory), revoked in place.
CREATE TABLE api_tokens (
  name text PRIMARY KEY,
  hash text NOT NULL,
  role text NOT NULL,
  scope text NOT NULL DEFAULT '',
  created_at bigint NOT NULL,
  expires_at bigint,
  created_by text NOT NULL DEFAULT '',
  last_used_at bigint,
  last_used_addr text NOT NULL DEFAULT '',
  revoked boolean NOT NULL DEFAULT false
);
)sql"},
    {kTimePartitionsVersion + 7,
     "secrets at rest: data_keys (the data key, wrapped by each master key)", R"sql(
-- The data key the catalog's secrets are encrypted under, wrapped by a master key: one row per
-- master key that may open the store (two while a master key is rotated). docs/secrets.md.
CREATE TABLE data_keys (
  master_key_id text PRIMARY KEY,
  wrapped text NOT NULL,
  created_at bigint NOT NULL
);
)sql"},
};

Result<uint64_t> FreshIdBits() {
  uint64_t fresh = 0;
  const std::optional<std::string> raw = HexDecode(RandomHexToken(sizeof fresh));
  if (!raw || raw->size() != sizeof fresh) return Status::Internal("no random bits for event ids");
  for (unsigned char c : *raw) fresh = (fresh << 8) | c;
  return fresh;
}

Result<MigrationResult> Migrate(PgConn& db, std::span<const Migration> migrations, TimePoint now,
                                const std::string& display) {
  {
    PgParams p;
    const std::string lock = p.Int(kMigrationLock);
    HR_RETURN_IF_ERROR(
        db.Exec("SELECT pg_advisory_xact_lock(" + lock + ")", p, "take the migration lock")
            .status());
  }
  HR_RETURN_IF_ERROR(
      db.Script("CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY,"
                " applied_at bigint NOT NULL, description text NOT NULL)",
                "create schema_migrations"));
  HR_ASSIGN_OR_RETURN(PgResult v, db.Exec("SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                                          "read the schema version"));
  MigrationResult result{static_cast<int>(v.Int(0, 0)), 0};
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  if (result.version > latest) {
    return Status::FailedPrecondition(
        "PostgreSQL database " + display + " has schema version " + std::to_string(result.version) +
        ", newer than this build supports (" + std::to_string(latest) +
        "): a newer hookrelay wrote it; run that newer build (or a later one) on this database, "
        "or restore it from a backup made before the upgrade");
  }
  for (const Migration& m : migrations) {
    if (m.version <= result.version) continue;
    if (m.version != result.version + 1) {
      return Status::Internal("migration " + std::to_string(m.version) + " does not follow " +
                              std::to_string(result.version));
    }
    const std::string what = "migration " + std::to_string(m.version) + " (" + m.description + ")";
    HR_RETURN_IF_ERROR(db.Script(m.sql, what));
    PgParams p;
    const std::string sql =
        "INSERT INTO schema_migrations (version, applied_at, description)"
        " VALUES (" +
        p.Int(m.version) + ", " + p.Time(now) + ", " + p.Text(m.description) + ")";
    HR_RETURN_IF_ERROR(db.Exec(sql, p, "record " + what).status());
    result.version = m.version;
    ++result.applied;
  }
  HR_ASSIGN_OR_RETURN(uint64_t bits, FreshIdBits());
  PgParams p;
  const std::string sql = "INSERT INTO store_meta (key, value) VALUES ('event_id_bits', " +
                          p.Int(static_cast<int64_t>(bits)) +
                          "), ('last_event_key', 0) ON CONFLICT (key) DO NOTHING";
  HR_RETURN_IF_ERROR(db.Exec(sql, p, "choose the event id bits").status());
  return result;
}

}  // namespace

std::span<const Migration> SchemaMigrations() { return kMigrations; }

Result<MigrationResult> ApplyMigrations(PgConn& db, std::span<const Migration> migrations,
                                        TimePoint now, const std::string& display) {
  HR_RETURN_IF_ERROR(db.Script("BEGIN", "begin migrations"));
  Result<MigrationResult> r = Migrate(db, migrations, now, display);
  if (r.ok()) {
    Status c = db.Script("COMMIT", "commit migrations");
    if (!c.ok()) r = c;
  }
  if (!r.ok()) db.RollbackIfOpen();
  return r;
}

Result<int> ReadSchemaVersion(PgConn& db) {
  HR_ASSIGN_OR_RETURN(PgResult t, db.Exec("SELECT to_regclass('schema_migrations') IS NOT NULL",
                                          "look for schema_migrations"));
  if (t.rows() != 1 || !t.Bool(0, 0)) return 0;
  HR_ASSIGN_OR_RETURN(PgResult v, db.Exec("SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                                          "read the schema version"));
  return static_cast<int>(v.Int(0, 0));
}

}  // namespace hookrelay::store::pg
