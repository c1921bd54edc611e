#pragma once

#include <optional>
#include <span>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "store/sqlite/sqlite_db.h"

namespace hookrelay::store::sqlite {

// One step of the schema's history. Versions start at 1 (the baseline, the first released schema)
// and increase by one; a released migration is never edited, only followed by a new one that
// migrates the data in place and keeps every event.
struct Migration {
  int version;
  const char* description;
  const char* sql;  // one or more statements
};

// The schema of the SQLite store, oldest first.
std::span<const Migration> SchemaMigrations();

struct MigrationResult {
  int version = 0;  // the schema version after migrating
  int applied = 0;  // how many migrations this call ran (0 when the schema was current)
};

// Brings the database behind `db` up to the last of `migrations`: runs every migration newer than
// its version (PRAGMA user_version), in order, each in its own transaction together with its row
// in schema_migrations (version, applied_at, description) and the new user_version, so a crash
// leaves the schema at a whole version. kFailedPrecondition when the database is newer than the
// last migration known (a downgrade). `now` stamps applied_at.
// REQUIRES: `db` is the only writer (no other connection writes concurrently).
Result<MigrationResult> ApplyMigrations(Connection& db, std::span<const Migration> migrations,
                                        TimePoint now);

// The schema version (PRAGMA user_version; 0 for a new, empty database).
Result<int> SchemaVersion(Connection& db);

// Development builds before the first release recorded their schema (versions 1 to 7) in a
// `schema_version` table, which the released schema does not have: its highest version when the
// database has that table, nullopt otherwise. Such a database cannot be read by this build.
Result<std::optional<int>> DevelopmentSchemaVersion(Connection& db);

}  // namespace hookrelay::store::sqlite
