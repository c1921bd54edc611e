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

namespace hookrelay::store {

using sqlite::Connection;
using sqlite::Statement;

namespace {

// SQLite's largest max_page_count (SQLITE_MAX_PAGE_COUNT in the 3.40 default build).
constexpr int64_t kSqliteMaxPageCount = 1073741823;
constexpr int kBusyTimeoutMs = 5000;

struct Unit {};

constexpr char kEventColumns[] =
    "e.id, e.source, e.received_at, e.content_type, e.size, e.dedup_key, e.headers";

// Reads the columns of kEventColumns (and the body when `body_col` >= 0).
// `id_bits`: the store's bits of its event ids (EventIdFromKey).
Result<Event> ReadEvent(const Statement& row, int body_col, uint64_t id_bits) {
  Event e;
  e.id = EventIdFromKey(row.Int(0), id_bits);
  e.source = row.Text(1);
  e.received_at = row.Time(2);
  e.content_type = row.Text(3);
  e.size = row.Int(4);
  e.dedup_key = row.OptText(5);
  HR_ASSIGN_OR_RETURN(e.headers, DecodeHeaders(row.Blob(6)));
  if (body_col >= 0) e.body = row.Blob(body_col);
  return e;
}

constexpr char kDeliveryColumns[] =
    "id, event_id, destination, chain, status, attempts, max_attempts, next_attempt_at, deadline, "
    "first_failure_at, last_delay_ms, reason, created_at, updated_at, order_key, "
    "uncounted_attempts";

// A stored status: 'pending' (a new delivery in no index) reads as kScheduled.
std::optional<DeliveryStatus> ParseStoredStatus(const std::string& status) {
  if (status == "pending") return DeliveryStatus::kScheduled;
  return ParseDeliveryStatus(status);
}

Result<Delivery> ReadDelivery(const Statement& row, uint64_t id_bits) {
  Delivery d;
  d.id = row.Int(0);
  d.event_id = EventIdFromKey(row.Int(1), id_bits);
  d.destination = row.Text(2);
  d.chain = static_cast<int>(row.Int(3));
  std::string status = row.Text(4);
  std::optional<DeliveryStatus> parsed = ParseStoredStatus(status);
  if (!parsed) return Status::Internal("unknown delivery status in the database: " + status);
  d.status = *parsed;
  d.attempts = static_cast<int>(row.Int(5));
  d.max_attempts = static_cast<int>(row.Int(6));
  d.next_attempt_at = row.Time(7);
  d.deadline = row.OptTime(8);
  d.first_failure_at = row.OptTime(9);
  d.last_delay = Duration(row.Int(10));
  d.reason = row.OptText(11);
  d.created_at = row.Time(12);
  d.updated_at = row.Time(13);
  d.order_key = row.OptText(14);
  d.uncounted_attempts = static_cast<int>(row.Int(15));
  return d;
}

// All deliveries a query returns.
Result<std::vector<Delivery>> ReadDeliveries(Statement& stmt, std::string_view what,
                                             uint64_t id_bits) {
  std::vector<Delivery> out;
  for (;;) {
    Result<bool> row = stmt.Step(what);
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<Delivery> d = ReadDelivery(stmt, id_bits);
    if (!d.ok()) return d.status();
    out.push_back(std::move(*d));
  }
}

Result<Delivery> LoadDelivery(Connection& db, int64_t id, uint64_t id_bits) {
  Result<Statement> q =
      db.Prepare(std::string("SELECT ") + kDeliveryColumns + " FROM deliveries WHERE id = ?1");
  if (!q.ok()) return q.status();
  q->BindInt(1, id);
  Result<bool> row = q->Step("load delivery");
  if (!row.ok()) return row.status();
  if (!*row) return Status::Internal("delivery " + std::to_string(id) + " vanished");
  return ReadDelivery(*q, id_bits);
}

// The store's bits of its event ids (store/event_id.h): 64 bits from the OS CSPRNG, chosen at the
// first open of a new database and kept in store_meta for its life.
Result<uint64_t> LoadEventIdBits(Connection& db) {
  uint64_t fresh = 0;
  const std::optional<std::string> raw = HexDecode(RandomHexToken(sizeof fresh));
  if (!raw || raw->size() != sizeof fresh) return Status::Internal("no random bits for event ids");
  for (unsigned char c : *raw) fresh = (fresh << 8) | c;
  Result<Statement> ins =
      db.Prepare("INSERT OR IGNORE INTO store_meta(key, value) VALUES ('event_id_bits', ?1)");
  if (!ins.ok()) return ins.status();
  HR_RETURN_IF_ERROR(ins->BindInt(1, static_cast<int64_t>(fresh)).Exec("choose the event id bits"));
  Result<Statement> q = db.Prepare("SELECT value FROM store_meta WHERE key = 'event_id_bits'");
  if (!q.ok()) return q.status();
  Result<bool> row = q->Step("read the event id bits");
  if (!row.ok()) return row.status();
  if (!*row) return Status::Internal("store_meta has no event_id_bits");
  return static_cast<uint64_t>(q->Int(0));
}

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
// Write operations

class SqliteStore::WriteOp {
 public:
  virtual ~WriteOp() = default;
  // Runs inside the batch's transaction. An error is undone (only what this operation did, by a
  // savepoint, or the whole transaction, which then runs again). So Run may run more than once:
  // it must depend on nothing but the database and keep its result only from the last run.
  virtual Status Run(Connection& db) = 0;
  // Called exactly once after the batch ended: with Run's error, or with the transaction's error
  // when BEGIN/COMMIT failed, else OK.
  virtual void Finish(Status status) = 0;
  // For appends: whether the last run stored a new event, and (before Finish) that a later
  // append finished with it stored one (AppendResult::more_follow).
  virtual bool StoredNewEvent() const { return false; }
  virtual void SetMoreFollow() {}
  // A claim (ClaimDue): it only reads and changes the leases in memory, so the writer runs it
  // before the batch's transaction, with nothing uncommitted to see, and answers it at once
  // instead of after the next commit (RunClaimsFirst).
  bool claim = false;
  // The dashboard's counters this operation adds (of its last run), written at the batch's commit.
  StatsDelta stats;
  // The leases this operation changed, with what they were before, oldest first (UndoLeases).
  std::vector<std::pair<int64_t, std::optional<Lease>>> lease_undo;
  // Changes to the count of pending deliveries per destination, and frontiers found by a walk
  // (the lowest pending rowid seen), applied when the batch commits.
  std::map<std::string, int64_t> pending_delta;
  std::map<std::string, int64_t> frontier_moves;
};

class SqliteStore::AppendOp final : public WriteOp {
 public:
  AppendOp(SqliteStore* store, NewEvent event, AppendCallback done)
      : store_(store), event_(std::move(event)), done_(std::move(done)) {}

  Status Run(Connection& db) override { return store_->Append(db, event_, &result_); }
  bool StoredNewEvent() const override { return !result_.duplicate; }
  void SetMoreFollow() override { result_.more_follow = true; }
  void Finish(Status status) override {
    if (!done_) return;
    if (status.ok()) {
      done_(std::move(result_));
    } else {
      done_(std::move(status));
    }
  }

 private:
  SqliteStore* store_;
  NewEvent event_;
  AppendCallback done_;
  AppendResult result_;
};

template <typename T>
class SqliteStore::SyncOp final : public WriteOp {
 public:
  using Fn = std::function<Result<T>(Connection&)>;
  SyncOp(Fn fn, std::shared_ptr<std::promise<Result<T>>> promise)
      : fn_(std::move(fn)), promise_(std::move(promise)) {}

  Status Run(Connection& db) override {
    result_.emplace(fn_(db));
    return result_->ok() ? Status::Ok() : result_->status();
  }
  void Finish(Status status) override {
    if (status.ok()) {
      promise_->set_value(std::move(*result_));
    } else {
      promise_->set_value(Result<T>(std::move(status)));
    }
  }

