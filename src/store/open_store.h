#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "store/store.h"

namespace hookrelay::store {

class DataDirLock;  // store/sqlite/data_dir_lock.h

// Where a store lives, as given by the user (`--data DIR`, `--store URL`, [store] dir or
// postgres_url).
struct StoreAddress {
  enum class Kind {
    kDirectory,  // the embedded store (SQLite) in a data directory
    kPostgres,   // a postgres:// or postgresql:// URL
  };
  Kind kind = Kind::kDirectory;
  std::string location;  // the directory, or the whole URL (which may hold a password)
  // What may be shown: the directory, or the URL without its user, password, query and fragment
  // ("postgresql://db.internal:5432/hookrelay").
  std::string display;
};

// A postgres:// or postgresql:// URL (scheme in any case) is a PostgreSQL store; another
// "scheme://" is kInvalidArgument (naming only the scheme); anything else is a data directory.
// kInvalidArgument for an empty address.
Result<StoreAddress> ParseStoreAddress(const std::string& address);

// OK when this build can open a store at `address` (both kinds, today); else why not. Creates
// nothing.
Status CheckStoreAvailable(const StoreAddress& address);

struct OpenStoreOptions {
  // The embedded store: the data directory's lock when the caller took it already.
  std::shared_ptr<DataDirLock> dir_lock;
  // PostgreSQL: false refuses a database behind this build's schema instead of migrating it
  // ([store] migrate = "manual"; PostgresOptions::migrate). The embedded store always migrates.
  bool migrate_postgres = true;
  // The embedded store's test hook (SqliteOptions::max_page_count).
  int64_t sqlite_max_page_count = 0;
};

// Opens the store at `address` (see ParseStoreAddress): the embedded store in a data directory
// (created if missing, locked, migrated), or PostgreSQL (connected, migrated: kUnavailable when
// the server cannot be reached, kFailedPrecondition when it refuses or the URL is bad; never
// the password in the message).
Result<std::unique_ptr<Store>> OpenStore(const std::string& address, const Clock& clock,
                                         const OpenStoreOptions& options = {});
Result<std::unique_ptr<Store>> OpenStore(const StoreAddress& address, const Clock& clock,
                                         const OpenStoreOptions& options = {});

// What opening the store at `address` would migrate, read without changing anything (a data
// directory without a store, or a database hookrelay never used, is at version 0).
struct MigrationPlan {
  int current = 0;  // the store's schema version now
  int latest = 0;   // this build's
  struct Step {
    int version;
    std::string description;
  };
  std::vector<Step> pending;  // oldest first; empty when current >= latest
};
Result<MigrationPlan> PlanMigrations(const StoreAddress& address);

}  // namespace hookrelay::store
