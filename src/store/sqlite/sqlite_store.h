#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/result.h"
#include "store/sqlite/data_dir_lock.h"
#include "store/sqlite/open.h"
#include "store/sqlite/sqlite_db.h"
#include "store/stats_counts.h"
#include "store/store.h"

namespace hookrelay::store {

// The embedded store: one SQLite database file (dir/hookrelay.db) in WAL mode. A write is
// acknowledged (its completion runs, its synchronous call returns) only once the log holding its
// commit is fsync'd, so an acknowledged write survives power loss.
//
// Writes. One writer thread owns the only write connection. Every write method (AppendEvent,
// ClaimDue, RecordAttempt, PutBreaker, Pause/ResumeDeliveries, CreateReplay, PurgeEventsBefore,
// AppendAudit, ApplyCatalogChange, …) queues an operation for it. The writer takes everything
// queued (up to max_batch operations), runs them in ONE transaction, then COMMITs once (group
// commit). One operation's failure (a constraint, a full disk) fails only that operation: the
// operations first run without savepoints (they are costly and failures are rare); if one fails,
// the transaction is rolled back and the batch runs again with each operation inside its own
// SAVEPOINT, so the failing one is rolled back alone. If BEGIN or COMMIT fails, every operation of
// the batch reports it (kResourceExhausted when the disk is full, kUnavailable otherwise), the
// transaction is rolled back and the writer goes on with the next batch. When SQLite itself rolls
// the transaction back in the middle (it does so on SQLITE_FULL), only the operation that hit the
// error fails; the others are run again in a new transaction.
//
// Pipelined sync. The write connection runs with synchronous=NORMAL: COMMIT writes the batch to
// the log (-wal) without fsync. A second thread, the syncer, fdatasyncs the log through its own
// descriptor while the writer runs the next batch; a batch's operations complete (in queue order,
// on the syncer, or on the writer when nothing it could have seen is waiting for a sync) once a
// sync that began after its COMMIT has returned. Their results, claims included, so depend only
// on durable state. If a sync fails, the batches it covered fail (kUnavailable), and so does
// every later write: what the log holds past the last good sync is unknown, so the store refuses
// to build on it until it is reopened. docs/storage.md ("Group commit") has the argument.
//
// Claims. The directory is locked to this process, so leases are kept in memory (id → owner,
// lease_until): ClaimDue runs on the writer (serialised with the writes it must see) but changes
// no row, so a batch of claims commits nothing to disk. A claimed delivery's row stays as it was,
// scheduled and due; reads overlay the lease (GetDeliveries, ListEvents, the counts show it
// delivering). RecordAttempt(s) checks the lease in memory and releases it in the transaction
// that writes the result (a rolled-back transaction restores it). After a crash the leases are
// gone and what was in flight is due again.
//
// Reads use a small pool of their own connections and never wait for the writer: WAL readers see
// the last committed state.
//
// Thread-safe. The synchronous write methods block until their batch is committed and synced.
class SqliteStore final : public Store {
 public:
  // Opens (creating `options.dir` with mode 0700 and the database as needed), sets the pragmas,
  // applies pending migrations and starts the writer thread. The directory is locked
  // (DataDirLock: dir/hookrelay.lock, flock; `options.lock` when the caller took it) before the
  // database is opened, and while the store is open: a second store on it, in this process or
  // another, gets kFailedPrecondition.
  static Result<std::unique_ptr<SqliteStore>> Open(const SqliteOptions& options,
                                                   const Clock& clock);
  // Finishes every queued operation (their completions run), stops the writer, closes.
  // REQUIRES: no other thread calls into the store any more.
  ~SqliteStore() override;

  // --- EventStore (sqlite/events.cc; GetDeliveries, GetAttempts: sqlite/deliveries.cc;
  // PurgeEventsBefore: sqlite/retention.cc; GetStats: sqlite/stats.cc) ---

