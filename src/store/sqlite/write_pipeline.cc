// SqliteStore's write pipeline: the writer (WriterLoop, RunBatch, group commit), the syncer
// (SyncLoop) and the writer's test hooks. sqlite_store.h has the design.

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
#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/statements.h"
#include "store/sqlite/write_ops.h"

namespace hookrelay::store {

using sqlite::Connection;
using sqlite::Statement;

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

Result<int64_t> SqliteStore::TEST_SetMaxPageCount(int64_t pages) {
  int64_t limit = pages > 0 ? pages : kSqliteMaxPageCount;
  return Write<int64_t>([limit](Connection& db) -> Result<int64_t> {
    Result<std::string> v = db.PragmaValue("max_page_count = " + std::to_string(limit));
    if (!v.ok()) return v.status();
    return static_cast<int64_t>(std::stoll(*v));
  });
}

Result<int64_t> SqliteStore::TEST_WriterTotalChanges() {
  return Write<int64_t>([](Connection& db) -> Result<int64_t> {
    return static_cast<int64_t>(sqlite3_total_changes64(db.handle()));
  });
}

void SqliteStore::TEST_RunOnWriter(std::function<void()> fn) {
  auto promise = std::make_shared<std::promise<Result<Unit>>>();
  Enqueue(std::make_unique<SyncOp<Unit>>(
      [fn = std::move(fn)](Connection&) -> Result<Unit> {
        fn();
        return Unit{};
      },
      std::move(promise)));
}

Result<std::string> SqliteStore::TEST_WriterPragma(const std::string& name) {
  return Write<std::string>(
      [name](Connection& db) -> Result<std::string> { return db.PragmaValue(name); });
}

}  // namespace hookrelay::store
