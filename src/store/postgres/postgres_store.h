#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/result.h"
#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_listener.h"
#include "store/store.h"

namespace hookrelay::store {

struct PostgresOptions {
  std::string url;      // postgres://… (may hold a password: never shown)
  std::string display;  // how messages name the server (no user, no password)
  // Group commit: the writer takes up to this many queued appends into one transaction.
  int max_batch = 512;
  // Idle connections kept for reads and the synchronous writes (more are opened while busy).
  int max_idle_connections = 4;
  // false ([store] migrate = "manual"): a database whose schema is behind this build's is not
  // migrated at open but refused (kFailedPrecondition), for `hookrelay migrate` to do it.
  bool migrate = true;
};

// The store on PostgreSQL (docs/postgres.md), shared by any number of hookrelay nodes.
//
// Appends. One writer thread owns a connection and batches queued appends (up to max_batch) into
// one transaction: it locks store_meta's 'last_event_key' row (so keys are assigned in commit
// order by every node, and dedup lookups see every earlier event), inserts the events and their
// deliveries with one multi-row statement each, adds the per-minute counts, and COMMITs; each
// append's callback runs after COMMIT returned (group commit). When the batch fails for a reason
// other than a lost connection, each append is retried alone, so one bad event fails alone.
//
// Claims are rows: ClaimDue locks due deliveries with FOR UPDATE SKIP LOCKED (concurrent claimers
// on several nodes take different rows) and writes status 'delivering', lease_until and
// lease_owner. RecordAttempt(s) and ReleaseClaims only touch a delivery still leased by `owner`;
// once a lease expired and another owner claimed the delivery, the first owner's report is
// refused (kFailedPrecondition) and writes nothing.
//
// Every other method runs on a pooled connection in its own transaction. A lost connection
// answers kUnavailable and is dropped; the next call connects anew.
//
// Thread-safe.
class PostgresStore final : public Store {
 public:
  // Connects, applies pending migrations (under an advisory lock) and starts the writer.
  // kUnavailable when the server cannot be reached; kFailedPrecondition when it refuses
  // (authentication, no database) or its schema is newer than this build's.
  static Result<std::unique_ptr<PostgresStore>> Open(const PostgresOptions& options,
                                                     const Clock& clock);
  // Finishes every queued append (their callbacks run), stops the writer, closes.
  ~PostgresStore() override;

  void AppendEvent(NewEvent event, AppendCallback done) override;
  Result<std::optional<Event>> GetEvent(const std::string& id) override;
  Result<std::vector<std::optional<Event>>> GetEvents(const std::vector<std::string>& ids) override;
  Result<EventPage> ListEvents(const EventFilter& filter, const std::string& cursor,
                               int limit) override;
  Result<std::vector<Delivery>> GetDeliveries(const std::string& event_id) override;
  Result<std::vector<Attempt>> GetAttempts(int64_t delivery_id) override;
  Result<std::optional<EventDetail>> GetEventDetail(const std::string& id) override;
  Result<std::vector<Delivery>> ClaimDue(TimePoint now, int limit, Duration lease,
                                         const std::string& owner,
                                         const std::string& destination = "") override;
  Result<std::optional<TimePoint>> NextDueAt(const std::string& destination = "") override;
  Result<int64_t> CountDue(TimePoint now) override;
  Result<std::optional<TimePoint>> OldestDueAt(TimePoint now) override;
  Result<std::map<std::string, int64_t>> CountDueByDestination(TimePoint now) override;
  Result<std::vector<StatsRow>> GetStats(TimePoint since, TimePoint until) override;
  Status RecordAttempt(const Attempt& attempt, const DeliveryUpdate& update,
                       const std::string& owner) override;
  std::vector<Status> RecordAttempts(const std::vector<AttemptRecord>& records,
                                     const std::string& owner) override;
  Result<int64_t> ReleaseClaims(const std::vector<int64_t>& delivery_ids,
                                const std::string& owner) override;
  Result<std::optional<policy::BreakerSnapshot>> GetBreaker(
      const std::string& destination) override;
  Status PutBreaker(const std::string& destination,
                    const policy::BreakerSnapshot& snapshot) override;
  Result<int64_t> PauseDeliveries(const std::string& destination,
                                  const std::string& reason) override;
  Result<int64_t> ResumeDeliveries(const std::string& destination, TimePoint now) override;
  Result<int64_t> UnpauseDeliveries(const std::string& destination, TimePoint now) override;