  // `done` runs on a store thread (the syncer, or the writer) once the commit is synced: it must
  // be quick and must not block (every other completion waits behind it), and it must not call
  // the synchronous write methods of this store (they would wait for the thread running `done`;
  // they return kInternal instead).
  void AppendEvent(NewEvent event, AppendCallback done) override;
  Result<std::optional<Event>> GetEvent(const std::string& id) override;
  Result<std::vector<std::optional<Event>>> GetEvents(const std::vector<std::string>& ids) override;
  Result<EventPage> ListEvents(const EventFilter& filter, const std::string& cursor,
                               int limit) override;
  Result<std::vector<Delivery>> GetDeliveries(const std::string& event_id) override;
  Result<std::vector<Attempt>> GetAttempts(int64_t delivery_id) override;
  Result<std::optional<EventDetail>> GetEventDetail(const std::string& id) override;
  Result<int64_t> PurgeEventsBefore(TimePoint cutoff, int batch) override;
  Result<std::vector<StatsRow>> GetStats(TimePoint since, TimePoint until) override;

  // --- DeliveryQueue (sqlite/deliveries.cc; the counts CountDue, CountDueByDestination,
  // OldestDueAt and CountDeliveries: sqlite/stats.cc) ---
  Result<std::vector<Delivery>> ClaimDue(TimePoint now, int limit, Duration lease,
                                         const std::string& owner,
                                         const std::string& destination = "") override;
  Result<std::optional<TimePoint>> NextDueAt(const std::string& destination = "") override;
  Status RecordAttempt(const Attempt& attempt, const DeliveryUpdate& update,
                       const std::string& owner) override;
  std::vector<Status> RecordAttempts(const std::vector<AttemptRecord>& records,
                                     const std::string& owner) override;
  Result<int64_t> ReleaseClaims(const std::vector<int64_t>& delivery_ids,
                                const std::string& owner) override;
  Result<std::optional<Delivery>> OrderHead(const std::string& destination,
                                            const std::string& order_key) override;
  Result<HeldQueues> ListHeldQueues(const std::string& destination, int limit) override;
  Result<Delivery> CreateReplay(const std::string& event_id, const std::string& destination,
                                int max_attempts, TimePoint now) override;
  Result<int64_t> CreateReplays(const std::vector<NewReplay>& replays) override;
  Result<int64_t> CountDue(TimePoint now) override;
  Result<std::map<std::string, int64_t>> CountDueByDestination(TimePoint now) override;
  Result<std::optional<TimePoint>> OldestDueAt(TimePoint now) override;
  Result<int64_t> CountDeliveries(DeliveryStatus status) override;

  // --- DestinationControlStore (sqlite/destination_control.cc) ---
  Result<std::optional<policy::BreakerSnapshot>> GetBreaker(
      const std::string& destination) override;
  Status PutBreaker(const std::string& destination,
                    const policy::BreakerSnapshot& snapshot) override;
  Result<std::vector<policy::BreakerStep>> UpdateBreaker(
      const std::string& destination, const policy::BreakerConfig& config,
      const std::vector<BreakerInputAt>& inputs) override;
  Result<DestinationControl> GetDestinationControl(const std::string& destination) override;
  Result<std::map<std::string, DestinationControl>> ListDestinationControls() override;
  Result<int64_t> PauseDestination(const std::string& destination, const std::string& reason,
                                   TimePoint now) override;
  Result<int64_t> ResumeDestination(const std::string& destination, TimePoint now) override;
  Result<int64_t> PauseDeliveries(const std::string& destination,
                                  const std::string& reason) override;
  Result<int64_t> ResumeDeliveries(const std::string& destination, TimePoint now) override;
  Result<int64_t> UnpauseDeliveries(const std::string& destination, TimePoint now) override;

  // --- TokenStore (sqlite/tokens.cc) ---
  Status CreateToken(const ApiToken& token) override;
  Result<bool> EnsureToken(const ApiToken& token) override;
  Result<std::vector<ApiToken>> ListTokens() override;
  Result<bool> DeleteToken(const std::string& name) override;
  Result<bool> RevokeToken(const std::string& name) override;
  Status TouchToken(const std::string& name, TimePoint at, const std::string& addr) override;

