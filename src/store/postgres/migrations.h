#pragma once

#include <span>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "store/postgres/pg_conn.h"

namespace hookrelay::store::pg {

// The migration that partitions events and attempts by day (retention drops whole days). Its
// number is this constant alone: renumber it here when other migrations are merged before it.
inline constexpr int kTimePartitionsVersion = 3;

struct Migration {
  int version;
  const char* description;
  const char* sql;
};

// This build's schema, oldest first (docs/postgres.md has the tables).
std::span<const Migration> SchemaMigrations();

struct MigrationResult {
  int version = 0;  // the schema version afterwards
  int applied = 0;  // migrations applied by this call
};

// Brings the database to the newest of `migrations`, in one transaction under a transaction-level
// advisory lock, so several nodes starting at once are safe: one migrates, the others wait and
// then find nothing to do. A database whose schema is newer than this build's is refused
// (kFailedPrecondition), untouched, as the embedded store refuses a newer data directory.
// `display` names the database in messages. Also writes the store's constants (store_meta) the
// first time.
Result<MigrationResult> ApplyMigrations(PgConn& db, std::span<const Migration> migrations,
                                        TimePoint now, const std::string& display);

// The schema version the database is at (0 for one hookrelay never migrated), read without
// changing anything.
Result<int> ReadSchemaVersion(PgConn& db);

}  // namespace hookrelay::store::pg