  // --- TokenStore (postgres/tokens.cc) ---
  Status CreateToken(const ApiToken& token) override;
  Result<bool> EnsureToken(const ApiToken& token) override;
  Result<std::vector<ApiToken>> ListTokens() override;
  Result<bool> DeleteToken(const std::string& name) override;
  Result<bool> RevokeToken(const std::string& name) override;
  Status TouchToken(const std::string& name, TimePoint at, const std::string& addr) override;

  // KeyStore (postgres/keys.cc)
  Result<std::vector<WrappedDataKey>> ListDataKeys() override;
  Result<bool> AddDataKey(const WrappedDataKey& key, bool only_if_none) override;
  Result<bool> DeleteDataKey(const std::string& master_key_id) override;
  Status EraseOldCopies() override;
  Result<std::vector<policy::BreakerStep>> UpdateBreaker(
      const std::string& destination, const policy::BreakerConfig& config,
      const std::vector<BreakerInputAt>& inputs) override;
  Result<DestinationControl> GetDestinationControl(const std::string& destination) override;
  Result<std::map<std::string, DestinationControl>> ListDestinationControls() override;
  Result<int64_t> PauseDestination(const std::string& destination, const std::string& reason,
                                   TimePoint now) override;
  Result<int64_t> ResumeDestination(const std::string& destination, TimePoint now) override;
  Result<Delivery> CreateReplay(const std::string& event_id, const std::string& destination,
                                int max_attempts, TimePoint now) override;
  Result<int64_t> CreateReplays(const std::vector<NewReplay>& replays) override;
  Result<std::optional<Delivery>> OrderHead(const std::string& destination,
                                            const std::string& order_key) override;
  Result<HeldQueues> ListHeldQueues(const std::string& destination, int limit) override;
  Result<int64_t> PurgeEventsBefore(TimePoint cutoff, int batch) override;
  Result<int64_t> CountDeliveries(DeliveryStatus status) override;
  Status AppendAudit(const AuditEntry& entry) override;
  Result<AuditPage> ListAudit(const std::string& cursor, int limit) override;
  Status AppendRejections(const std::vector<Rejection>& rejections, int keep_per_source) override;
  Result<RejectionPage> ListRejections(const std::string& source, const std::string& cursor,
                                       int limit) override;
  Result<int64_t> PurgeRejectionsBefore(TimePoint cutoff, int batch) override;
  Status CreateReplayJob(const ReplayJob& job) override;
  Result<std::optional<ReplayJob>> GetReplayJob(const std::string& id) override;
  Result<ReplayJobPage> ListReplayJobs(const std::string& cursor, int limit) override;
  Result<std::optional<ReplayJob>> ClaimReplayJob(TimePoint now, Duration lease,
                                                  const std::string& owner) override;
  Status UpdateReplayJob(const ReplayJob& job, const std::string& owner) override;
  Result<std::optional<ReplayJob>> CancelReplayJob(const std::string& id, TimePoint now) override;
  Result<std::vector<CatalogObject>> ListCatalog() override;
  Status ApplyCatalogChange(const CatalogChange& change) override;
  Result<int64_t> CatalogVersion() override;
  // Starts the LISTEN connection (pg::PgListener) on the channels the writes below NOTIFY:
  // hookrelay_work (appends that stored due deliveries, replays created, deliveries resumed),
  // hookrelay_catalog (every catalog change) and hookrelay_replays (replay jobs queued or
  // cancelled). Notifications carry this store's random token, so its own are skipped.
  void Watch(ChangeCallback on_change) override;
  void Unwatch() override;
  // Says at once why not when the LISTEN connection is down (it reconnects by itself);
  // otherwise runs SELECT 1. The reason shown is pg::PublicFailureReason's; details are logged
  // when the reason changes.
  Status CheckReady() override;

  // The schema version after opening, and how many migrations this open applied.
  int schema_version() const { return schema_version_; }
  int migrations_applied() const { return migrations_applied_; }

  struct WriterStats {
    int64_t batches = 0;  // transactions of appends committed
    int64_t appends = 0;  // appends completed (stored, duplicate or failed)
    int64_t largest_batch = 0;
  };
  WriterStats writer_stats() const;

 private:
  struct PendingAppend {
    NewEvent event;
    AppendCallback done;
  };
  using Conn = std::unique_ptr<pg::PgConn>;

  PostgresStore(PostgresOptions options, const Clock& clock);