  // KeyStore (sqlite/keys.cc)
  Result<std::vector<WrappedDataKey>> ListDataKeys() override;
  Result<bool> AddDataKey(const WrappedDataKey& key, bool only_if_none) override;
  Result<bool> DeleteDataKey(const std::string& master_key_id) override;
  Status EraseOldCopies() override;

  // --- AuditStore (sqlite/audit.cc; PurgeRejectionsBefore: sqlite/retention.cc) ---
  Status AppendAudit(const AuditEntry& entry) override;
  Result<AuditPage> ListAudit(const std::string& cursor, int limit) override;
  Status AppendRejections(const std::vector<Rejection>& rejections, int keep_per_source) override;
  Result<RejectionPage> ListRejections(const std::string& source, const std::string& cursor,
                                       int limit) override;
  Result<int64_t> PurgeRejectionsBefore(TimePoint cutoff, int batch) override;

  // --- ReplayJobStore (sqlite/replay_jobs.cc) ---
  Status CreateReplayJob(const ReplayJob& job) override;
  Result<std::optional<ReplayJob>> GetReplayJob(const std::string& id) override;
  Result<ReplayJobPage> ListReplayJobs(const std::string& cursor, int limit) override;
  Result<std::optional<ReplayJob>> ClaimReplayJob(TimePoint now, Duration lease,
                                                  const std::string& owner) override;
  Status UpdateReplayJob(const ReplayJob& job, const std::string& owner) override;
  Result<std::optional<ReplayJob>> CancelReplayJob(const std::string& id, TimePoint now) override;

  // --- CatalogStore (sqlite/catalog.cc) ---
  Result<std::vector<CatalogObject>> ListCatalog() override;
  Status ApplyCatalogChange(const CatalogChange& change) override;
  Result<int64_t> CatalogVersion() override;

  // Counters of the writer, for tests, benchmarks and metrics. Monotonic.
  struct WriterStats {
    int64_t ops = 0;             // operations executed
    int64_t batches = 0;         // batches taken from the queue
    int64_t commits = 0;         // successful COMMITs that changed rows (each one synced)
    int64_t failed_commits = 0;  // transactions that failed to BEGIN/COMMIT or were rolled back
                                 // by SQLite (e.g. on SQLITE_FULL)
    int64_t largest_batch = 0;   // most operations taken in one batch
    // Batches run again with a savepoint per operation because an operation failed.
    int64_t savepoint_fallbacks = 0;
    int64_t syncs = 0;   // fdatasyncs of the log by the syncer
    int64_t claims = 0;  // claims run ahead of a batch (RunClaimsFirst), counted once handed over
  };
  WriterStats writer_stats() const;

  const std::string& path() const { return path_; }
  // The schema version after opening, and how many migrations this open applied.
  int schema_version() const { return schema_version_; }
  int migrations_applied() const { return migrations_applied_; }

  // Test hooks (leveldb's TEST_ prefix): for tests only, not part of the Store interface.
  //
  // The value of `PRAGMA <name>` on the write connection ("synchronous" → "2"), so tests
  // can check the durability settings that are per connection.
  Result<std::string> TEST_WriterPragma(const std::string& name);
  // Changes SQLite's max_page_count on the write connection (0 = SQLite's maximum),
  // e.g. to relieve the "disk full" pressure set by SqliteOptions::max_page_count. SQLite never
  // lowers it below the current size. Returns the limit in effect.
  Result<int64_t> TEST_SetMaxPageCount(int64_t pages);
  // sqlite3_total_changes64 of the write connection (rows inserted, updated or deleted
  // since it was opened), so tests can count the rows a write touches.
  Result<int64_t> TEST_WriterTotalChanges();
  // Runs `fn` on the writer thread inside its next batch (the transaction open) and
  // returns at once, e.g. to hold the writer so that the operations queued meanwhile form one
  // batch. `fn` must not call the store.
  void TEST_RunOnWriter(std::function<void()> fn);

