// Private to SqliteStore's files: the operations queued for the writer (write_pipeline.cc) and
// Write<T>, which queues one and waits for it.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/sqlite/sqlite_store.h"

namespace hookrelay::store {

using sqlite::Connection;

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

}  // namespace hookrelay::store