  // A connection from the pool (or a new one) and its return.
  Result<Conn> Acquire();
  void Release(Conn conn);
  // Runs `fn` on a pooled connection (no transaction: one statement is its own).
  template <typename T>
  Result<T> WithConn(const std::function<Result<T>(pg::PgConn&)>& fn);
  // Runs `fn` in a transaction on a pooled connection; commits when it returns OK.
  template <typename T>
  Result<T> InTransaction(const std::function<Result<T>(pg::PgConn&)>& fn);

  void WriterLoop();
  // Appends `batch` in one transaction; one result per append.
  std::vector<Result<AppendResult>> AppendBatch(pg::PgConn& db, std::vector<PendingAppend>& batch);
  Result<std::vector<Result<AppendResult>>> TryAppendBatch(pg::PgConn& db,
                                                           std::vector<PendingAppend>& batch,
                                                           size_t from, size_t count);

  // The head of an ordered queue (OrderHead), in the caller's connection or transaction.
  Result<std::optional<Delivery>> ReadOrderHeadIn(pg::PgConn& db, const std::string& destination,
                                                  const std::string& order_key) const;
  // One replay chain in the caller's transaction; its delivery id, or kNotFound.
  Result<int64_t> InsertReplay(pg::PgConn& db, const std::string& event_id,
                               const std::string& destination, int max_attempts, TimePoint due);
  // One attempt's statement (run in the caller's transaction; RecordAttempts pipelines them),
  // and what its row says: *refused: kFailedPrecondition/kNotFound for this record only (nothing
  // written). *destination: the delivery's, when written.
  static pg::PgStatement AttemptStatement(const Attempt& attempt, const DeliveryUpdate& update,
                                          const std::string& owner, TimePoint now);
  static Status AttemptWritten(const pg::PgResult& r, const Attempt& attempt,
                               const std::string& owner, bool* refused, std::string* destination);

  // NOTIFY `channel` with this store's token, in the caller's transaction (delivered at COMMIT).
  Status NotifyOthers(pg::PgConn& db, std::string_view channel);
  // The same notification as a statement, for a pipeline (the append transaction's).
  pg::PgStatement NotifyStatement(std::string_view channel) const;

  Result<std::optional<TimePoint>> EarliestScheduled(const std::string& destination,
                                                     std::optional<TimePoint> by);

  // Time partitions (docs/postgres.md, "Retention by time partitions"). The UTC days (since the
  // Unix epoch) whose partitions of events and attempts exist, as far as this node knows: a day
  // in the set exists (days are only dropped once past the retention cutoff, before every key
  // still to come).
  static int64_t KeyDay(int64_t key);
  // Days of `days` that are not known to exist yet; empty when all are.
  std::set<int64_t> MissingDays(const std::set<int64_t>& days) const;
  // Creates the partitions of `days` that do not exist, in a transaction of its own under the
  // partition advisory lock (`db` must be outside a transaction).
  Status EnsurePartitions(pg::PgConn& db, const std::set<int64_t>& days);
  // Drops every day partition wholly before `cutoff` none of whose events has an open delivery,
  // with the deliveries of its events; returns how many events went.
  Result<int64_t> DropExpiredPartitions(TimePoint cutoff);

  const PostgresOptions options_;
  const Clock& clock_;
  uint64_t event_id_bits_ = 0;
  int schema_version_ = 0;
  int migrations_applied_ = 0;

  mutable Mutex pool_mu_;
  std::vector<Conn> idle_ GUARDED_BY(pool_mu_);

  mutable Mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<PendingAppend> queue_ GUARDED_BY(queue_mu_);
  bool stopping_ GUARDED_BY(queue_mu_) = false;
  WriterStats stats_ GUARDED_BY(queue_mu_);
  Conn writer_conn_;  // the writer thread's only

  mutable Mutex partition_mu_;
  std::set<int64_t> partition_days_ GUARDED_BY(partition_mu_);
  std::thread writer_;

  // The payload of this store's notifications (random, chosen at Open).
  std::string notify_token_;
  Mutex listen_mu_;
  std::unique_ptr<pg::PgListener> listener_ GUARDED_BY(listen_mu_);  // set once by Watch
  std::string last_ready_reason_ GUARDED_BY(listen_mu_);             // what CheckReady logged last
};

// Opens the PostgreSQL store (PostgresStore::Open).
Result<std::unique_ptr<Store>> OpenPostgresStore(const PostgresOptions& options,
                                                 const Clock& clock);

}  // namespace hookrelay::store