 private:
  Fn fn_;
  std::optional<Result<T>> result_;
  // Shared: the waiting thread may return (destroying its future) while set_value is still
  // running here.
  std::shared_ptr<std::promise<Result<T>>> promise_;
};

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
      w.ExecScript("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; "
                   "PRAGMA busy_timeout = " +
                       std::to_string(kBusyTimeoutMs),
                   "configure " + store->path_));
  Result<sqlite::MigrationResult> migrated =
      sqlite::ApplyMigrations(w, sqlite::SchemaMigrations(), clock.Now());
  if (!migrated.ok()) return migrated.status();
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
// The writer

void SqliteStore::Enqueue(std::unique_ptr<WriteOp> op) {
  {
    MutexLock lock(mu_);
    if (!stopping_) {
      queue_.push_back(std::move(op));
      op = nullptr;
    }
  }
  if (op) {
    op->Finish(Status::Unavailable("store is closed"));
    return;
  }
  cv_.notify_one();
}

template <typename T>
Result<T> SqliteStore::Write(std::function<Result<T>(Connection&)> fn, bool claim) {
  if (std::this_thread::get_id() == writer_id_ || std::this_thread::get_id() == syncer_id_) {
    return Status::Internal(
        "synchronous store write from a store thread (an AppendEvent callback) would deadlock");
  }
  auto promise = std::make_shared<std::promise<Result<T>>>();
  std::future<Result<T>> future = promise->get_future();
  auto op = std::make_unique<SyncOp<T>>(std::move(fn), std::move(promise));
  op->claim = claim;
  Enqueue(std::move(op));
  return future.get();
}

void SqliteStore::WriterLoop() {
  NameThisThread("hr-store-write");
  std::vector<std::unique_ptr<WriteOp>> batch;
  batch.reserve(max_batch_);
  for (;;) {
    {
      MutexLock lock(mu_);
      cv_.wait(lock, [this]() REQUIRES(mu_) { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued has been done
      while (!queue_.empty() && batch.size() < max_batch_) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    RunClaimsFirst(batch);
    if (!batch.empty()) {
      bool wrote = false;
      std::vector<Status> results = RunBatch(batch, &wrote);
      Handoff(std::move(batch), std::move(results), wrote);
    }
    batch.clear();
    batch.reserve(max_batch_);
  }
}

void SqliteStore::Handoff(std::vector<std::unique_ptr<WriteOp>> batch, std::vector<Status> results,
                          bool wrote) {
  // The completions run one after the other: an append that stored a new event learns whether
  // another one follows, so that its caller can react once per batch (AppendResult::more_follow).
  bool stored_later = false;
  for (size_t i = batch.size(); i-- > 0;) {
    if (!results[i].ok() || !batch[i]->StoredNewEvent()) continue;
    if (stored_later) batch[i]->SetMoreFollow();
    stored_later = true;
  }
  bool queued = false;
  {
    MutexLock lock(sync_mu_);
    if (wrote) ++committed_;
    // What this batch read may come from any commit so far, its own included: it completes once
    // all of them are synced. When they are and nothing waits before it, complete it here.
    queued = synced_ < committed_ || !unsynced_.empty() || finishing_;
    if (queued) unsynced_.push_back({committed_, std::move(batch), std::move(results)});
  }
  if (queued) {
    sync_cv_.notify_one();
  } else {
    FinishOps(batch, results);
  }
}

void SqliteStore::FinishOps(std::vector<std::unique_ptr<WriteOp>>& ops,
                            std::vector<Status>& results) {
  for (size_t i = 0; i < ops.size(); ++i) ops[i]->Finish(std::move(results[i]));
}

int SqliteStore::SyncWal() {
  if (wal_sync_hook_) return wal_sync_hook_(wal_fd_) == 0 ? 0 : (errno != 0 ? errno : EIO);
  return ::fdatasync(wal_fd_) == 0 ? 0 : errno;
}

void SqliteStore::SyncLoop() {
  NameThisThread("hr-store-sync");
  MutexLock lock(sync_mu_);
  for (;;) {
    sync_cv_.wait(lock, [this]() REQUIRES(sync_mu_) { return writer_done_ || !unsynced_.empty(); });
    if (unsynced_.empty()) return;  // the writer is done and everything is completed
    if (sync_error_.ok() && synced_ < unsynced_.front().needs) {
      // Covers every COMMIT returned so far: their pages are in the log file, whose data this
      // flushes whichever descriptor wrote them.
      const uint64_t target = committed_;
      lock.unlock();
      const int err = SyncWal();
      stat_syncs_.fetch_add(1, std::memory_order_relaxed);
      lock.lock();
      if (err == 0) {
        synced_ = std::max(synced_, target);
      } else if (sync_error_.ok()) {
        sync_error_ =
            Status::Unavailable("the store's write-ahead log " + wal_path_ +
                                " could not be synced to disk (fdatasync: " + std::strerror(err) +
                                "); no write is accepted until hookrelay is restarted");
        sync_failed_.store(true, std::memory_order_release);
      }
    }
    // Complete what is covered, in order; after a failed sync, fail what is not.
    std::vector<Unsynced> ready;
    while (!unsynced_.empty() && (unsynced_.front().needs <= synced_ || !sync_error_.ok())) {
      ready.push_back(std::move(unsynced_.front()));
      unsynced_.pop_front();
    }
    if (ready.empty()) continue;
    const Status failure = sync_error_;
    const uint64_t synced = synced_;  // only this thread changes it
    finishing_ = true;
    lock.unlock();
    for (Unsynced& u : ready) {
      if (u.needs > synced) {
        for (Status& r : u.results) {
          if (r.ok()) r = failure;
        }
      }
      FinishOps(u.ops, u.results);
    }
    ready.clear();
    lock.lock();
    finishing_ = false;
  }
}

void SqliteStore::RunClaimsFirst(std::vector<std::unique_ptr<WriteOp>>& batch) {
  // Claims need no transaction of their own: each of their statements reads what is committed
  // (no transaction is open on the writer here, and nothing else writes), and what they change
  // (leases, frontiers) lives in memory, changed only by this thread. Run now, a claim waits for
  // the batch before it, not also for the next one's commit: in the deliver benchmark a claim
  // waited 1.4 ms on average, up to 15 ms, while the destination's requests ran out
  // (docs/storage.md). What a claim read may be committed but not yet synced (a new event whose
  // 202 has not gone out), so it is answered through Handoff like any batch: at once when
  // everything committed is synced, else right after the sync under way (the sink never sees an
  // event before its sender was told it is stored).
  std::vector<std::unique_ptr<WriteOp>> claims;
  std::vector<Status> results;
  // After a failed sync nothing is claimed (as RunBatch writes nothing).
  std::optional<Status> refused;
  if (sync_failed_.load(std::memory_order_acquire)) {
    MutexLock lock(sync_mu_);
    refused = sync_error_;
  }
  size_t kept = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!batch[i]->claim) {
      batch[kept++] = std::move(batch[i]);
      continue;
    }
    WriteOp& op = *batch[i];
    Status s = refused ? *refused : RunOp(op, false);
    if (s.ok()) {
      MutexLock lock(leases_mu_);
      KeepInMemoryChanges(op);
    } else {
      UndoLeases(op);
    }
    results.push_back(std::move(s));
    claims.push_back(std::move(batch[i]));
  }
  batch.resize(kept);
  if (claims.empty()) return;
  const auto n = static_cast<int64_t>(claims.size());
  Handoff(std::move(claims), std::move(results), /*wrote=*/false);
  stat_claims_.fetch_add(n, std::memory_order_relaxed);
}

std::vector<Status> SqliteStore::RunBatch(std::vector<std::unique_ptr<WriteOp>>& batch,
                                          bool* wrote) {
  Connection& db = *writer_db_;
  const size_t n = batch.size();
  stat_batches_.fetch_add(1, std::memory_order_relaxed);
  stat_ops_.fetch_add(static_cast<int64_t>(n), std::memory_order_relaxed);
  int64_t largest = stat_largest_batch_.load(std::memory_order_relaxed);
  while (static_cast<int64_t>(n) > largest &&
         !stat_largest_batch_.compare_exchange_weak(largest, static_cast<int64_t>(n))) {
  }

  std::vector<Status> results(n);
  *wrote = false;
  if (sync_failed_.load(std::memory_order_acquire)) {
    MutexLock lock(sync_mu_);
    for (Status& r : results) r = sync_error_;
    return results;
  }
  // Rows inserted, updated or deleted by the batch's statements (rolled back ones too, which
  // only errs on the safe side): a batch that changed none (claims, reads) wrote nothing to the
  // log and needs no sync of its own. (Every write of the store is such a statement.)
  const int64_t changes_before = sqlite3_total_changes64(db.handle());
  // Normally one round: one transaction for the whole batch. But SQLite answers SQLITE_FULL (and
  // I/O errors) in a plain single-row statement by rolling back the whole transaction, not just
  // the statement. Then the operation that hit the error reports it, and the others of the round,
  // innocent, run again in a fresh transaction. Every round settles at least one operation, so
  // this ends; operations are pure functions of the database, so running one again is safe.
  //
  // The operations first run bare, without savepoints: a savepoint per operation costs a copy of
  // every page the operation touches (the statement journal) and two more statements, about a
  // tenth of the writer's time, and operations almost never fail. When one does fail (having
  // perhaps written part of its work), the whole transaction is rolled back and the batch runs
  // again with a savepoint around each operation, which keeps the failure to that operation.
  std::vector<size_t> pending(n);
  for (size_t i = 0; i < n; ++i) pending[i] = i;
  bool savepoints = false;
  while (!pending.empty()) {
    Status begin = db.Exec("BEGIN IMMEDIATE", "begin transaction");
    if (!begin.ok()) {
      UndoLeases(batch, pending);
      Status err = sqlite::TransactionError(begin);
      for (size_t i : pending) results[i] = err;
      stat_failed_commits_.fetch_add(1, std::memory_order_relaxed);
      break;
    }
    std::optional<size_t> culprit;  // position in `pending` of the op that lost the transaction
    bool bare_failure = false;      // an op failed with no savepoint to undo it alone
    for (size_t pos = 0; pos < pending.size() && !culprit && !bare_failure; ++pos) {
      const size_t i = pending[pos];
      results[i] = RunOp(*batch[i], savepoints);
      if (!db.InTransaction()) {
        culprit = pos;
        results[i] = sqlite::TransactionError(
            results[i].ok() ? Status::Unavailable("transaction rolled back by SQLite")
                            : results[i]);
      } else if (!results[i].ok() && !savepoints) {
        bare_failure = true;
      }
    }
    if (bare_failure) {
      UndoLeases(batch, pending);
      stat_savepoint_fallbacks_.fetch_add(1, std::memory_order_relaxed);
      Status undo = db.Exec("ROLLBACK", "rollback");
      if (!undo.ok() && db.InTransaction()) {  // never commit half an operation
        Status err = sqlite::TransactionError(undo);
        for (size_t i : pending) results[i] = err;
        stat_failed_commits_.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      savepoints = true;
      continue;
    }
    if (culprit) {
      UndoLeases(batch, pending);
      stat_failed_commits_.fetch_add(1, std::memory_order_relaxed);
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(*culprit));
      continue;
    }
    // The counters of the operations that succeeded, one row per (minute, destination). Should
    // this fail (a full disk), the batch fails as a failed COMMIT would.
    Status commit = FlushStats(batch, pending, results);
    if (commit.ok()) commit = db.Exec("COMMIT", "commit");
    if (commit.ok()) {
      *wrote = sqlite3_total_changes64(db.handle()) != changes_before;
      if (*wrote) stat_commits_.fetch_add(1, std::memory_order_relaxed);
      MutexLock lock(leases_mu_);
      for (size_t i : pending) {
        WriteOp& op = *batch[i];
        if (results[i].ok()) {
          KeepInMemoryChanges(op);
        } else {
          op.lease_undo.clear();
        }
      }
    } else {
      UndoLeases(batch, pending);
      // The batch reports the commit's error; should ROLLBACK fail too, the next batch's BEGIN
      // fails and reports it (nothing of this batch is committed either way).
      if (db.InTransaction()) (void)db.Exec("ROLLBACK", "rollback");
      Status err = sqlite::TransactionError(commit);
      for (size_t i : pending) results[i] = err;
      stat_failed_commits_.fetch_add(1, std::memory_order_relaxed);
    }
    break;
  }
  return results;
}

void SqliteStore::KeepInMemoryChanges(WriteOp& op) {
  op.lease_undo.clear();
  for (const auto& [dest, delta] : op.pending_delta) pending_[dest].count += delta;
  for (const auto& [dest, at] : op.frontier_moves) {
    auto it = pending_.find(dest);
    if (it != pending_.end()) it->second.frontier = std::max(it->second.frontier, at);
  }
}

Status SqliteStore::RunOp(WriteOp& op, bool savepoint) {
  op.stats.clear();
  op.pending_delta.clear();
  op.frontier_moves.clear();
  UndoLeases(op);  // what an earlier run of it left (normally nothing)
  op_ = &op;
  Status s = savepoint ? RunInSavepoint(op) : op.Run(*writer_db_);
  op_ = nullptr;
  if (!s.ok()) {
    op.stats.clear();
    op.pending_delta.clear();
    op.frontier_moves.clear();
  }
  return s;
}

void SqliteStore::SetLease(int64_t id, std::optional<Lease> lease) {
  MutexLock lock(leases_mu_);
  auto it = leases_.find(id);
  if (op_) {
    op_->lease_undo.emplace_back(
        id, it == leases_.end() ? std::nullopt : std::optional<Lease>(it->second));
  }
  if (lease) {
    leases_[id] = std::move(*lease);
  } else if (it != leases_.end()) {
    leases_.erase(it);
  }
}

void SqliteStore::UndoLeases(WriteOp& op) {
  if (op.lease_undo.empty()) return;
  MutexLock lock(leases_mu_);
  for (auto it = op.lease_undo.rbegin(); it != op.lease_undo.rend(); ++it) {
    if (it->second) {
      leases_[it->first] = std::move(*it->second);
    } else {
      leases_.erase(it->first);
    }
  }
  op.lease_undo.clear();
}

void SqliteStore::UndoLeases(const std::vector<std::unique_ptr<WriteOp>>& batch,
                             const std::vector<size_t>& pending) {
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) UndoLeases(*batch[*it]);
}

std::optional<int64_t> SqliteStore::PendingFrontier(const std::string& destination) const {
  MutexLock lock(leases_mu_);
  std::optional<int64_t> out;
  for (const auto& [dest, p] : pending_) {
    if (!destination.empty() && dest != destination) continue;
    if (!out || p.frontier < *out) out = p.frontier;
  }
  return out;
}

int64_t SqliteStore::UnleasedPending(const std::string& destination) const {
  MutexLock lock(leases_mu_);
  int64_t n = 0;
  for (const auto& [dest, p] : pending_) {
    if (destination.empty() || dest == destination) n += p.count;
  }
  for (const auto& [id, l] : leases_) {
    if (l.pending && (destination.empty() || l.destination == destination)) --n;
  }
  return std::max<int64_t>(n, 0);
}

std::optional<SqliteStore::Lease> SqliteStore::LeaseOf(int64_t id) const {
  MutexLock lock(leases_mu_);
  auto it = leases_.find(id);
  if (it == leases_.end()) return std::nullopt;
  return it->second;
}

void SqliteStore::OverlayLease(Delivery& d) const {
  if (std::optional<Lease> l = LeaseOf(d.id)) {  // claimed: in flight
    d.status = DeliveryStatus::kDelivering;
    d.lease_until = l->until;
    d.lease_owner = l->owner;
  }
}

std::string SqliteStore::LeasedIdsJson(const std::string& destination, bool current_only) const {
  std::string out = "[";
  MutexLock lock(leases_mu_);
  for (const auto& [id, l] : leases_) {
    if (!destination.empty() && l.destination != destination) continue;
    if (current_only && !l.current) continue;
    if (out.size() > 1) out += ',';
    out += std::to_string(id);
  }
  out += ']';
  return out;
}

Status SqliteStore::FlushStats(const std::vector<std::unique_ptr<WriteOp>>& batch,
                               const std::vector<size_t>& pending,
                               const std::vector<Status>& results) {
  StatsDelta sum;
  for (size_t i : pending) {
    if (!results[i].ok()) continue;
    for (const auto& [key, c] : batch[i]->stats) {
      StatsCounts& t = sum[key];
      t.received += c.received;
      t.delivered += c.delivered;
      t.failed += c.failed;
      t.attempts += c.attempts;
      t.attempt_failures += c.attempt_failures;
    }
  }
  if (sum.empty()) return Status::Ok();
  Connection& db = *writer_db_;
  Result<Statement> st = db.Prepare(
      "INSERT INTO stats_minute(minute, destination, received, delivered, failed, attempts,"
      " attempt_failures) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
      " ON CONFLICT(minute, destination) DO UPDATE SET"
      " received = received + excluded.received, delivered = delivered + excluded.delivered,"
      " failed = failed + excluded.failed, attempts = attempts + excluded.attempts,"
      " attempt_failures = attempt_failures + excluded.attempt_failures");
  if (!st.ok()) return sqlite::TransactionError(st.status());
  for (const auto& [key, c] : sum) {
    st->Reset();
    st->BindInt(1, key.first)
        .BindText(2, key.second)
        .BindInt(3, c.received)
        .BindInt(4, c.delivered)
        .BindInt(5, c.failed)
        .BindInt(6, c.attempts)
        .BindInt(7, c.attempt_failures);
    Status s = st->Exec("write the minute's counters");
    if (!s.ok()) return sqlite::TransactionError(s);
  }
  return Status::Ok();
}

Status SqliteStore::RunInSavepoint(WriteOp& op) {
  Connection& db = *writer_db_;
  HR_RETURN_IF_ERROR(db.Exec("SAVEPOINT op", "savepoint"));
  Status s = op.Run(db);
  if (s.ok()) s = db.Exec("RELEASE op", "release savepoint");
  if (!s.ok()) UndoLeases(op);
  if (!s.ok() && db.InTransaction()) {
    Status undo = db.Exec("ROLLBACK TO op", "rollback to savepoint");
    if (undo.ok()) undo = db.Exec("RELEASE op", "release savepoint");
    // Never commit half an operation: if it cannot be undone alone, undo the transaction.
    // (The operation's own error is the one to report; a failed ROLLBACK shows at the next BEGIN.)
    if (!undo.ok()) (void)db.Exec("ROLLBACK", "rollback");
  }
  return s;
}

SqliteStore::WriterStats SqliteStore::writer_stats() const {
  WriterStats s;
  s.ops = stat_ops_.load(std::memory_order_relaxed);
  s.batches = stat_batches_.load(std::memory_order_relaxed);
  s.commits = stat_commits_.load(std::memory_order_relaxed);
  s.failed_commits = stat_failed_commits_.load(std::memory_order_relaxed);
  s.largest_batch = stat_largest_batch_.load(std::memory_order_relaxed);
  s.savepoint_fallbacks = stat_savepoint_fallbacks_.load(std::memory_order_relaxed);
  s.syncs = stat_syncs_.load(std::memory_order_relaxed);
  s.claims = stat_claims_.load(std::memory_order_relaxed);
  return s;
}

Result<int64_t> SqliteStore::SetMaxPageCount(int64_t pages) {
  int64_t limit = pages > 0 ? pages : kSqliteMaxPageCount;
  return Write<int64_t>([limit](Connection& db) -> Result<int64_t> {
    Result<std::string> v = db.PragmaValue("max_page_count = " + std::to_string(limit));
    if (!v.ok()) return v.status();
    return static_cast<int64_t>(std::stoll(*v));
  });
}

Result<int64_t> SqliteStore::WriterTotalChanges() {
  return Write<int64_t>([](Connection& db) -> Result<int64_t> {
    return static_cast<int64_t>(sqlite3_total_changes64(db.handle()));
  });
}

void SqliteStore::RunOnWriter(std::function<void()> fn) {
  auto promise = std::make_shared<std::promise<Result<Unit>>>();
  Enqueue(std::make_unique<SyncOp<Unit>>(
      [fn = std::move(fn)](Connection&) -> Result<Unit> {
        fn();
        return Unit{};
      },
      std::move(promise)));
}

Result<std::string> SqliteStore::WriterPragma(const std::string& name) {
  return Write<std::string>(
      [name](Connection& db) -> Result<std::string> { return db.PragmaValue(name); });
}

// ---------------------------------------------------------------------------------------------
// Writes

void SqliteStore::AppendEvent(NewEvent event, AppendCallback done) {
  Enqueue(std::make_unique<AppendOp>(this, std::move(event), std::move(done)));
}

Status SqliteStore::Append(Connection& db, const NewEvent& ev, AppendResult* result) {
  // Strictly increasing, whatever the clock does. A run rolled back leaves a gap: harmless. The
  // stored receive time is the key's millisecond: when the clock steps back, events keep the last
  // time seen until the clock catches up, so a time range is exactly a key range.
  const int64_t key = std::max(last_event_key_ + 1, EventKeyFloor(ev.received_at));
  const TimePoint received_at = EventKeyTime(key);
  if (ev.dedup_key) {
    // Runs in the batch's transaction, after the appends queued before this one: a duplicate in
    // the same batch is found too. The window is a key range (keys are time-ordered).
    Result<Statement> q = db.Prepare(
        "SELECT id FROM events WHERE source = ?1 AND dedup_key = ?2 AND id >= ?3 "
        "ORDER BY id DESC LIMIT 1");
    if (!q.ok()) return q.status();
    q->BindText(1, ev.source)
        .BindText(2, *ev.dedup_key)
        .BindInt(3, EventKeyFloor(received_at - ev.dedup_window));
    Result<bool> row = q->Step("dedup lookup");
    if (!row.ok()) return row.status();
    if (*row) {
      result->id = EventIdFromKey(q->Int(0), event_id_bits_);
      result->duplicate = true;
      return Status::Ok();
    }
  }
  last_event_key_ = key;
  {
    const std::string headers = EncodeHeaders(ev.headers);
    Result<Statement> ins = db.Prepare(
        "INSERT INTO events(id, source, received_at, content_type, size, dedup_key, headers, body)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    if (!ins.ok()) return ins.status();
    ins->BindInt(1, key)
        .BindText(2, ev.source)
        .BindTime(3, received_at)
        .BindText(4, ev.content_type)
        .BindInt(5, static_cast<int64_t>(ev.body.size()))
        .BindOptText(6, ev.dedup_key)
        .BindBlob(7, headers)
        .BindBlob(8, ev.body);
    HR_RETURN_IF_ERROR(ins->Exec("insert event"));
  }
  if (op_) ++op_->stats[{UnixMinute(received_at), std::string()}].received;
  const TimePoint now = clock_.Now();
  for (const NewDelivery& d : ev.deliveries) {
    // Due when received (as ingest makes them): 'pending', in no index; they arrive in rowid
    // order, which is then their due order, and due at the stored receive time. Due at any other
    // time: 'scheduled', in the due index like a retry.
    const bool pending =
        d.status == DeliveryStatus::kScheduled && d.next_attempt_at == ev.received_at;
    const TimePoint due = pending ? received_at : d.next_attempt_at;
    Result<Statement> ins = db.Prepare(
        "INSERT INTO deliveries(event_id, destination, chain, status, attempts, max_attempts,"
        " next_attempt_at, reason, created_at, updated_at, order_key)"
        " VALUES (?1, ?2, 0, ?3, 0, ?4, ?5, ?6, ?7, ?7, ?8)");
    if (!ins.ok()) return ins.status();
    ins->BindInt(1, key)
        .BindText(2, d.destination)
        .BindText(3, pending ? std::string_view("pending") : DeliveryStatusName(d.status))
        .BindInt(4, d.max_attempts)
        .BindTime(5, due)
        .BindOptText(6, d.reason)
        .BindTime(7, now)
        .BindOptText(8, d.order_key);
    HR_RETURN_IF_ERROR(ins->Exec("insert delivery to " + d.destination));
    if (pending) {
      const int64_t id = db.LastInsertRowid();
      if (op_) ++op_->pending_delta[d.destination];
      MutexLock lock(leases_mu_);
      auto [it, added] = pending_.try_emplace(d.destination, Pending{0, id});
      if (!added) it->second.frontier = std::min(it->second.frontier, id);
    }
  }
  result->id = EventIdFromKey(key, event_id_bits_);
  result->duplicate = false;
  return Status::Ok();
}

namespace {

// Scheduled deliveries (of destination ?2 in the second form), oldest due first, from the due
// indexes; the ones leased in memory are skipped by the caller, so the walk is as long as the
// limit plus what is in flight.
// Destinations that have deliveries waiting for a retry or paused: a skip-scan of
// deliveries_waiting, one index probe per destination.
constexpr char kWaitingDestinationsSql[] =
    "WITH RECURSIVE d(name) AS ("
    " SELECT MIN(destination) FROM deliveries WHERE status IN ('scheduled', 'paused')"
    " UNION ALL SELECT (SELECT MIN(destination) FROM deliveries WHERE destination > d.name"
    "  AND status IN ('scheduled', 'paused')) FROM d WHERE d.name IS NOT NULL)"
    " SELECT name FROM d WHERE name IS NOT NULL";
// Per destination (the same skip-scan), how many wait for a retry and are due at ?1.
constexpr char kDueCountsSql[] =
    "WITH RECURSIVE d(name) AS ("
    " SELECT MIN(destination) FROM deliveries WHERE status IN ('scheduled', 'paused')"
    " UNION ALL SELECT (SELECT MIN(destination) FROM deliveries WHERE destination > d.name"
    "  AND status IN ('scheduled', 'paused')) FROM d WHERE d.name IS NOT NULL)"
    " SELECT name, (SELECT COUNT(*) FROM deliveries WHERE destination = d.name"
    " AND status = 'scheduled' AND status IN ('scheduled', 'paused') AND next_attempt_at <= ?1)"
    " FROM d WHERE name IS NOT NULL";
// Served by the covering index deliveries_waiting (the claim's walk reads no table row)...
constexpr char kDestinationScheduledSql[] =
    "SELECT id, next_attempt_at FROM deliveries WHERE destination = ?2 AND status = 'scheduled'"
    " AND status IN ('scheduled', 'paused') AND next_attempt_at <= ?1"
    " ORDER BY next_attempt_at, id";
// ...and with each row's order key (a table row each), for a walk that skips held deliveries.
constexpr char kDestinationScheduledKeysSql[] =
    "SELECT id, next_attempt_at, order_key FROM deliveries WHERE destination = ?2"
    " AND status = 'scheduled' AND status IN ('scheduled', 'paused') AND next_attempt_at <= ?1"
    " ORDER BY next_attempt_at, id";
// New deliveries from a frontier on, in rowid (arrival) order: a walk of the table itself.
constexpr char kPendingSql[] =
    "SELECT id, next_attempt_at, destination, order_key FROM deliveries WHERE id >= ?1"
    " AND status = 'pending' ORDER BY id";
constexpr char kDestinationPendingSql[] =
    "SELECT id, next_attempt_at, destination, order_key FROM deliveries WHERE id >= ?1"
    " AND destination = ?2 AND status = 'pending' ORDER BY id";
// The head of an ordered queue: the lowest id among its deliveries that are not final (the
// partial index deliveries_ordered; its WHERE terms are repeated so the planner may use it).
constexpr char kOrderHeadSql[] =
    "SELECT MIN(id) FROM deliveries WHERE destination = ?1 AND order_key = ?2"
    " AND order_key IS NOT NULL AND status IN ('pending', 'scheduled', 'paused')";
// How many blocked ordered deliveries one walk of new deliveries, or of those due for a retry,
// skips at most: beyond that, keys further back wait for a later claim (a whole-destination queue
// skips all but its head, so without a bound a long backlog would be walked at every claim).
constexpr int kMaxOrderedSkips = 4096;

}  // namespace

Result<std::vector<std::pair<TimePoint, int64_t>>> SqliteStore::ScheduledDue(
    Connection& db, const std::string& destination, TimePoint by, size_t limit,
    bool heads_only) const {
  std::vector<std::string> destinations;
  if (!destination.empty()) {
    destinations.push_back(destination);
  } else {
    Result<Statement> q = db.Prepare(kWaitingDestinationsSql);
    if (!q.ok()) return q.status();
    for (;;) {
      Result<bool> row = q->Step("destinations with waiting deliveries");
      if (!row.ok()) return row.status();
      if (!*row) break;
      destinations.push_back(q->Text(0));
    }
  }
  std::vector<std::pair<TimePoint, int64_t>> out;
  Result<Statement> q =
      db.Prepare(heads_only ? kDestinationScheduledKeysSql : kDestinationScheduledSql);
  if (!q.ok()) return q.status();
  for (const std::string& d : destinations) {
    q->Reset();
    q->BindInt(1, ToUnixMillis(by)).BindText(2, d);
    std::map<std::string, int64_t> heads;  // heads_only: each ordered queue's head, looked up once
    int ordered_skips = 0;
    for (size_t taken = 0; taken < limit;) {
      Result<bool> row = q->Step("find due deliveries");
      if (!row.ok()) return row.status();
      if (!*row) break;
      const int64_t id = q->Int(0);
      if (LeaseOf(id)) continue;
      if (std::optional<std::string> key = heads_only ? q->OptText(2) : std::nullopt) {
        // A resumed ordered delivery is not due until it is its queue's head.
        auto it = heads.find(*key);
        if (it == heads.end()) {
          Result<int64_t> head = OrderHeadId(db, d, *key);
          if (!head.ok()) return head.status();
          it = heads.emplace(std::move(*key), *head).first;
        }
        if (it->second != id) {
          if (++ordered_skips > kMaxOrderedSkips) break;
          continue;
        }
      }
      out.emplace_back(q->Time(1), id);
      ++taken;
    }
  }
  std::sort(out.begin(), out.end());
  if (out.size() > limit) out.resize(limit);
  return out;
}

Result<std::vector<std::pair<TimePoint, int64_t>>> SqliteStore::PendingDue(
    Connection& db, const std::string& destination, int64_t frontier, TimePoint by, size_t limit,
    std::optional<int64_t>* first) const {
  Result<Statement> q = db.Prepare(destination.empty() ? kPendingSql : kDestinationPendingSql);
  if (!q.ok()) return q.status();
  q->BindInt(1, frontier);
  if (!destination.empty()) q->BindText(2, destination);
  std::vector<std::pair<TimePoint, int64_t>> out;
  // Ordered queues (destination, key) seen in this walk: their head was met (claimable or in
  // flight), so every later delivery of theirs waits.
  std::set<std::pair<std::string, std::string>> queues_seen;
  int ordered_skips = 0;
  while (out.size() < limit) {
    Result<bool> row = q->Step("find new deliveries");
    if (!row.ok()) return row.status();
    if (!*row) break;
    const int64_t id = q->Int(0);
    if (first && !*first) *first = id;
    if (std::optional<std::string> key = q->OptText(3)) {
      auto [it, added] = queues_seen.emplace(q->Text(2), std::move(*key));
      if (!added) {
        if (++ordered_skips > kMaxOrderedSkips) break;
        continue;
      }
      Result<bool> head = IsOrderHead(db, id, it->first, it->second);
      if (!head.ok()) return head.status();
      if (!*head) continue;
    }
    if (LeaseOf(id) || q->Time(1) > by) continue;
    out.emplace_back(q->Time(1), id);
  }
  return out;
}

Result<std::vector<Delivery>> SqliteStore::ClaimDue(TimePoint now, int limit, Duration lease,
                                                    const std::string& owner,
                                                    const std::string& destination) {
  if (limit <= 0) return std::vector<Delivery>{};
  // The delivery engine asks every destination with spare capacity, most of the time in vain. A
  // look first (counters, then a reader) keeps those calls off the writer, where they would wait
  // for a commit (a reader sees every commit made before this call; what commits later waits for
  // the next). Something is claimable when a lease has expired, a new delivery is not leased, or
  // a delivery waiting for a retry is due and not leased.
  {
    bool any = UnleasedPending(destination) > 0;
    if (!any) {
      MutexLock lock(leases_mu_);
      for (const auto& [id, l] : leases_) {
        if (l.until <= now && (destination.empty() || l.destination == destination)) {
          any = true;
          break;
        }
      }
    }
    if (!any) {
      Result<Reader> reader = AcquireReader();
      if (!reader.ok()) return reader.status();
      Result<std::vector<std::pair<TimePoint, int64_t>>> due =
          ScheduledDue(**reader, destination, now, 1);
      if (!due.ok()) return due.status();
      any = !due->empty();
    }
    if (!any) return std::vector<Delivery>{};
  }
  return Write<std::vector<Delivery>>(
      [this, now, limit, lease, owner,
       destination](Connection& db) -> Result<std::vector<Delivery>> {
        return ClaimOnWriter(db, now, limit, lease, owner, destination);
      },
      /*claim=*/true);
}

Result<std::vector<Delivery>> SqliteStore::ClaimOnWriter(Connection& db, TimePoint now, int limit,
                                                         Duration lease, const std::string& owner,
                                                         const std::string& destination) {
  // Candidates by (due, id): leases expired at `now` (a crashed or stuck sender; due since they
  // expired), deliveries waiting for a retry that are due and not held (the due index), and new
  // deliveries not held (a walk from the frontier). The writer is the only thread that changes
  // leases, so what it reads here holds until it changes it.
  std::vector<std::pair<TimePoint, int64_t>> due;
  {
    MutexLock lock(leases_mu_);
    for (const auto& [id, l] : leases_) {
      if (l.until <= now && (destination.empty() || l.destination == destination)) {
        due.emplace_back(l.until, id);
      }
    }
  }
  std::sort(due.begin(), due.end());
  if (due.size() > static_cast<size_t>(limit)) due.resize(static_cast<size_t>(limit));
  {
    Result<std::vector<std::pair<TimePoint, int64_t>>> waiting =
        ScheduledDue(db, destination, now, static_cast<size_t>(limit));
    if (!waiting.ok()) return waiting.status();
    due.insert(due.end(), waiting->begin(), waiting->end());
  }
  if (std::optional<int64_t> frontier = PendingFrontier(destination)) {
    std::optional<int64_t> first;  // the lowest pending rowid seen, held or not
    Result<std::vector<std::pair<TimePoint, int64_t>>> fresh =
        PendingDue(db, destination, *frontier, now, static_cast<size_t>(limit), &first);
    if (!fresh.ok()) return fresh.status();
    due.insert(due.end(), fresh->begin(), fresh->end());
    if (!destination.empty() && op_) {
      // The frontier moves up to the first pending row (or past the end when there is none).
      // A claim runs outside any transaction (RunClaimsFirst), so it saw only committed rows,
      // and the move is applied as soon as it returns.
      if (first) {
        op_->frontier_moves[destination] = *first;
      } else {
        Result<Statement> m = db.Prepare("SELECT COALESCE(MAX(id), 0) + 1 FROM deliveries");
        if (!m.ok()) return m.status();
        Result<bool> row = m->Step("last delivery");
        if (!row.ok()) return row.status();
        if (*row) op_->frontier_moves[destination] = m->Int(0);
      }
    }
  }
  std::sort(due.begin(), due.end());
  if (due.size() > static_cast<size_t>(limit)) due.resize(static_cast<size_t>(limit));

  std::vector<Delivery> claimed;
  claimed.reserve(due.size());
  Result<Statement> q = db.Prepare(std::string("SELECT ") + kDeliveryColumns +
                                   ", current FROM deliveries WHERE id = ?1");
  if (!q.ok()) return q.status();
  for (const auto& [when, id] : due) {
    q->Reset();
    q->BindInt(1, id);
    Result<bool> row = q->Step("load due delivery");
    if (!row.ok()) return row.status();
    if (!*row) return Status::Internal("delivery " + std::to_string(id) + " vanished");
    Result<Delivery> d = ReadDelivery(*q, event_id_bits_);
    if (!d.ok()) return d.status();
    if (d->order_key) {
      // A retry due or a resumed delivery: claimable only as its queue's head, and one head per
      // queue per claim (a queue's head is claimed once; the rest of it waits for its result).
      Result<bool> head = IsOrderHead(db, id, d->destination, *d->order_key);
      if (!head.ok()) return head.status();
      if (!*head) continue;
    }
    const bool current = q->Int(16) != 0;
    const bool pending = q->Text(4) == "pending";
    d->status = DeliveryStatus::kDelivering;
    d->lease_until = now + lease;
    d->lease_owner = owner;
    SetLease(id, Lease{owner, now + lease, d->destination, d->next_attempt_at, current, pending});
    claimed.push_back(std::move(*d));
  }
  return claimed;
}

Status SqliteStore::WriteAttempt(Connection& db, const Attempt& attempt,
                                 const DeliveryUpdate& update, const std::string& owner,
                                 TimePoint now, bool* refused) {
  *refused = false;
  const std::string what = "delivery " + std::to_string(attempt.delivery_id);
  std::optional<Lease> lease = LeaseOf(attempt.delivery_id);
  if (!lease || lease->owner != owner) {
    Result<Statement> q = db.Prepare("SELECT 1 FROM deliveries WHERE id = ?1");
    if (!q.ok()) return q.status();
    q->BindInt(1, attempt.delivery_id);
    Result<bool> row = q->Step("look for delivery");
    if (!row.ok()) return row.status();
    *refused = true;
    if (!*row) return Status::NotFound(what + " not found");
    return Status::FailedPrecondition(what + " is not leased by " + owner);
  }
  // The lease names the destination: no RETURNING, which would cost the UPDATE an ephemeral
  // table per row (about a tenth of the writer's time when recording, measured).
  const std::string& destination = lease->destination;
  {
    Result<Statement> up = db.Prepare(
        // A chain a replay replaced while this attempt was out is not retried (see InsertReplay).
        "UPDATE deliveries SET"
        " status = CASE WHEN current = 0 AND ?2 IN ('scheduled', 'paused') THEN 'failed'"
        "  ELSE ?2 END,"
        " reason = CASE WHEN current = 0 AND ?2 IN ('scheduled', 'paused')"
        "  THEN 'replaced by a replay before it was delivered' ELSE ?8 END,"
        // Both from the old row: attempt n is counted, or not (Store::RecordAttempt).
        " attempts = CASE WHEN ?10 THEN ?3 - uncounted_attempts ELSE attempts END,"
        " uncounted_attempts = CASE WHEN ?10 THEN uncounted_attempts ELSE ?3 - attempts END,"
        " next_attempt_at = ?4, deadline = ?5,"
        " first_failure_at = ?6, last_delay_ms = ?7, updated_at = ?9"
        " WHERE id = ?1");
    if (!up.ok()) return up.status();
    up->BindInt(1, attempt.delivery_id)
        .BindText(2, DeliveryStatusName(update.status))
        .BindInt(3, attempt.n)
        .BindTime(4, update.next_attempt_at)
        .BindOptTime(5, update.deadline)
        .BindOptTime(6, update.first_failure_at)
        .BindInt(7, update.last_delay.count())
        .BindOptText(8, update.reason)
        .BindTime(9, now)
        .BindInt(10, attempt.counted ? 1 : 0);
    HR_RETURN_IF_ERROR(up->Exec("update delivery"));
    if (db.Changes() == 0) {
      *refused = true;
      return Status::NotFound(what + " not found");
    }
  }
  SetLease(attempt.delivery_id, std::nullopt);
  if (op_ && lease->pending) --op_->pending_delta[lease->destination];  // no longer 'pending'
  if (op_) {
    // The dashboard's counters: one attempt in the minute it is recorded, and the delivery's
    // outcome when this attempt made it final.
    StatsCounts& c = op_->stats[{UnixMinute(now), destination}];
    ++c.attempts;
    if (update.status == DeliveryStatus::kDelivered) {
      ++c.delivered;
    } else {
      ++c.attempt_failures;
      if (update.status == DeliveryStatus::kFailed) ++c.failed;
    }
  }
  Result<Statement> ins = db.Prepare(
      "INSERT INTO attempts(delivery_id, n, started_at, duration_ms, status_code, error,"
      " retry_after, snippet, probe, counted) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  if (!ins.ok()) return ins.status();
  std::optional<int64_t> code;
  if (attempt.status_code) code = *attempt.status_code;
  ins->BindInt(1, attempt.delivery_id)
      .BindInt(2, attempt.n)
      .BindTime(3, attempt.started_at)
      .BindInt(4, attempt.duration_ms)
      .BindOptInt(5, code)
      .BindOptText(6, attempt.error)
      .BindOptText(7, attempt.retry_after)
      .BindBlob(8, attempt.response_snippet)
      .BindInt(9, attempt.probe ? 1 : 0)
      .BindInt(10, attempt.counted ? 1 : 0);
  return ins->Exec("insert attempt");
}

Status SqliteStore::RecordAttempt(const Attempt& attempt, const DeliveryUpdate& update,
                                  const std::string& owner) {
  const TimePoint now = clock_.Now();
  Result<Unit> r =
      Write<Unit>([this, &attempt, &update, &owner, now](Connection& db) -> Result<Unit> {
        bool refused;
        HR_RETURN_IF_ERROR(WriteAttempt(db, attempt, update, owner, now, &refused));
        return Unit{};
      });
  return r.ok() ? Status::Ok() : r.status();
}

Result<int64_t> SqliteStore::ReleaseClaims(const std::vector<int64_t>& delivery_ids,
                                           const std::string& owner) {
  if (delivery_ids.empty()) return int64_t{0};
  // Leases change on the writer only. Normally this changes no row, but a chain that a replay
  // replaced while it was claimed is still 'scheduled' (InsertReplay leaves a leased chain to
  // its attempt): given back, it would be claimed and sent next to the replay. It is failed as
  // InsertReplay fails a chain waiting for a retry. This is rare (a destination paused between a
  // claim and its send), so every release is a durable write rather than a claim.
  return Write<int64_t>([this, &delivery_ids, &owner](Connection& db) -> Result<int64_t> {
    std::vector<std::pair<int64_t, Lease>> mine;
    for (int64_t id : delivery_ids) {
      std::optional<Lease> lease = LeaseOf(id);
      if (lease && lease->owner == owner) mine.emplace_back(id, std::move(*lease));
    }
    const TimePoint now = clock_.Now();
    for (const auto& [id, lease] : mine) {
      if (lease.current) continue;
      Result<Statement> up = db.Prepare(
          "UPDATE deliveries SET status = 'failed',"
          " reason = 'replaced by a replay before it was delivered', updated_at = ?2"
          " WHERE id = ?1 AND current = 0 AND status IN ('pending', 'scheduled', 'paused')");
      if (!up.ok()) return up.status();
      up->BindInt(1, id).BindTime(2, now);
      HR_RETURN_IF_ERROR(up->Exec("fail replaced delivery " + std::to_string(id)));
      if (op_ && lease.pending && db.Changes() > 0) --op_->pending_delta[lease.destination];
    }
    // The leases go only once every row change above has succeeded (a failed write rolls back).
    for (const auto& [id, lease] : mine) SetLease(id, std::nullopt);
    return static_cast<int64_t>(mine.size());
  });
}

std::vector<Status> SqliteStore::RecordAttempts(const std::vector<AttemptRecord>& records,
                                                const std::string& owner) {
  if (records.empty()) return {};
  const TimePoint now = clock_.Now();
  // One write operation for the whole batch. A record whose lease is gone is answered on its own
  // and writes nothing; any other error fails the operation, which the writer rolls back alone.
  Result<std::vector<Status>> r = Write<std::vector<Status>>(
      [this, &records, &owner, now](Connection& db) -> Result<std::vector<Status>> {
        std::vector<Status> out;
        out.reserve(records.size());
        for (const AttemptRecord& rec : records) {
          bool refused;
          Status st = WriteAttempt(db, rec.attempt, rec.update, owner, now, &refused);
          if (!st.ok() && !refused) return st;
          out.push_back(std::move(st));
        }
        return out;
      });
  if (!r.ok()) return std::vector<Status>(records.size(), r.status());
  return std::move(*r);
}

namespace {

// Writes the destination's breaker columns (its pause columns are left as they are). `verb` names
// the caller in an error ("store", "update").
Status WriteBreakerRow(Connection& db, const std::string& destination,
                       const policy::BreakerSnapshot& snapshot, std::string_view verb) {
  Result<Statement> up = db.Prepare(
      "INSERT INTO breakers(destination, state, consecutive_failures, trips, open_until,"
      " closed_since, probe_in_flight) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
      " ON CONFLICT(destination) DO UPDATE SET state = excluded.state,"
      " consecutive_failures = excluded.consecutive_failures, trips = excluded.trips,"
      " open_until = excluded.open_until, closed_since = excluded.closed_since,"
      " probe_in_flight = excluded.probe_in_flight");
  if (!up.ok()) return up.status();
  up->BindText(1, destination)
      .BindText(2, policy::BreakerStateName(snapshot.state))
      .BindInt(3, snapshot.consecutive_failures)
      .BindInt(4, snapshot.trips)
      .BindOptTime(5, snapshot.open_until)
      .BindOptTime(6, snapshot.closed_since)
      .BindInt(7, snapshot.probe_in_flight ? 1 : 0);
  return up->Exec(std::string(verb) + " breaker of " + destination);
}

}  // namespace

Status SqliteStore::PutBreaker(const std::string& destination,
                               const policy::BreakerSnapshot& snapshot) {
  Result<Unit> r = Write<Unit>([&destination, &snapshot](Connection& db) -> Result<Unit> {
    HR_RETURN_IF_ERROR(WriteBreakerRow(db, destination, snapshot, "store"));
    return Unit{};
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<int64_t> SqliteStore::PauseDeliveries(const std::string& destination,
                                             const std::string& reason) {
  const TimePoint now = clock_.Now();
  return Write<int64_t>([this, &destination, &reason, now](Connection& db) -> Result<int64_t> {
    return PauseDeliveriesIn(db, destination, reason, now);
  });
}

Result<int64_t> SqliteStore::PauseDeliveriesIn(Connection& db, const std::string& destination,
                                               const std::string& reason, TimePoint now) {
  // Those in flight (leased in memory; their rows read as pending or scheduled) finish their
  // attempt. New ones are found from the frontier on; retries by the due index.
  const std::string leased = LeasedIdsJson(destination, false);
  int64_t changed = 0;
  if (std::optional<int64_t> frontier = PendingFrontier(destination)) {
    Result<Statement> up = db.Prepare(
        "UPDATE deliveries SET status = 'paused', reason = ?2, updated_at = ?3"
        " WHERE id >= ?5 AND destination = ?1 AND status = 'pending'"
        " AND id NOT IN (SELECT value FROM json_each(?4))");
    if (!up.ok()) return up.status();
    up->BindText(1, destination)
        .BindText(2, reason)
        .BindTime(3, now)
        .BindText(4, leased)
        .BindInt(5, *frontier);
    HR_RETURN_IF_ERROR(up->Exec("pause new deliveries to " + destination));
    changed += db.Changes();
    if (op_) op_->pending_delta[destination] -= db.Changes();
  }
  Result<Statement> up = db.Prepare(
      "UPDATE deliveries SET status = 'paused', reason = ?2, updated_at = ?3"
      " WHERE destination = ?1 AND status = 'scheduled' AND status IN ('scheduled', 'paused')"
      " AND id NOT IN (SELECT value FROM json_each(?4))");
  if (!up.ok()) return up.status();
  up->BindText(1, destination).BindText(2, reason).BindTime(3, now).BindText(4, leased);
  HR_RETURN_IF_ERROR(up->Exec("pause deliveries to " + destination));
  return changed + db.Changes();
}

Result<int64_t> SqliteStore::ResumeDeliveries(const std::string& destination, TimePoint now) {
  return Write<int64_t>([&destination, now](Connection& db) -> Result<int64_t> {
    return ResumeDeliveriesIn(db, destination, now);
  });
}

Result<int64_t> SqliteStore::ResumeDeliveriesIn(Connection& db, const std::string& destination,
                                                TimePoint now) {
  Result<Statement> up = db.Prepare(
      "UPDATE deliveries SET status = 'scheduled', next_attempt_at = ?2, reason = NULL,"
      " updated_at = ?2 WHERE destination = ?1 AND status = 'paused'"
      " AND status IN ('scheduled', 'paused')");
  if (!up.ok()) return up.status();
  up->BindText(1, destination).BindTime(2, now);
  HR_RETURN_IF_ERROR(up->Exec("resume deliveries to " + destination));
  return db.Changes();
}

// ---- Shared breaker and pause (one row of `breakers` per destination) ----

namespace {

constexpr char kControlColumns[] =
    "state, consecutive_failures, trips, open_until, closed_since, probe_in_flight,"
    " paused_reason, paused_since";

// The row's columns (kControlColumns) from `col`.
Result<DestinationControl> ReadControl(const Statement& q, int col) {
  DestinationControl c;
  const std::string state = q.Text(col);
  std::optional<policy::BreakerState> parsed = ParseBreakerStateName(state);
  if (!parsed) return Status::Internal("unknown breaker state in the database: " + state);
  c.breaker.state = *parsed;
  c.breaker.consecutive_failures = static_cast<int>(q.Int(col + 1));
  c.breaker.trips = static_cast<int>(q.Int(col + 2));
  c.breaker.open_until = q.OptTime(col + 3);
  c.breaker.closed_since = q.OptTime(col + 4);
  c.breaker.probe_in_flight = q.Int(col + 5) != 0;
  if (std::optional<TimePoint> since = q.OptTime(col + 7)) {
    c.pause = DestinationPause{q.OptText(col + 6).value_or(""), *since};
  }
  return c;
}

}  // namespace

Result<std::vector<policy::BreakerStep>> SqliteStore::UpdateBreaker(
    const std::string& destination, const policy::BreakerConfig& config,
    const std::vector<BreakerInputAt>& inputs) {
  if (inputs.empty()) return Status::InvalidArgument("no breaker inputs", "inputs");
  // On the writer: every write is serialised there, so reading, applying and writing the row in
  // one operation is atomic (this process is the only one using the data directory).
  return Write<std::vector<policy::BreakerStep>>(
      [&](Connection& db) -> Result<std::vector<policy::BreakerStep>> {
        policy::BreakerSnapshot before;
        {
          Result<Statement> q = db.Prepare(std::string("SELECT ") + kControlColumns +
                                           " FROM breakers WHERE destination = ?1");
          if (!q.ok()) return q.status();
          q->BindText(1, destination);
          HR_ASSIGN_OR_RETURN(bool row, q->Step("read breaker of " + destination));
          if (row) {
            HR_ASSIGN_OR_RETURN(DestinationControl c, ReadControl(*q, 0));
            before = c.breaker;
          }
        }
        std::vector<policy::BreakerStep> steps;
        steps.reserve(inputs.size());
        policy::BreakerSnapshot s = before;
        for (const BreakerInputAt& in : inputs) {
          steps.push_back(policy::ApplyBreakerInput(config, s, in.input, in.at));
          s = steps.back().after;
        }
        if (s == before) return steps;
        HR_RETURN_IF_ERROR(WriteBreakerRow(db, destination, s, "update"));
        return steps;
      });
}

Result<DestinationControl> SqliteStore::GetDestinationControl(const std::string& destination) {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(std::string("SELECT ") + kControlColumns +
                                       " FROM breakers WHERE destination = ?1");
  if (!q.ok()) return q.status();
  q->BindText(1, destination);
  HR_ASSIGN_OR_RETURN(bool row, q->Step("get control of " + destination));
  if (!row) return DestinationControl{};
  return ReadControl(*q, 0);
}

Result<std::map<std::string, DestinationControl>> SqliteStore::ListDestinationControls() {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q =
      (*db)->Prepare(std::string("SELECT destination, ") + kControlColumns + " FROM breakers");
  if (!q.ok()) return q.status();
  std::map<std::string, DestinationControl> out;
  for (;;) {
    HR_ASSIGN_OR_RETURN(bool row, q->Step("list destination controls"));
    if (!row) break;
    HR_ASSIGN_OR_RETURN(DestinationControl c, ReadControl(*q, 1));
    out.emplace(q->Text(0), std::move(c));
  }
  return out;
}

Result<int64_t> SqliteStore::PauseDestination(const std::string& destination,
                                              const std::string& reason, TimePoint now) {
  return Write<int64_t>([&](Connection& db) -> Result<int64_t> {
    Result<Statement> up = db.Prepare(
        "INSERT INTO breakers(destination, state, consecutive_failures, trips, probe_in_flight,"
        " paused_reason, paused_since) VALUES (?1, 'closed', 0, 0, 0, ?2, ?3)"
        " ON CONFLICT(destination) DO UPDATE SET paused_reason = excluded.paused_reason,"
        " paused_since = COALESCE(breakers.paused_since, excluded.paused_since)");
    if (!up.ok()) return up.status();
    up->BindText(1, destination).BindText(2, reason).BindTime(3, now);
    HR_RETURN_IF_ERROR(up->Exec("pause " + destination));
    return PauseDeliveriesIn(db, destination, reason, now);
  });
}

Result<int64_t> SqliteStore::ResumeDestination(const std::string& destination, TimePoint now) {
  return Write<int64_t>([&](Connection& db) -> Result<int64_t> {
    Result<Statement> up = db.Prepare(
        "UPDATE breakers SET paused_reason = NULL, paused_since = NULL WHERE destination = ?1");
    if (!up.ok()) return up.status();
    up->BindText(1, destination);
    HR_RETURN_IF_ERROR(up->Exec("resume " + destination));
    return ResumeDeliveriesIn(db, destination, now);
  });
}

Result<int64_t> SqliteStore::OrderHeadId(Connection& db, const std::string& destination,
                                         const std::string& order_key) {
  Result<Statement> q = db.Prepare(kOrderHeadSql);
  if (!q.ok()) return q.status();
  q->BindText(1, destination).BindText(2, order_key);
  Result<bool> row = q->Step("head of an ordered queue");
  if (!row.ok()) return row.status();
  return *row && !q->IsNull(0) ? q->Int(0) : int64_t{0};
}

Result<bool> SqliteStore::IsOrderHead(Connection& db, int64_t id, const std::string& destination,
                                      const std::string& order_key) {
  Result<int64_t> head = OrderHeadId(db, destination, order_key);
  if (!head.ok()) return head.status();
  return *head == id;
}

Result<std::optional<Delivery>> SqliteStore::OrderHead(const std::string& destination,
                                                       const std::string& order_key) {
  Result<Reader> reader = AcquireReader();
  if (!reader.ok()) return reader.status();
  Connection& db = **reader;
  Result<Statement> q = db.Prepare(kOrderHeadSql);
  if (!q.ok()) return q.status();
  q->BindText(1, destination).BindText(2, order_key);
  Result<bool> row = q->Step("head of an ordered queue");
  if (!row.ok()) return row.status();
  if (!*row || q->IsNull(0)) return std::optional<Delivery>();
  const int64_t id = q->Int(0);
  Result<Delivery> d = LoadDelivery(db, id, event_id_bits_);
  if (!d.ok()) return d.status();
  OverlayLease(*d);
  return std::optional<Delivery>(std::move(*d));
}

Result<HeldQueues> SqliteStore::ListHeldQueues(const std::string& destination, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  Result<Reader> reader = AcquireReader();
  if (!reader.ok()) return reader.status();
  Connection& db = **reader;
  // One pass over the destination's open ordered deliveries (deliveries_ordered, whose WHERE
  // terms are repeated so the planner may use it): each queue's head and size; then, for the
  // queues that hold something, when the oldest delivery behind the head was created.
  Result<Statement> q = db.Prepare(
      "WITH q AS (SELECT order_key AS k, MIN(id) AS head, COUNT(*) AS n FROM deliveries"
      "  WHERE destination = ?1 AND order_key IS NOT NULL"
      "  AND status IN ('pending', 'scheduled', 'paused') GROUP BY order_key HAVING COUNT(*) > 1)"
      " SELECT k, head, n - 1,"
      "  (SELECT MIN(created_at) FROM deliveries d WHERE d.destination = ?1 AND d.order_key = q.k"
      "   AND d.order_key IS NOT NULL AND d.status IN ('pending', 'scheduled', 'paused')"
      "   AND d.id > q.head) AS since,"
      "  COUNT(*) OVER ()"
      " FROM q ORDER BY since, head LIMIT ?2");
  if (!q.ok()) return q.status();
  q->BindText(1, destination).BindInt(2, limit);
  HeldQueues held;
  for (;;) {
    Result<bool> row = q->Step("held ordered queues");
    if (!row.ok()) return row.status();
    if (!*row) break;
    HeldQueue h;
    h.order_key = q->Text(0);
    h.head.id = q->Int(1);
    h.waiting = q->Int(2);
    h.waiting_since = q->Time(3);
    held.total = q->Int(4);
    held.queues.push_back(std::move(h));
  }
  for (HeldQueue& h : held.queues) {
    Result<Delivery> d = LoadDelivery(db, h.head.id, event_id_bits_);
    if (!d.ok()) return d.status();
    h.head = std::move(*d);
    OverlayLease(h.head);
  }
  return held;
}

// Starts one replay chain (CreateReplay, CreateReplays); returns its delivery id, or kNotFound
// when the event does not exist.
Result<int64_t> SqliteStore::InsertReplay(Connection& db, const std::string& event_id,
                                          const std::string& destination, int max_attempts,
                                          TimePoint due) {
  const std::optional<int64_t> key = EventKeyFromId(event_id, event_id_bits_);
  if (!key) return Status::NotFound("event " + event_id + " not found");
  int64_t chain = 0;
  int64_t in_flight = 0;                 // the id of the current chain's delivery when it is leased
  std::optional<std::string> order_key;  // the latest chain's: the replay queues at its tail
  {
    Result<Statement> q = db.Prepare(
        "SELECT EXISTS (SELECT 1 FROM events WHERE id = ?1),"
        " (SELECT COALESCE(MAX(chain), -1) + 1 FROM deliveries"
        "  WHERE event_id = ?1 AND destination = ?2),"
        " (SELECT order_key FROM deliveries WHERE event_id = ?1 AND destination = ?2"
        "  ORDER BY chain DESC LIMIT 1)");
    if (!q.ok()) return q.status();
    q->BindInt(1, *key).BindText(2, destination);
    Result<bool> row = q->Step("replay lookup");
    if (!row.ok()) return row.status();
    if (!*row || q->Int(0) == 0) return Status::NotFound("event " + event_id + " not found");
    chain = q->Int(1);
    order_key = q->OptText(2);
  }
  {
    // The chain in flight, if any: leased in memory, its row still reads as scheduled.
    Result<Statement> q = db.Prepare(
        "SELECT id, status FROM deliveries WHERE event_id = ?1 AND destination = ?2"
        " AND current = 1");
    if (!q.ok()) return q.status();
    q->BindInt(1, *key).BindText(2, destination);
    for (;;) {
      Result<bool> row = q->Step("current chain of " + event_id);
      if (!row.ok()) return row.status();
      if (!*row) break;
      if (std::optional<Lease> l = LeaseOf(q->Int(0))) {
        l->current = false;
        SetLease(q->Int(0), std::move(*l));
        in_flight = q->Int(0);
      } else if (q->Text(1) == "pending" && op_) {
        --op_->pending_delta[destination];  // stopped below: no longer pending
      }
    }
  }
  {
    // The new chain becomes the current one; the ones before stay as history. A chain still
    // waiting for a retry (or paused) is stopped, or the event would go out twice: once through
    // the replay, once more when the old chain's retry comes due. One in flight (leased) finishes
    // its attempt; WriteAttempt schedules no retry for it.
    Result<Statement> up = db.Prepare(
        "UPDATE deliveries SET current = 0,"
        " reason = CASE WHEN status IN ('pending', 'scheduled', 'paused') AND id <> ?4 THEN ?3"
        "  ELSE reason END,"
        " status = CASE WHEN status IN ('pending', 'scheduled', 'paused') AND id <> ?4"
        "  THEN 'failed' ELSE status END"
        " WHERE event_id = ?1 AND destination = ?2 AND current = 1");
    if (!up.ok()) return up.status();
    const std::string replaced =  // bound, not copied: lives until Exec
        "replaced by replay chain " + std::to_string(chain) + " before it was delivered";
    up->BindInt(1, *key).BindText(2, destination).BindText(3, replaced).BindInt(4, in_flight);
    HR_RETURN_IF_ERROR(up->Exec("supersede the chains of " + event_id));
  }
  Result<Statement> ins = db.Prepare(
      "INSERT INTO deliveries(event_id, destination, chain, status, attempts,"
      " max_attempts, next_attempt_at, created_at, updated_at, order_key)"
      " VALUES (?1, ?2, ?3, 'scheduled', 0, ?4, ?5, ?5, ?5, ?6)");
  if (!ins.ok()) return ins.status();
  ins->BindInt(1, *key)
      .BindText(2, destination)
      .BindInt(3, chain)
      .BindInt(4, max_attempts)
      .BindTime(5, due)
      .BindOptText(6, order_key);
  HR_RETURN_IF_ERROR(ins->Exec("insert replay of " + event_id));
  return db.LastInsertRowid();
}

Result<Delivery> SqliteStore::CreateReplay(const std::string& event_id,
                                           const std::string& destination, int max_attempts,
                                           TimePoint now) {
  return Write<Delivery>(
      [this, &event_id, &destination, max_attempts, now](Connection& db) -> Result<Delivery> {
        Result<int64_t> id = InsertReplay(db, event_id, destination, max_attempts, now);
        if (!id.ok()) return id.status();
        return LoadDelivery(db, *id, event_id_bits_);
      });
}

Result<int64_t> SqliteStore::CreateReplays(const std::vector<NewReplay>& replays) {
  if (replays.empty()) return int64_t{0};
  return Write<int64_t>([this, &replays](Connection& db) -> Result<int64_t> {
    int64_t created = 0;
    for (const NewReplay& r : replays) {
      Result<int64_t> id = InsertReplay(db, r.event_id, r.destination, r.max_attempts, r.due);
      if (id.ok()) {
        ++created;
      } else if (id.status().code() != Status::Code::kNotFound) {
        return id.status();
      }
    }
    return created;
  });
}

Result<int64_t> SqliteStore::PurgeEventsBefore(TimePoint cutoff, int batch) {
  if (batch <= 0) return int64_t{0};
  // The dashboard's counters are read for at most 7 days back (GET /api/v1/stats): older minutes
  // go with each purge pass (a range of the primary key; usually nothing).
  const int64_t stats_cutoff = UnixMinute(clock_.Now() - std::chrono::days(8));
  return Write<int64_t>([cutoff, batch, stats_cutoff](Connection& db) -> Result<int64_t> {
    {
      Result<Statement> old = db.Prepare("DELETE FROM stats_minute WHERE minute < ?1");
      if (!old.ok()) return old.status();
      old->BindInt(1, stats_cutoff);
      HR_RETURN_IF_ERROR(old->Exec("purge old stats"));
    }
    // Deliveries and attempts go with their events (ON DELETE CASCADE). An event with a
    // delivery still under way (scheduled, delivering, paused) is kept: retention never turns a
    // pending delivery into a silent loss.
    // The cutoff is a key range of the events table itself (keys are time-ordered).
    Result<Statement> del = db.Prepare(
        "DELETE FROM events WHERE id IN"
        " (SELECT e.id FROM events e WHERE e.id < ?1 AND NOT EXISTS"
        "   (SELECT 1 FROM deliveries d WHERE d.event_id = e.id"
        "    AND d.status NOT IN ('delivered', 'failed'))"
        "  ORDER BY e.id LIMIT ?2)");
    if (!del.ok()) return del.status();
    del->BindInt(1, EventKeyFloor(cutoff)).BindInt(2, batch);
    HR_RETURN_IF_ERROR(del->Exec("purge events"));
    return db.Changes();  // counts the events only, not the cascaded rows
  });
}

namespace {

Status InsertAudit(Connection& db, const AuditEntry& entry) {
  Result<Statement> ins = db.Prepare(
      "INSERT INTO audit(at, actor, action, target, count, detail)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!ins.ok()) return ins.status();
  ins->BindTime(1, entry.at)
      .BindText(2, entry.actor)
      .BindText(3, entry.action)
      .BindText(4, entry.target)
      .BindInt(5, entry.count)
      .BindText(6, entry.detail);
  return ins->Exec("append audit entry " + entry.action);
}

}  // namespace

Status SqliteStore::AppendAudit(const AuditEntry& entry) {
  if (entry.action.empty()) return Status::InvalidArgument("audit action is empty", "action");
  Result<Unit> r = Write<Unit>([&entry](Connection& db) -> Result<Unit> {
    HR_RETURN_IF_ERROR(InsertAudit(db, entry));
    return Unit{};
  });
  return r.ok() ? Status::Ok() : r.status();
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

Result<std::optional<Event>> SqliteStore::GetEvent(const std::string& id) {
  const std::optional<int64_t> key = EventKeyFromId(id, event_id_bits_);
  if (!key) return std::optional<Event>();  // not an id of this store: no such event
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(std::string("SELECT ") + kEventColumns +
                                       ", e.body FROM events e WHERE e.id = ?1");
  if (!q.ok()) return q.status();
  q->BindInt(1, *key);
  Result<bool> row = q->Step("get event " + id);
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Event>();
  Result<Event> e = ReadEvent(*q, 7, event_id_bits_);
  if (!e.ok()) return e.status();
  return std::optional<Event>(std::move(*e));
}

Result<std::vector<std::optional<Event>>> SqliteStore::GetEvents(
    const std::vector<std::string>& ids) {
  std::vector<std::optional<Event>> out(ids.size());
  if (ids.empty()) return out;
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  // One read transaction for all of them: each lookup on its own would take and release the
  // WAL's read lock (fcntl calls on the -shm), which costs more than the lookup.
  HR_RETURN_IF_ERROR((*db)->Exec("BEGIN", "begin read"));
  Status st = Status::Ok();
  {
    Result<Statement> q = (*db)->Prepare(std::string("SELECT ") + kEventColumns +
                                         ", e.body FROM events e WHERE e.id = ?1");
    if (!q.ok()) st = q.status();
    for (size_t i = 0; i < ids.size() && st.ok(); ++i) {
      const std::optional<int64_t> key = EventKeyFromId(ids[i], event_id_bits_);
      if (!key) continue;  // not an id of this store: no such event
      q->Reset();
      q->BindInt(1, *key);
      Result<bool> row = q->Step("get events");
      if (!row.ok()) {
        st = row.status();
      } else if (*row) {
        Result<Event> e = ReadEvent(*q, 7, event_id_bits_);
        if (!e.ok()) {
          st = e.status();
        } else {
          out[i] = std::move(*e);
        }
      }
    }
  }
  Status end = (*db)->Exec("COMMIT", "end read");
  // A reader goes back to the pool: never with its transaction still open.
  if (!end.ok() && (*db)->InTransaction()) (void)(*db)->Exec("ROLLBACK", "end read");
  if (!st.ok()) return st;
  if (!end.ok()) return end;
  return out;
}

Result<EventPage> SqliteStore::ListEvents(const EventFilter& filter, const std::string& cursor,
                                          int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  // Cursors are event ids; anything else was not made here.
  std::optional<int64_t> after;
  if (!cursor.empty()) {
    after = EventKeyFromId(cursor, event_id_bits_);
    if (!after) return BadCursor();
  }
  // Only the filters in use appear in the SQL, so the planner sees plain conditions. Parameter
  // numbers are fixed; ?7 (the limit) is always present, which makes ?1..?6 valid to bind even
  // when unused.
  std::string sql = std::string("SELECT ") + kEventColumns + " FROM events e WHERE 1 = 1";
  if (!cursor.empty()) sql += " AND e.id < ?1";
  if (filter.source) sql += " AND e.source = ?2";
  // A time range is a key range of the events table (keys are time-ordered).
  if (filter.since) sql += " AND e.id >= ?3";
  if (filter.until) sql += " AND e.id < ?4";
  if (filter.status || filter.destination) {
    // Both set: one delivery must match both (a failed delivery *to* that destination). One
    // probe of deliveries_event per event: `+d.status` keeps the planner off the status indexes,
    // which would walk every delivery in that status for each event.
    sql += " AND EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id";
    // Claims live in memory (?8, the leased ids): a leased delivery reads as scheduled on disk
    // but is delivering.
    if (filter.status == DeliveryStatus::kDelivering) {
      sql += " AND d.current = 1 AND d.id IN (SELECT value FROM json_each(?8))";
    } else if (filter.status == DeliveryStatus::kScheduled) {
      sql +=
          " AND +d.status IN ('pending', 'scheduled') AND d.current = 1"
          " AND d.id NOT IN (SELECT value FROM json_each(?8))";
    } else if (filter.status) {
      sql += " AND +d.status = ?5 AND d.current = 1";
    }
    if (filter.destination) sql += " AND +d.destination = ?6";
    sql += ")";
  }
  sql += " ORDER BY e.id DESC LIMIT ?7";

  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(sql);
  if (!q.ok()) return q.status();
  const std::string status =
      filter.status ? std::string(DeliveryStatusName(*filter.status)) : std::string();
  const std::string leased =
      filter.status == DeliveryStatus::kDelivering || filter.status == DeliveryStatus::kScheduled
          ? LeasedIdsJson("", true)
          : std::string("[]");
  q->BindInt(1, after.value_or(0))
      .BindOptText(2, filter.source)
      .BindInt(3, filter.since ? EventKeyFloor(*filter.since) : 0)
      .BindInt(4, filter.until ? EventKeyFloor(*filter.until) : 0)
      .BindText(5, status)
      .BindOptText(6, filter.destination)
      .BindInt(7, limit + 1);  // one more than asked tells whether a next page exists
  if (filter.status == DeliveryStatus::kDelivering || filter.status == DeliveryStatus::kScheduled) {
    q->BindText(8, leased);
  }
  EventPage page;
  for (;;) {
    Result<bool> row = q->Step("list events");
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_cursor = page.items.back().id;
      break;
    }
    Result<Event> e = ReadEvent(*q, -1, event_id_bits_);
    if (!e.ok()) return e.status();
    page.items.push_back(std::move(*e));
  }
  // Each event's current deliveries: one probe of deliveries_event per event on the page.
  Result<Statement> cur = (*db)->Prepare(
      "SELECT destination, status, chain, id FROM deliveries WHERE event_id = ?1 AND current = 1"
      " ORDER BY destination");
  if (!cur.ok()) return cur.status();
  for (Event& e : page.items) {
    cur->Reset();
    cur->BindInt(1, EventKeyFromId(e.id, event_id_bits_).value_or(0));
    for (;;) {
      Result<bool> row = cur->Step("current deliveries of " + e.id);
      if (!row.ok()) return row.status();
      if (!*row) break;
      CurrentDelivery c;
      c.destination = cur->Text(0);
      const std::string status = cur->Text(1);
      std::optional<DeliveryStatus> parsed = ParseStoredStatus(status);
      if (!parsed) return Status::Internal("unknown delivery status in the database: " + status);
      c.status = LeaseOf(cur->Int(3)) ? DeliveryStatus::kDelivering : *parsed;
      c.chain = static_cast<int>(cur->Int(2));
      e.current.push_back(std::move(c));
    }
  }
  return page;
}

Result<std::vector<Delivery>> SqliteStore::GetDeliveries(const std::string& event_id) {
  const std::optional<int64_t> key = EventKeyFromId(event_id, event_id_bits_);
  if (!key) return std::vector<Delivery>{};
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(std::string("SELECT ") + kDeliveryColumns +
                                       " FROM deliveries WHERE event_id = ?1 ORDER BY id");
  if (!q.ok()) return q.status();
  q->BindInt(1, *key);
  Result<std::vector<Delivery>> out =
      ReadDeliveries(*q, "get deliveries of " + event_id, event_id_bits_);
  if (!out.ok()) return out;
  for (Delivery& d : *out) OverlayLease(d);
  return out;
}

Result<std::vector<Attempt>> SqliteStore::GetAttempts(int64_t delivery_id) {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(
      "SELECT delivery_id, n, started_at, duration_ms, status_code, error, retry_after, snippet,"
      " probe, counted FROM attempts WHERE delivery_id = ?1 ORDER BY n");
  if (!q.ok()) return q.status();
  q->BindInt(1, delivery_id);
  std::vector<Attempt> out;
  for (;;) {
    Result<bool> row = q->Step("get attempts");
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Attempt a;
    a.delivery_id = q->Int(0);
    a.n = static_cast<int>(q->Int(1));
    a.started_at = q->Time(2);
    a.duration_ms = q->Int(3);
    if (!q->IsNull(4)) a.status_code = static_cast<int>(q->Int(4));
    a.error = q->OptText(5);
    a.retry_after = q->OptText(6);
    a.response_snippet = q->Blob(7);
    a.probe = q->Int(8) != 0;
    a.counted = q->Int(9) != 0;
    out.push_back(std::move(a));
  }
}

Result<std::optional<TimePoint>> SqliteStore::NextDueAt(const std::string& destination) {
  return EarliestScheduled(destination, std::nullopt);
}

Result<std::optional<TimePoint>> SqliteStore::EarliestScheduled(const std::string& destination,
                                                                std::optional<TimePoint> by) {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  const int64_t limit = by ? ToUnixMillis(*by) : std::numeric_limits<int64_t>::max();
  std::optional<TimePoint> best;
  // Waiting for a retry: in due order from the due index, skipping those leased in memory (a walk
  // as long as what is in flight, not as the backlog).
  {
    Result<std::vector<std::pair<TimePoint, int64_t>>> first =
        ScheduledDue(**db, destination, FromUnixMillis(limit), 1, /*heads_only=*/true);
    if (!first.ok()) return first.status();
    if (!first->empty()) best = first->front().first;
  }
  // New ones: the first claimable from the frontier on (they arrive in due order, so the walk
  // stops at it, due by `by` or not).
  if (std::optional<int64_t> frontier = PendingFrontier(destination)) {
    Result<std::vector<std::pair<TimePoint, int64_t>>> first =
        PendingDue(**db, destination, *frontier, TimePoint::max(), 1, nullptr);
    if (!first.ok()) return first.status();
    if (!first->empty() && ToUnixMillis(first->front().first) <= limit &&
        (!best || first->front().first < *best)) {
      best = first->front().first;
    }
  }
  return best;
}

Result<int64_t> SqliteStore::CountDue(TimePoint now) {
  Result<std::map<std::string, int64_t>> by = CountDueByDestination(now);
  if (!by.ok()) return by.status();
  int64_t n = 0;
  for (const auto& [dest, count] : *by) n += count;
  return n;
}

Result<std::map<std::string, int64_t>> SqliteStore::CountDueByDestination(TimePoint now) {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  // Waiting for a retry: entries of the due index due at `now` (proportional to what is due, never
  // to the whole backlog); new ones: the in-memory counts. Minus what is leased in memory.
  Result<Statement> q = (*db)->Prepare(kDueCountsSql);
  if (!q.ok()) return q.status();
  q->BindTime(1, now);
  std::map<std::string, int64_t> out;
  for (;;) {
    Result<bool> row = q->Step("count due deliveries per destination");
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (q->Int(1) > 0) out[q->Text(0)] = q->Int(1);
  }
  {
    MutexLock lock(leases_mu_);
    for (const auto& [dest, p] : pending_) {
      if (p.count > 0) out[dest] += p.count;
    }
    for (const auto& [id, l] : leases_) {
      if (!l.pending && l.due > now) continue;
      auto it = out.find(l.destination);
      if (it != out.end()) --it->second;
    }
  }
  for (auto it = out.begin(); it != out.end();) {
    it = it->second <= 0 ? out.erase(it) : std::next(it);
  }
  return out;
}

Result<std::vector<StatsRow>> SqliteStore::GetStats(TimePoint since, TimePoint until) {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(
      "SELECT minute, destination, received, delivered, failed, attempts, attempt_failures"
      " FROM stats_minute WHERE minute >= ?1 AND minute < ?2 ORDER BY minute, destination");
  if (!q.ok()) return q.status();
  q->BindInt(1, UnixMinute(since))
      .BindInt(2, UnixMinute(until + std::chrono::minutes(1) - Duration(1)));
  std::vector<StatsRow> out;
  for (;;) {
    Result<bool> row = q->Step("read stats");
    if (!row.ok()) return row.status();
    if (!*row) break;
    StatsRow r;
    r.minute = q->Int(0);
    r.destination = q->Text(1);
    r.received = q->Int(2);
    r.delivered = q->Int(3);
    r.failed = q->Int(4);
    r.attempts = q->Int(5);
    r.attempt_failures = q->Int(6);
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::optional<TimePoint>> SqliteStore::OldestDueAt(TimePoint now) {
  return EarliestScheduled("", now);
}

Result<std::optional<policy::BreakerSnapshot>> SqliteStore::GetBreaker(
    const std::string& destination) {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(
      "SELECT state, consecutive_failures, trips, open_until, closed_since, probe_in_flight"
      " FROM breakers WHERE destination = ?1");
  if (!q.ok()) return q.status();
  q->BindText(1, destination);
  Result<bool> row = q->Step("get breaker of " + destination);
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<policy::BreakerSnapshot>();
  policy::BreakerSnapshot s;
  std::string state = q->Text(0);
  std::optional<policy::BreakerState> parsed = ParseBreakerStateName(state);
  if (!parsed) return Status::Internal("unknown breaker state in the database: " + state);
  s.state = *parsed;
  s.consecutive_failures = static_cast<int>(q->Int(1));
  s.trips = static_cast<int>(q->Int(2));
  s.open_until = q->OptTime(3);
  s.closed_since = q->OptTime(4);
  s.probe_in_flight = q->Int(5) != 0;
  return std::optional<policy::BreakerSnapshot>(s);
}

Result<AuditPage> SqliteStore::ListAudit(const std::string& cursor, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  // The cursor is the id of the last entry of the previous page, in decimal.
  int64_t before = std::numeric_limits<int64_t>::max();
  if (!cursor.empty()) {
    const char* end = cursor.data() + cursor.size();
    auto [p, ec] = std::from_chars(cursor.data(), end, before);
    if (ec != std::errc() || p != end || before <= 0) {
      return BadCursor();
    }
  }
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(
      "SELECT id, at, actor, action, target, count, detail FROM audit"
      " WHERE id < ?1 ORDER BY id DESC LIMIT ?2");
  if (!q.ok()) return q.status();
  q->BindInt(1, before).BindInt(2, limit + 1);  // one more than asked: is there a next page?
  AuditPage page;
  for (;;) {
    Result<bool> row = q->Step("list audit");
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_cursor = std::to_string(page.items.back().id);
      break;
    }
    AuditEntry e;
    e.id = q->Int(0);
    e.at = q->Time(1);
    e.actor = q->Text(2);
    e.action = q->Text(3);
    e.target = q->Text(4);
    e.count = q->Int(5);
    e.detail = q->Text(6);
    page.items.push_back(std::move(e));
  }
  return page;
}

Status SqliteStore::AppendRejections(const std::vector<Rejection>& rejections,
                                     int keep_per_source) {
  HR_RETURN_IF_ERROR(CheckRejections(rejections, keep_per_source));
  if (rejections.empty()) return Status::Ok();
  Result<Unit> r = Write<Unit>([&rejections, keep_per_source](Connection& db) -> Result<Unit> {
    std::set<std::string> sources;
    for (const Rejection& x : rejections) {
      Result<Statement> ins = db.Prepare(
          "INSERT INTO rejections(source, received_at, reason, message, headers, size, sha256,"
          " remote_addr) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
      if (!ins.ok()) return ins.status();
      const std::string headers = EncodeHeaders(x.headers);
      ins->BindText(1, x.source)
          .BindTime(2, x.received_at)
          .BindText(3, x.reason)
          .BindText(4, x.message)
          .BindBlob(5, headers)
          .BindInt(6, x.size)
          .BindText(7, x.sha256)
          .BindText(8, x.remote_addr);
      HR_RETURN_IF_ERROR(ins->Exec("append rejection"));
      sources.insert(x.source);
    }
    for (const std::string& source : sources) {
      // The id of the newest row past the ones kept: it and every older one go (a range of
      // rejections_source). No such row: nothing to delete (id <= NULL is never true).
      Result<Statement> del = db.Prepare(
          "DELETE FROM rejections WHERE source = ?1 AND id <= (SELECT id FROM rejections"
          " WHERE source = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)");
      if (!del.ok()) return del.status();
      del->BindText(1, source).BindInt(2, keep_per_source);
      HR_RETURN_IF_ERROR(del->Exec("prune rejections"));
    }
    return Unit{};
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<RejectionPage> SqliteStore::ListRejections(const std::string& source,
                                                  const std::string& cursor, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  // The cursor is the id of the last row of the previous page, in decimal.
  int64_t before = std::numeric_limits<int64_t>::max();
  if (!cursor.empty()) {
    const char* end = cursor.data() + cursor.size();
    auto [p, ec] = std::from_chars(cursor.data(), end, before);
    if (ec != std::errc() || p != end || before <= 0) return BadCursor();
  }
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(
      "SELECT id, source, received_at, reason, message, headers, size, sha256, remote_addr"
      " FROM rejections WHERE source = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3");
  if (!q.ok()) return q.status();
  q->BindText(1, source).BindInt(2, before).BindInt(3, limit + 1);
  RejectionPage page;
  for (;;) {
    Result<bool> row = q->Step("list rejections");
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_cursor = std::to_string(page.items.back().id);
      break;
    }
    Rejection x;
    x.id = q->Int(0);
    x.source = q->Text(1);
    x.received_at = q->Time(2);
    x.reason = q->Text(3);
    x.message = q->Text(4);
    HR_ASSIGN_OR_RETURN(x.headers, DecodeHeaders(q->Blob(5)));
    x.size = q->Int(6);
    x.sha256 = q->Text(7);
    x.remote_addr = q->Text(8);
    page.items.push_back(std::move(x));
  }
  return page;
}

Result<int64_t> SqliteStore::PurgeRejectionsBefore(TimePoint cutoff, int batch) {
  if (batch <= 0) return int64_t{0};
  return Write<int64_t>([cutoff, batch](Connection& db) -> Result<int64_t> {
    Result<Statement> del = db.Prepare(
        "DELETE FROM rejections WHERE id IN (SELECT id FROM rejections WHERE received_at < ?1"
        " ORDER BY received_at LIMIT ?2)");
    if (!del.ok()) return del.status();
    del->BindTime(1, cutoff).BindInt(2, batch);
    HR_RETURN_IF_ERROR(del->Exec("purge rejections"));
    return db.Changes();
  });
}

Result<int64_t> SqliteStore::CountDeliveries(DeliveryStatus status) {
  // Claims live in memory: a current delivery leased there is delivering, though its row reads
  // as pending or scheduled.
  int64_t leased_current = 0, leased_scheduled_current = 0;
  {
    MutexLock lock(leases_mu_);
    for (const auto& [id, l] : leases_) {
      leased_current += l.current ? 1 : 0;
      leased_scheduled_current += l.current && !l.pending ? 1 : 0;
    }
  }
  if (status == DeliveryStatus::kDelivering) return leased_current;
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  // Scheduled and paused: counts of the due index minus the superseded chains in it (the small
  // partial index deliveries_superseded); both read an index only. Delivered and failed: no
  // index covers them (ingest and every result would write it), so this walks the table; the
  // server's metrics do not ask for them.
  Result<Statement> q =
      status == DeliveryStatus::kScheduled || status == DeliveryStatus::kPaused
          ? (*db)->Prepare(
                "SELECT (SELECT COUNT(*) FROM deliveries WHERE status = ?1"
                "  AND status IN ('scheduled', 'paused'))"
                " - (SELECT COUNT(*) FROM deliveries WHERE status = ?1 AND current = 0)")
          : (*db)->Prepare("SELECT COUNT(*) FROM deliveries WHERE status = ?1 AND current = 1");
  if (!q.ok()) return q.status();
  q->BindText(1, DeliveryStatusName(status));
  Result<bool> row = q->Step("count deliveries");
  if (!row.ok()) return row.status();
  int64_t n = *row ? q->Int(0) : int64_t{0};
  if (status == DeliveryStatus::kScheduled) {
    // New ones not leased are all current (a replay stops those not in flight).
    n += UnleasedPending("") - leased_scheduled_current;
  }
  return std::max<int64_t>(n, 0);
}

// ---------------------------------------------------------------------------------------------
// Bulk replay jobs

namespace {

constexpr const char* kReplayJobColumns =
    "id, created_at, updated_at, filter, rate, state, total, done, failed, cursor, error,"
    " lease_until, lease_owner, waiting";

Result<ReplayJob> ReadReplayJob(const Statement& q) {
  ReplayJob j;
  j.id = q.Text(0);
  j.created_at = q.Time(1);
  j.updated_at = q.Time(2);
  j.filter = q.Text(3);
  j.rate = q.Double(4);
  std::string state = q.Text(5);
  std::optional<ReplayJobState> parsed = ParseReplayJobState(state);
  if (!parsed) return Status::Internal("unknown replay job state in the database: " + state);
  j.state = *parsed;
  j.total = q.Int(6);
  j.done = q.Int(7);
  j.failed = q.Int(8);
  j.cursor = q.Text(9);
  j.error = q.OptText(10);
  j.lease_until = q.OptTime(11);
  j.lease_owner = q.Text(12);
  j.waiting = q.OptText(13);
  return j;
}

Result<std::optional<ReplayJob>> SelectReplayJob(Connection& db, const std::string& id) {
  Result<Statement> q =
      db.Prepare(std::string("SELECT ") + kReplayJobColumns + " FROM replays WHERE id = ?1");
  if (!q.ok()) return q.status();
  q->BindText(1, id);
  Result<bool> row = q->Step("get replay job " + id);
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<ReplayJob>();
  Result<ReplayJob> j = ReadReplayJob(*q);
  if (!j.ok()) return j.status();
  return std::optional<ReplayJob>(std::move(*j));
}

}  // namespace

Status SqliteStore::CreateReplayJob(const ReplayJob& job) {
  if (job.id.empty()) return Status::InvalidArgument("replay job id is empty", "id");
  const TimePoint now = clock_.Now();
  Result<Unit> r = Write<Unit>([&job, now](Connection& db) -> Result<Unit> {
    Result<std::optional<ReplayJob>> existing = SelectReplayJob(db, job.id);
    if (!existing.ok()) return existing.status();
    if (existing->has_value()) {
      return Status::FailedPrecondition("replay job " + job.id + " already exists");
    }
    Result<Statement> ins = db.Prepare(
        "INSERT INTO replays(id, created_at, updated_at, filter, rate, state, total, done, failed,"
        " cursor, error, lease_until, lease_owner, waiting)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
    if (!ins.ok()) return ins.status();
    ins->BindText(1, job.id)
        .BindTime(2, job.created_at)
        .BindTime(3, now)
        .BindText(4, job.filter)
        .BindDouble(5, job.rate)
        .BindText(6, ReplayJobStateName(job.state))
        .BindInt(7, job.total)
        .BindInt(8, job.done)
        .BindInt(9, job.failed)
        .BindText(10, job.cursor)
        .BindOptText(11, job.error)
        .BindOptTime(12, job.lease_until)
        .BindText(13, job.lease_owner)
        .BindOptText(14, job.waiting);
    HR_RETURN_IF_ERROR(ins->Exec("create replay job " + job.id));
    return Unit{};
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::optional<ReplayJob>> SqliteStore::ClaimReplayJob(TimePoint now, Duration lease,
                                                             const std::string& owner) {
  return Write<std::optional<ReplayJob>>(
      [now, lease, &owner](Connection& db) -> Result<std::optional<ReplayJob>> {
        Result<Statement> q = db.Prepare(
            "SELECT id FROM replays WHERE state = 'queued'"
            " OR (state = 'running' AND (lease_until IS NULL OR lease_until <= ?1))"
            " ORDER BY created_at, id LIMIT 1");
        if (!q.ok()) return q.status();
        q->BindTime(1, now);
        Result<bool> row = q->Step("find a replay job to claim");
        if (!row.ok()) return row.status();
        if (!*row) return std::optional<ReplayJob>();
        const std::string id = q->Text(0);
        Result<Statement> up = db.Prepare(
            "UPDATE replays SET state = 'running', lease_until = ?2, lease_owner = ?3,"
            " updated_at = ?4 WHERE id = ?1");
        if (!up.ok()) return up.status();
        up->BindText(1, id).BindTime(2, now + lease).BindText(3, owner).BindTime(4, now);
        HR_RETURN_IF_ERROR(up->Exec("claim replay job " + id));
        return SelectReplayJob(db, id);
      });
}

Status SqliteStore::UpdateReplayJob(const ReplayJob& job, const std::string& owner) {
  const TimePoint now = clock_.Now();
  Result<Unit> r = Write<Unit>([&job, &owner, now](Connection& db) -> Result<Unit> {
    Result<std::optional<ReplayJob>> existing = SelectReplayJob(db, job.id);
    if (!existing.ok()) return existing.status();
    if (!existing->has_value()) return Status::NotFound("no replay job " + job.id);
    const ReplayJob& cur = **existing;
    if (cur.state != ReplayJobState::kRunning || cur.lease_owner != owner) {
      return Status::FailedPrecondition("replay job " + job.id + " is " +
                                        std::string(ReplayJobStateName(cur.state)) +
                                        " and not leased by " + owner);
    }
    Result<Statement> up = db.Prepare(
        "UPDATE replays SET state = ?2, total = ?3, done = ?4, failed = ?5, cursor = ?6,"
        " error = ?7, lease_until = ?8, lease_owner = ?9, updated_at = ?10, waiting = ?11"
        " WHERE id = ?1");
    if (!up.ok()) return up.status();
    const bool final = IsFinal(job.state);
    // Bound without a copy (SQLITE_STATIC): must outlive the Exec below.
    const std::string lease_owner = final ? std::string() : owner;
    const std::optional<std::string> waiting = final ? std::nullopt : job.waiting;
    up->BindText(1, job.id)
        .BindText(2, ReplayJobStateName(job.state))
        .BindInt(3, job.total)
        .BindInt(4, job.done)
        .BindInt(5, job.failed)
        .BindText(6, job.cursor)
        .BindOptText(7, job.error)
        .BindOptTime(8, final ? std::nullopt : job.lease_until)
        .BindText(9, lease_owner)
        .BindTime(10, now)
        .BindOptText(11, waiting);
    HR_RETURN_IF_ERROR(up->Exec("update replay job " + job.id));
    return Unit{};
  });
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::optional<ReplayJob>> SqliteStore::CancelReplayJob(const std::string& id,
                                                              TimePoint now) {
  return Write<std::optional<ReplayJob>>(
      [&id, now](Connection& db) -> Result<std::optional<ReplayJob>> {
        Result<Statement> up = db.Prepare(
            "UPDATE replays SET state = 'cancelled', lease_until = NULL, lease_owner = '',"
            " waiting = NULL,"
            " updated_at = ?2 WHERE id = ?1 AND state IN ('queued', 'running')");
        if (!up.ok()) return up.status();
        up->BindText(1, id).BindTime(2, now);
        HR_RETURN_IF_ERROR(up->Exec("cancel replay job " + id));
        return SelectReplayJob(db, id);
      });
}

Result<ReplayJobPage> SqliteStore::ListReplayJobs(const std::string& cursor, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  // Job ids are ULIDs (time-ordered); the cursor is the last id of the previous page.
  if (!cursor.empty() && !IsUlid(cursor)) {
    return BadCursor();
  }
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(std::string("SELECT ") + kReplayJobColumns +
                                       " FROM replays WHERE ?1 = '' OR id < ?1"
                                       " ORDER BY id DESC LIMIT ?2");
  if (!q.ok()) return q.status();
  q->BindText(1, cursor).BindInt(2, limit + 1);  // one more than asked: is there a next page?
  ReplayJobPage page;
  for (;;) {
    Result<bool> row = q->Step("list replay jobs");
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_cursor = page.items.back().id;
      break;
    }
    Result<ReplayJob> j = ReadReplayJob(*q);
    if (!j.ok()) return j.status();
    page.items.push_back(std::move(*j));
  }
  return page;
}

Result<std::optional<ReplayJob>> SqliteStore::GetReplayJob(const std::string& id) {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  return SelectReplayJob(**db, id);
}

// ---------------------------------------------------------------------------------------------
// Catalog

Result<int64_t> SqliteStore::CatalogVersion() {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q =
      (*db)->Prepare("SELECT value FROM store_meta WHERE key = 'catalog_version'");
  if (!q.ok()) return q.status();
  Result<bool> row = q->Step("read the catalog version");
  if (!row.ok()) return row.status();
  return *row ? q->Int(0) : int64_t{0};
}

Result<std::vector<CatalogObject>> SqliteStore::ListCatalog() {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(
      "SELECT kind, name, spec, origin, created_at, updated_at FROM catalog ORDER BY seq");
  if (!q.ok()) return q.status();
  std::vector<CatalogObject> out;
  for (;;) {
    Result<bool> row = q->Step("list catalog");
    if (!row.ok()) return row.status();
    if (!*row) break;
    CatalogObject o;
    const std::string kind = q->Text(0);
    if (kind == "destination") {
      o.kind = CatalogKind::kDestination;
    } else if (kind == "route") {
      o.kind = CatalogKind::kRoute;
    }
    o.name = q->Text(1);
    o.spec = q->Text(2);
    o.origin = q->Text(3);
    o.created_at = q->Time(4);
    o.updated_at = q->Time(5);
    out.push_back(std::move(o));
  }
  return out;
}

Status SqliteStore::ApplyCatalogChange(const CatalogChange& change) {
  HR_RETURN_IF_ERROR(CheckCatalogChange(change));
  const TimePoint now = clock_.Now();
  Result<Unit> r = Write<Unit>([this, &change, now](Connection& db) -> Result<Unit> {
    {
      // The catalog's version, raised with the change (store_meta; absent means 0).
      Result<Statement> v = db.Prepare(
          "INSERT INTO store_meta(key, value) VALUES ('catalog_version', 1)"
          " ON CONFLICT(key) DO UPDATE SET value = value + 1 RETURNING value");
      if (!v.ok()) return v.status();
      Result<bool> row = v->Step("raise the catalog version");
      if (!row.ok()) return row.status();
      const int64_t version = *row ? v->Int(0) : 0;
      if (change.if_version && *change.if_version != version - 1) {
        return CatalogChangedMeanwhile(*change.if_version, version - 1);
      }
    }
    for (const std::string& destination : change.require_no_open_deliveries) {
      // Waiting ones by the due index, new ones from the frontier on (leased ones read as
      // pending or scheduled). In this transaction: nothing slips in between.
      Result<Statement> q = db.Prepare(
          "SELECT (SELECT COUNT(*) FROM deliveries WHERE destination = ?1"
          "  AND status IN ('scheduled', 'paused'))"
          " + (SELECT COUNT(*) FROM deliveries WHERE id >= ?2 AND destination = ?1"
          "  AND status = 'pending')");
      if (!q.ok()) return q.status();
      q->BindText(1, destination)
          .BindInt(2, PendingFrontier(destination).value_or(std::numeric_limits<int64_t>::max()));
      Result<bool> row = q->Step("count open deliveries");
      if (!row.ok()) return row.status();
      if (const int64_t open = *row ? q->Int(0) : 0; open > 0) {
        return Status::FailedPrecondition("destination \"" + destination + "\" has " +
                                          std::to_string(open) +
                                          " deliveries that are not delivered or failed yet");
      }
    }
    for (const auto& [kind, name] : change.remove) {
      Result<Statement> del = db.Prepare("DELETE FROM catalog WHERE kind = ?1 AND name = ?2");
      if (!del.ok()) return del.status();
      del->BindText(1, CatalogKindName(kind)).BindText(2, name);
      HR_RETURN_IF_ERROR(del->Exec("delete catalog object " + name));
      if (kind == CatalogKind::kDestination && !PutsDestination(change, name)) {
        // Its breaker and pause go with it: a destination made again under this name starts
        // closed and unpaused.
        Result<Statement> forget = db.Prepare("DELETE FROM breakers WHERE destination = ?1");
        if (!forget.ok()) return forget.status();
        forget->BindText(1, name);
        HR_RETURN_IF_ERROR(forget->Exec("forget the breaker of " + name));
      }
    }
    for (const CatalogObject& o : change.put) {
      Result<Statement> up = db.Prepare(
          "INSERT INTO catalog(kind, name, spec, origin, created_at, updated_at)"
          " VALUES (?1, ?2, ?3, ?4, ?5, ?5)"
          " ON CONFLICT(kind, name) DO UPDATE SET spec = excluded.spec,"
          " origin = excluded.origin, updated_at = excluded.updated_at");
      if (!up.ok()) return up.status();
      up->BindText(1, CatalogKindName(o.kind))
          .BindText(2, o.name)
          .BindText(3, o.spec)
          .BindText(4, o.origin)
          .BindTime(5, now);
      HR_RETURN_IF_ERROR(up->Exec("write catalog object " + o.name));
    }
    if (change.audit) HR_RETURN_IF_ERROR(InsertAudit(db, *change.audit));
    return Unit{};
  });
  return r.ok() ? Status::Ok() : r.status();
}

}  // namespace hookrelay::store
