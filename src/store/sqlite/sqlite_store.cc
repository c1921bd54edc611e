// The embedded store: construction, open, close and the readers' pool (sqlite_store.h).
// Each area of the store is in its own file beside this one.

#include "store/sqlite/sqlite_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <future>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "common/crypto.h"
#include "common/id.h"
#include "common/list_limits.h"
#include "common/thread_name.h"
#include "store/event_id.h"
#include "store/row_codec.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/statements.h"
#include "store/sqlite/write_ops.h"

namespace hookrelay::store {

using sqlite::Connection;
using sqlite::Statement;

namespace {

// Creates `dir` (and missing parents) if needed; the data directory itself gets mode 0700
// because it holds every payload ever received.
Status EnsureDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p(dir);
  if (p.has_parent_path() && p.parent_path() != p) {
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) return Status::Unavailable("create " + p.parent_path().string() + ": " + ec.message());
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::Unavailable("create " + dir + ": " + std::strerror(errno));
  }
  if (!std::filesystem::is_directory(p, ec)) {
    return Status::InvalidArgument("not a directory: " + dir, "dir");
  }
  return Status::Ok();
}

// A query for one integer run on a raw handle: its SQLite result code (for the caller to tell a
// damaged file from an I/O error) and, on success, the value.
int QueryIntRaw(sqlite3* db, const char* sql, int64_t* out) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      *out = sqlite3_column_int64(stmt, 0);
      rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
      *out = 0;
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(stmt);
  return rc;
}

// What to do about a damaged hookrelay.db at `path`: kFailedPrecondition (exit 2).
Status DamagedDatabase(const std::string& path, const std::string& why) {
  return Status::FailedPrecondition(
      path + " is damaged (" + why + "): restore the data directory from a backup, or move " +
      path +
      " (with any hookrelay.db-wal and hookrelay.db-shm next to it) aside to start with an empty "
      "store");
}

