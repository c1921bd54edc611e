// SqliteStore: bulk replay jobs.

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

}  // namespace hookrelay::store