 private:
  class WriteOp;
  class AppendOp;

 public:
  // A claim, kept in memory only (the data directory belongs to this process): the delivery's row
  // stays as it was on disk, due, so after a crash it is simply due again.
  struct Lease {
    std::string owner;
    TimePoint until{};
    std::string destination;
    TimePoint due{};       // the row's next_attempt_at when it was claimed
    bool current = true;   // the row's `current` (a replay may supersede it while in flight)
    bool pending = false;  // the row is 'pending' (new, in no index) rather than 'scheduled'
  };
  // A destination's new deliveries ('pending' rows, in no index): how many there are on disk
  // (leased or not) and the lowest rowid that may be one of them (rows below it are not).
  struct Pending {
    int64_t count = 0;
    int64_t frontier = 0;
  };

 private:
  template <typename T>
  class SyncOp;

  SqliteStore(const SqliteOptions& options, const Clock& clock, std::string path);

  // PauseDeliveries' and ResumeDeliveries' work, in the writer's transaction (PauseDestination
  // and ResumeDestination add the pause row to it). ResumeDeliveriesIn with `keep_due_times` is
  // UnpauseDeliveries' work.
  Result<int64_t> PauseDeliveriesIn(sqlite::Connection& db, const std::string& destination,
                                    const std::string& reason, TimePoint now);
  static Result<int64_t> ResumeDeliveriesIn(sqlite::Connection& db, const std::string& destination,
                                            TimePoint now, bool keep_due_times = false);
  // Queues `op` for the writer. After shutdown began, fails it at once with kUnavailable.
  void Enqueue(std::unique_ptr<WriteOp> op);
  // Runs `fn` on the writer thread inside the next batch and waits for the batch to commit.
  template <typename T>
  Result<T> Write(std::function<Result<T>(sqlite::Connection&)> fn, bool claim = false);
  void WriterLoop();
  // Runs and hands over (Handoff) the claims of `batch` (WriteOp::claim) before its transaction,
  // and takes them out of it.
  void RunClaimsFirst(std::vector<std::unique_ptr<WriteOp>>& batch);
  // Runs one batch (one transaction) and returns each operation's result; *wrote: a COMMIT
  // changed rows.
  std::vector<Status> RunBatch(std::vector<std::unique_ptr<WriteOp>>& batch, bool* wrote);
  // Hands a run batch over for completion after the sync that covers what it saw (or completes
  // it now, on the writer, when nothing waits for a sync).
  void Handoff(std::vector<std::unique_ptr<WriteOp>> batch, std::vector<Status> results,
               bool wrote);
  void SyncLoop();
  // fdatasync of the log (or the test hook); errno-style: 0 or an error number.
  int SyncWal();
  static void FinishOps(std::vector<std::unique_ptr<WriteOp>>& ops, std::vector<Status>& results);
  Status RunInSavepoint(WriteOp& op);
  // An operation that succeeded (and whose writes, if any, committed): its lease changes stay
  // (the undo log is dropped), and its changes to the pending counts and frontiers are applied.
  void KeepInMemoryChanges(WriteOp& op) REQUIRES(leases_mu_);
  // Claims and their releases are changed by the writer only, inside a batch: each change is
  // logged in the running operation (op_) so that when the transaction or the operation's
  // savepoint is rolled back, the leases are rolled back with it.
  void SetLease(int64_t id, std::optional<Lease> lease);
  void UndoLeases(WriteOp& op);
  void UndoLeases(const std::vector<std::unique_ptr<WriteOp>>& batch,
                  const std::vector<size_t>& pending);
  // The lease of delivery `id`, if any (any thread).
  std::optional<Lease> LeaseOf(int64_t id) const;
  // A leased delivery read from the table is in flight: kDelivering, with its lease.
  void OverlayLease(Delivery& d) const;
  // Ids of the leased deliveries (of `destination` when not empty) as a JSON array, for SQL
  // (json_each); `current_only` keeps the leases of current chains.
  std::string LeasedIdsJson(const std::string& destination, bool current_only) const;
  // The earliest next_attempt_at of a claimable delivery (not leased in memory, the head of its
  // queue when ordered; of `destination` when not empty; at or before `by` when set).
  Result<std::optional<TimePoint>> EarliestScheduled(const std::string& destination,
                                                     std::optional<TimePoint> by);
  // Deliveries waiting for a retry, due at `by` and not leased, earliest first: up to `limit` of
  // each destination (of `destination` only when not empty), then the first `limit` of those.
  // With `heads_only`, an ordered delivery only when it is its queue's head (at most
  // kMaxOrderedSkips others are walked past per destination); without, the claim checks that.
  Result<std::vector<std::pair<TimePoint, int64_t>>> ScheduledDue(sqlite::Connection& db,
                                                                  const std::string& destination,
                                                                  TimePoint by, size_t limit,
                                                                  bool heads_only = false) const;
  // New deliveries from rowid `frontier` on (of `destination`, or all), in arrival order, that
  // are claimable: due at `by`, not leased and, when ordered, the head of their queue (at most
  // kMaxOrderedSkips held ones are walked past); up to `limit`. With `first`, sets *first to the
  // lowest pending rowid seen, held or not (the frontier's next place; unset when none).
  Result<std::vector<std::pair<TimePoint, int64_t>>> PendingDue(
      sqlite::Connection& db, const std::string& destination, int64_t frontier, TimePoint by,
      size_t limit, std::optional<int64_t>* first) const;
  Result<std::vector<Delivery>> ClaimOnWriter(sqlite::Connection& db, TimePoint now, int limit,
                                              Duration lease, const std::string& owner,
                                              const std::string& destination);
  // Writes the attempt and the delivery's new state when `owner` holds its lease, and releases
  // the lease. When the lease is not held, sets *refused and returns why (kNotFound /
  // kFailedPrecondition) having written nothing.
  Status WriteAttempt(sqlite::Connection& db, const Attempt& attempt, const DeliveryUpdate& update,
                      const std::string& owner, TimePoint now, bool* refused);
  Result<int64_t> InsertReplay(sqlite::Connection& db, const std::string& event_id,
                               const std::string& destination, int max_attempts, TimePoint due);
  // Whether delivery `id` is the head of the ordered queue (destination, order_key): the lowest
  // id of the queue's deliveries that are not final.
  static Result<bool> IsOrderHead(sqlite::Connection& db, int64_t id,
                                  const std::string& destination, const std::string& order_key);
  // The id of that head; 0 when the queue is empty.
  static Result<int64_t> OrderHeadId(sqlite::Connection& db, const std::string& destination,
                                     const std::string& order_key);
  // The reads GetEvent, GetDeliveries, GetAttempts and OrderHead make, on `db` (a reader): so
  // GetEventDetail makes them all in one read transaction.
  Result<std::optional<Event>> ReadEventIn(sqlite::Connection& db, int64_t key,
                                           const std::string& id) const;
  Result<std::vector<Delivery>> ReadDeliveriesIn(sqlite::Connection& db, int64_t event_key,
                                                 const std::string& event_id) const;
  static Result<std::vector<Attempt>> ReadAttemptsIn(sqlite::Connection& db, int64_t delivery_id);
  Result<std::optional<Delivery>> ReadOrderHeadIn(sqlite::Connection& db,
                                                  const std::string& destination,
                                                  const std::string& order_key) const;
  // The frontier of `destination` (the lowest of all when empty); nullopt when none has pending
  // deliveries.
  std::optional<int64_t> PendingFrontier(const std::string& destination) const;
  // Pending deliveries not leased (of `destination`, or all when empty).
  int64_t UnleasedPending(const std::string& destination) const;
  // Runs `op` (bare or in a savepoint) with its counters started afresh.
  Status RunOp(WriteOp& op, bool savepoint);
  // Writes the summed counters of the batch's operations that succeeded: one upsert per key.
  Status FlushStats(const std::vector<std::unique_ptr<WriteOp>>& batch,
                    const std::vector<size_t>& pending, const std::vector<Status>& results);
  // The body of one AppendEvent, run by the writer inside the batch transaction.
  Status Append(sqlite::Connection& db, const NewEvent& event, AppendResult* result);

