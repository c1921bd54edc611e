#pragma once

#include <span>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "store/sqlite/sqlite_db.h"

namespace hookrelay::store::sqlite {

// One step of the schema's history. Versions start at 1 and increase by one; a released
// migration is never edited, only followed by a new one.
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

// Brings the database behind `db` up to the last of `migrations`: creates the schema_version table
// if needed, then runs every migration newer than the recorded version, in order, each in its own
// transaction together with its schema_version row (version, applied_at, description), so a crash
// leaves the schema at a whole version. kFailedPrecondition when the database is newer than the
// last migration known (a downgrade). `now` stamps applied_at.
// REQUIRES: `db` is the only writer (no other connection writes concurrently).
Result<MigrationResult> ApplyMigrations(Connection& db, std::span<const Migration> migrations,
                                        TimePoint now);

// The version recorded in schema_version (0 when none is).
Result<int> SchemaVersion(Connection& db);

}  // namespace hookrelay::store::sqlite