// An existing hookrelay.db, checked read-only before anything writes to it (journal_mode = WAL,
// the page settings, migrations): a file this build cannot use — not a database, damaged,
// another program's, a development build's or a newer build's — is refused untouched with
// kFailedPrecondition (exit 2: retrying does not help) and what to do. I/O errors stay
// kUnavailable. OK for a missing or empty file (a new store).
Status CheckExistingDatabase(const std::string& dir, const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::Unavailable("stat " + path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::FailedPrecondition(path + " is not a regular file: move it aside");
  }
  if (st.st_size == 0) return Status::Ok();
  const std::string what_to_do =
      ": restore the data directory from a backup, or move " + path +
      " (with any hookrelay.db-wal and hookrelay.db-shm next to it) aside to start with an empty "
      "store";
  auto damaged = [&](const std::string& why) { return DamagedDatabase(path, why); };
  unsigned char header[100] = {};
  ssize_t n = -1;
  if (int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    n = ::pread(fd, header, sizeof header, 0);
    const int err = errno;
    ::close(fd);
    if (n < 0) return Status::Unavailable("read " + path + ": " + std::strerror(err));
  } else {
    return Status::Unavailable("open " + path + ": " + std::strerror(errno));
  }
  if (n < static_cast<ssize_t>(sizeof header) || std::memcmp(header, "SQLite format 3", 16) != 0) {
    return Status::FailedPrecondition(path +
                                      " is not a SQLite database (it is damaged, or not "
                                      "hookrelay's)" +
                                      what_to_do);
  }
  auto be32 = [&](int at) {
    return (uint32_t{header[at]} << 24) | (uint32_t{header[at + 1]} << 16) |
           (uint32_t{header[at + 2]} << 8) | uint32_t{header[at + 3]};
  };
  // A file shorter than the page count its header gives (valid when the change counter matches
  // "version-valid-for") was truncated. With a non-empty -wal the header may be older: skipped.
  struct stat wal;
  const bool wal_has_frames = ::stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0;
  {
    const uint32_t page_size_field = (uint32_t{header[16]} << 8) | header[17];
    const uint64_t page_size = page_size_field == 1 ? 65536 : page_size_field;
    const uint64_t pages = be32(28);
    if (!wal_has_frames && be32(24) == be32(92) && pages > 0 &&
        static_cast<uint64_t>(st.st_size) < pages * page_size) {
      return damaged("it is shorter than its header says: truncated");
    }
  }
  // Without a -wal the file is the whole database and nothing else writes it (the directory is
  // locked): read it as immutable, so that not even an empty -wal or a -shm is created next to a
  // file that may be refused. With one, an ordinary read-only connection (it reads the -wal).
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  if (!wal_has_frames) uri += "?immutable=1";
  Result<std::unique_ptr<Connection>> ro =
      Connection::Open(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX);
  if (!ro.ok()) return ro.status();
  sqlite3* db = (*ro)->handle();
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);  // a read: no writes
  auto failed = [&](int rc, const std::string& what) {
    const std::string msg = sqlite3_errmsg(db);
    if ((rc & 0xff) == SQLITE_NOTADB) {
      return Status::FailedPrecondition(path + " is not a SQLite database (" + msg + ")" +
                                        what_to_do);
    }
    if ((rc & 0xff) == SQLITE_CORRUPT) return damaged(msg);
    return Status::Unavailable(what + " " + path + ": " + msg);
  };
  int64_t tables = 0;
  if (int rc = QueryIntRaw(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'", &tables);
      rc != SQLITE_OK) {
    return failed(rc, "read the schema of");
  }
  Result<std::optional<int>> dev = sqlite::DevelopmentSchemaVersion(**ro);
  if (!dev.ok()) return failed(sqlite3_extended_errcode(db), "read the schema of");
  if (dev->has_value()) {
    return Status::FailedPrecondition(
        "data directory " + dir + " has schema version " + std::to_string(**dev) +
        " from a development build of hookrelay; this build's first released schema cannot read "
        "it: move the directory aside and start again, or keep running the older build");
  }
  int64_t version = 0;
  if (int rc = QueryIntRaw(db, "PRAGMA user_version", &version); rc != SQLITE_OK) {
    return failed(rc, "read the schema version of");
  }
  const std::span<const sqlite::Migration> migrations = sqlite::SchemaMigrations();
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  if (version < 0) {
    return Status::FailedPrecondition(path + " has schema version " + std::to_string(version) +
                                      ", which no hookrelay build writes (it was changed by hand "
                                      "or by another program)" +
                                      what_to_do);
  }
  if (version > latest) {
    return Status::FailedPrecondition(
        path + " has schema version " + std::to_string(version) +
        ", newer than this build supports (" + std::to_string(latest) +
        "): a newer hookrelay wrote it; run that newer build (or a later one) on this data "
        "directory, or restore it from a backup made before the upgrade");
  }
  if (version == 0 && tables > 0) {
    return Status::FailedPrecondition(path +
                                      " has tables but no hookrelay schema version (user_version "
                                      "0): it is not a hookrelay database, or its version was "
                                      "reset" +
                                      what_to_do);
  }
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Open / close

Result<std::unique_ptr<Store>> OpenSqliteStore(const SqliteOptions& options, const Clock& clock) {
  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(options, clock);
  if (!store.ok()) {
    // Damage the read-only check at open did not reach (a page only the start-up queries or a
    // migration read): the SQLite error text of SQLITE_CORRUPT / SQLITE_NOTADB ends the message.
    const std::string& m = store.status().message();
    for (int rc : {SQLITE_CORRUPT, SQLITE_NOTADB}) {
      if (store.status().code() == Status::Code::kInternal && m.ends_with(sqlite3_errstr(rc))) {
        return DamagedDatabase((std::filesystem::path(options.dir) / "hookrelay.db").string(), m);
      }
    }
    return store.status();
  }
  return std::unique_ptr<Store>(std::move(*store));
}

SqliteStore::SqliteStore(const SqliteOptions& options, const Clock& clock, std::string path)
    : clock_(clock),
      path_(std::move(path)),
      max_batch_(static_cast<size_t>(std::max(1, options.max_batch))),
      wal_sync_hook_(options.wal_sync) {}

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const SqliteOptions& options,
                                                       const Clock& clock) {
  if (options.dir.empty()) return Status::InvalidArgument("data directory is empty", "dir");
  HR_RETURN_IF_ERROR(EnsureDirectory(options.dir));
  std::unique_ptr<SqliteStore> store(new SqliteStore(
      options, clock, (std::filesystem::path(options.dir) / "hookrelay.db").string()));
  // Group commit and the single writer assume this process is the database's only writer.
  if (options.lock != nullptr) {
    if (!options.lock->Holds(options.dir)) {
      return Status::Internal("the lock given holds " + options.lock->dir() + ", not " +
                              options.dir);
    }
    store->lock_ = options.lock;
  } else {
    Result<std::shared_ptr<DataDirLock>> lock = DataDirLock::Acquire(options.dir);
    if (!lock.ok()) return lock.status();
    store->lock_ = std::move(*lock);
  }
  // Refused untouched when this build cannot use it; nothing below may write before this.
  HR_RETURN_IF_ERROR(CheckExistingDatabase(options.dir, store->path_));
  // The database holds the sources' and destinations' secrets: create it owner-only. SQLite
  // gives its -wal and -shm files the mode of the database file, whatever the umask.
  if (int fd = ::open(store->path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600); fd >= 0) {
    ::close(fd);
  } else {
    return Status::Unavailable("open " + store->path_ + ": " + std::strerror(errno));
  }

  Result<std::unique_ptr<Connection>> db = Connection::Open(
      store->path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
  if (!db.ok()) return db.status();
  Connection& w = **db;
  Result<std::string> mode = w.PragmaValue("journal_mode = WAL");
  if (!mode.ok()) return mode.status();
  if (mode.value() != "wal") {
    return Status::Unavailable("cannot enable WAL on " + store->path_ + " (got " + *mode + ")");
  }
  HR_RETURN_IF_ERROR(
      // NORMAL: COMMIT writes the log without fsync; the syncer makes it durable before anything
      // is acknowledged (the class comment). SQLite still syncs the log before each checkpoint
      // and the database after it, and a new log's header when it starts it again.
      w.ExecScript(
          "PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs),
          "configure " + store->path_));
  // Foreign keys come on after the migrations: a migration that rebuilds a table (6: events)
  // must be able to drop the old one without its ON DELETE CASCADE emptying the children.
  Result<sqlite::MigrationResult> migrated =
      sqlite::ApplyMigrations(w, sqlite::SchemaMigrations(), clock.Now());
  if (!migrated.ok()) return migrated.status();
  HR_RETURN_IF_ERROR(w.ExecScript("PRAGMA foreign_keys = ON", "configure " + store->path_));
  {
    Result<Statement> q = w.Prepare("SELECT COALESCE(MAX(id), 0) FROM events");
    if (!q.ok()) return q.status();
    Result<bool> row = q->Step("find the last event key");
    if (!row.ok()) return row.status();
    store->last_event_key_ = *row ? q->Int(0) : 0;
  }
  {
    Result<uint64_t> bits = LoadEventIdBits(w);
    if (!bits.ok()) return bits.status();
    store->event_id_bits_ = *bits;
  }
  {
    // New deliveries are in no index: one walk of the table finds, per destination, how many
    // there are and where the first one is (the frontier the claims walk from).
    Result<Statement> q = w.Prepare(
        "SELECT destination, COUNT(*), MIN(id) FROM deliveries WHERE status = 'pending'"
        " GROUP BY destination");
    if (!q.ok()) return q.status();
    MutexLock lock(store->leases_mu_);  // (no other thread yet: taken for the analysis)
    for (;;) {
      Result<bool> row = q->Step("find pending deliveries");
      if (!row.ok()) return row.status();
      if (!*row) break;
      store->pending_[q->Text(0)] = Pending{q->Int(1), q->Int(2)};
    }
  }
  store->schema_version_ = migrated->version;
  store->migrations_applied_ = migrated->applied;
  // After migrating, so a tiny test limit cannot break schema creation.
  if (options.max_page_count > 0) {
    Result<std::string> limit =
        w.PragmaValue("max_page_count = " + std::to_string(options.max_page_count));
    if (!limit.ok()) return limit.status();
  }
  // The log exists by now (the write connection has read and written the database in WAL mode)
  // and stays the same file while this connection is open: SQLite only deletes it when the last
  // connection closes. The syncer makes it durable through this descriptor (same inode).
  store->wal_path_ = store->path_ + "-wal";
  store->wal_fd_ = ::open(store->wal_path_.c_str(), O_RDWR | O_CLOEXEC);
  if (store->wal_fd_ < 0) {
    return Status::Unavailable("open " + store->wal_path_ + ": " + std::strerror(errno));
  }
  store->writer_db_ = std::move(*db);
  store->syncer_ = std::thread(&SqliteStore::SyncLoop, store.get());
  store->syncer_id_ = store->syncer_.get_id();
  store->writer_ = std::thread(&SqliteStore::WriterLoop, store.get());
  store->writer_id_ = store->writer_.get_id();
  return store;
}

SqliteStore::~SqliteStore() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  {
    MutexLock lock(sync_mu_);
    writer_done_ = true;
  }
  sync_cv_.notify_all();
  if (syncer_.joinable()) syncer_.join();  // after the last sync and completions
  if (wal_fd_ >= 0) ::close(wal_fd_);
  {
    MutexLock lock(readers_mu_);
    idle_readers_.clear();
  }
  writer_db_.reset();  // after the readers: the last connection to close checkpoints the WAL
  lock_.reset();       // last: the directory is free once the database is closed
}

// ---------------------------------------------------------------------------------------------
// Reads

void SqliteStore::ReaderDeleter::operator()(Connection* c) const {
  std::unique_ptr<Connection> owned(c);
  MutexLock lock(store->readers_mu_);
  if (store->idle_readers_.size() < kMaxIdleReaders)
    store->idle_readers_.push_back(std::move(owned));
}

Result<SqliteStore::Reader> SqliteStore::AcquireReader() {
  {
    MutexLock lock(readers_mu_);
    if (!idle_readers_.empty()) {
      Reader r(idle_readers_.back().release(), ReaderDeleter{this});
      idle_readers_.pop_back();
      return r;
    }
  }
  Result<std::unique_ptr<Connection>> c =
      Connection::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
  if (!c.ok()) return c.status();
  // query_only: a bug can never turn a reader into a second writer.
  HR_RETURN_IF_ERROR((*c)->ExecScript(
      "PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs) + "; PRAGMA query_only = 1",
      "configure reader"));
  return Reader(c->release(), ReaderDeleter{this});
}

}  // namespace hookrelay::store