  // Read connections: borrowed for one call, returned to the pool (at most kMaxIdleReaders kept).
  struct ReaderDeleter {
    SqliteStore* store;
    void operator()(sqlite::Connection* c) const;
  };
  using Reader = std::unique_ptr<sqlite::Connection, ReaderDeleter>;
  Result<Reader> AcquireReader();
  static constexpr size_t kMaxIdleReaders = 8;

  const Clock& clock_;
  const std::string path_;
  const size_t max_batch_;
  int schema_version_ = 0;
  int migrations_applied_ = 0;

  std::shared_ptr<DataDirLock> lock_;              // holds the directory lock
  std::unique_ptr<sqlite::Connection> writer_db_;  // used only by writer_
  std::thread writer_;
  std::thread syncer_;
  std::function<int(int)> wal_sync_hook_;  // SqliteOptions::wal_sync
  std::string wal_path_;
  int wal_fd_ = -1;  // the log, opened by the store (used by syncer_ only once it runs)

  // Batches run and committed, waiting for the sync that covers them, in queue order.
  struct Unsynced {
    uint64_t needs = 0;  // complete once synced_ >= needs
    std::vector<std::unique_ptr<WriteOp>> ops;
    std::vector<Status> results;
  };
  Mutex sync_mu_;
  std::condition_variable sync_cv_;
  std::deque<Unsynced> unsynced_ GUARDED_BY(sync_mu_);
  uint64_t committed_ GUARDED_BY(sync_mu_) = 0;  // COMMITs that changed rows
  uint64_t synced_ GUARDED_BY(sync_mu_) = 0;     // of those, the ones known durable
  bool finishing_ GUARDED_BY(sync_mu_) = false;  // the syncer runs completions
  bool writer_done_ GUARDED_BY(sync_mu_) = false;
  Status sync_error_ GUARDED_BY(sync_mu_);  // the first failed sync, for good
  std::atomic<bool> sync_failed_{false};
  std::thread::id writer_id_;
  std::thread::id syncer_id_;
  // The key of the last event appended (writer thread only): keys only grow.
  int64_t last_event_key_ = 0;
  // The bits of this store's event ids (store/event_id.h), read at open; then constant.
  uint64_t event_id_bits_ = 0;
  // The operation the writer is running (writer thread only).
  WriteOp* op_ = nullptr;

  // Claims in memory. Changed by the writer thread only (SetLease), read by any thread.
  mutable Mutex leases_mu_;
  std::unordered_map<int64_t, Lease> leases_ GUARDED_BY(leases_mu_);  // by delivery id
  // Per destination. Counts and frontier advances are applied when the batch that made them
  // commits; a frontier is lowered at once (always safe: it only widens the walk).
  std::map<std::string, Pending> pending_ GUARDED_BY(leases_mu_);

  Mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<WriteOp>> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;

  Mutex readers_mu_;
  std::vector<std::unique_ptr<sqlite::Connection>> idle_readers_ GUARDED_BY(readers_mu_);

  std::atomic<int64_t> stat_ops_{0};
  std::atomic<int64_t> stat_batches_{0};
  std::atomic<int64_t> stat_commits_{0};
  std::atomic<int64_t> stat_failed_commits_{0};
  std::atomic<int64_t> stat_largest_batch_{0};
  std::atomic<int64_t> stat_savepoint_fallbacks_{0};
  std::atomic<int64_t> stat_syncs_{0};
  std::atomic<int64_t> stat_claims_{0};
};

}  // namespace hookrelay::store
