#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "store/sqlite/data_dir_lock.h"
#include "store/store.h"

namespace hookrelay::store {

struct SqliteOptions {
  std::string dir;  // data directory; created if missing; the database is dir/hookrelay.db
  // Group commit: a batch closes when it holds this many events or the writer finds the queue
  // empty; there is no artificial delay.
  int max_batch = 512;
  // Test hook: SQLite's max_page_count (0 = unlimited). A small value makes SQLite itself
  // answer SQLITE_FULL, which is how tests prove "disk full → 503, nothing lost".
  int64_t max_page_count = 0;
  // The directory's lock when the caller took it already (serve takes it before it binds its
  // address); it must hold `dir`. Unset: the store takes it when it opens. Either way the store
  // keeps it while it is open.
  std::shared_ptr<DataDirLock> lock;
  // Test hook: called instead of fdatasync(fd) to make the write-ahead log durable (returns 0, or
  // -1 with errno set), so tests can hold a sync back or make it fail. Unset: fdatasync.
  std::function<int(int fd)> wal_sync;
};

// Opens (creating and migrating as needed) the embedded store. WAL; a write is acknowledged once
// the log holding its commit is fsync'd (docs/storage.md, "Group commit"). The data
// directory is locked (DataDirLock) before the database is opened: a directory held by another
// process (or another store here) is kFailedPrecondition, with the holder's PID. An existing
// hookrelay.db is checked read-only before anything writes to it: one this build cannot use (not
// a database, damaged, another program's, a development or newer build's) is kFailedPrecondition
// with the file and what to do, and is left as it was.
Result<std::unique_ptr<Store>> OpenSqliteStore(const SqliteOptions& options, const Clock& clock);

}  // namespace hookrelay::store
