// PostgresStore (postgres_store.h): Bulk replay jobs.

#include <charconv>
#include <limits>
#include <utility>

#include "common/id.h"
#include "common/list_limits.h"
#include "store/postgres/postgres_store.h"
#include "store/postgres/statements.h"
#include "store/row_codec.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;
using pg_store::kReplaysChannel;
using pg_store::Unit;

namespace {

constexpr char kReplayJobColumns[] =
    "id, created_at, updated_at, filter, rate, state, total, done, failed, cursor, error,"
    " lease_until, lease_owner, waiting";

Result<ReplayJob> ReadReplayJob(const PgResult& r, int row) {
  ReplayJob j;
  j.id = r.Text(row, 0);
  j.created_at = r.Time(row, 1);
  j.updated_at = r.Time(row, 2);
  j.filter = r.Text(row, 3);
  j.rate = r.Double(row, 4);
  const std::string state = r.Text(row, 5);
  std::optional<ReplayJobState> parsed = ParseReplayJobState(state);
  if (!parsed) return Status::Internal("unknown replay job state in the database: " + state);
  j.state = *parsed;
  j.total = r.Int(row, 6);
  j.done = r.Int(row, 7);
  j.failed = r.Int(row, 8);
  j.cursor = r.Text(row, 9);
  j.error = r.OptText(row, 10);
  j.lease_until = r.OptTime(row, 11);
  j.lease_owner = r.Text(row, 12);
  j.waiting = r.OptText(row, 13);
  return j;
}

Result<std::optional<ReplayJob>> SelectReplayJob(PgConn& db, const std::string& id) {
  PgParams p;
  const std::string sql =
      std::string("SELECT ") + kReplayJobColumns + " FROM replays WHERE id = " + p.Text(id);
  HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get replay job " + id));
  if (r.rows() == 0) return std::optional<ReplayJob>();
  HR_ASSIGN_OR_RETURN(ReplayJob j, ReadReplayJob(r, 0));
  return std::optional<ReplayJob>(std::move(j));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Bulk replay jobs

Status PostgresStore::CreateReplayJob(const ReplayJob& job) {
  if (job.id.empty()) return Status::InvalidArgument("replay job id is empty", "id");
  const TimePoint now = clock_.Now();
  return InTransaction<Unit>([&](PgConn& db) -> Result<Unit> {
           PgParams p;
           const std::string sql =
               "INSERT INTO replays (id, created_at, updated_at, filter, rate, state, total, done,"
               " failed, cursor, error, lease_until, lease_owner, waiting) VALUES (" +
               p.Text(job.id) + ", " + p.Time(job.created_at) + ", " + p.Time(now) + ", " +
               p.Text(job.filter) + ", " + p.Double(job.rate) + ", " +
               p.Text(ReplayJobStateName(job.state)) + ", " + p.Int(job.total) + ", " +
               p.Int(job.done) + ", " + p.Int(job.failed) + ", " + p.Text(job.cursor) + ", " +
               p.OptText(job.error) + ", " + p.OptTime(job.lease_until) + ", " +
               p.Text(job.lease_owner) + ", " + p.OptText(job.waiting) +
               ") ON CONFLICT (id) DO NOTHING";
           HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "create replay job " + job.id));
           if (r.affected() == 0) {
             return Status::FailedPrecondition("replay job " + job.id + " already exists");
           }
           HR_RETURN_IF_ERROR(NotifyOthers(db, kReplaysChannel));
           return Unit{};
         })
      .status();
}

Result<std::optional<ReplayJob>> PostgresStore::GetReplayJob(const std::string& id) {
  return WithConn<std::optional<ReplayJob>>(
      [&](PgConn& db) -> Result<std::optional<ReplayJob>> { return SelectReplayJob(db, id); });
}

Result<ReplayJobPage> PostgresStore::ListReplayJobs(const std::string& cursor, int limit) {
  limit = std::clamp(limit, 1, kMaxListLimit);
  // Job ids are ULIDs (time-ordered); the cursor is the last id of the previous page.
  if (!cursor.empty() && !IsUlid(cursor)) return BadCursor();
  return WithConn<ReplayJobPage>([&](PgConn& db) -> Result<ReplayJobPage> {
    PgParams p;
    std::string sql = std::string("SELECT ") + kReplayJobColumns + " FROM replays";
    if (!cursor.empty()) sql += " WHERE id COLLATE \"C\" < " + p.Text(cursor);
    sql += " ORDER BY id COLLATE \"C\" DESC LIMIT " + p.Int(limit + 1);
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "list replay jobs"));
    ReplayJobPage page;
    for (int i = 0; i < r.rows(); ++i) {
      if (static_cast<int>(page.items.size()) == limit) {
        page.next_cursor = page.items.back().id;
        break;
      }
      HR_ASSIGN_OR_RETURN(ReplayJob j, ReadReplayJob(r, i));
      page.items.push_back(std::move(j));
    }
    return page;
  });
}

Result<std::optional<ReplayJob>> PostgresStore::ClaimReplayJob(TimePoint now, Duration lease,
                                                               const std::string& owner) {
  return WithConn<std::optional<ReplayJob>>([&](PgConn& db) -> Result<std::optional<ReplayJob>> {
    PgParams p;
    const std::string at = p.Time(now);
    std::string columns;
    for (std::string_view rest = kReplayJobColumns; !rest.empty();) {
      const size_t comma = rest.find(',');
      std::string_view col = rest.substr(0, comma);
      while (!col.empty() && col.front() == ' ') col.remove_prefix(1);
      columns += (columns.empty() ? "r." : ", r.") + std::string(col);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    const std::string sql =
        "WITH c AS (SELECT id FROM replays WHERE state = 'queued' OR (state = 'running' AND"
        " (lease_until IS NULL OR lease_until <= " +
        at +
        "))"
        " ORDER BY created_at, id COLLATE \"C\" LIMIT 1 FOR UPDATE SKIP LOCKED)"
        " UPDATE replays r SET state = 'running', lease_until = " +
        p.Time(now + lease) + ", lease_owner = " + p.Text(owner) + ", updated_at = " + at +
        " FROM c WHERE r.id = c.id RETURNING " + columns;
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "claim a replay job"));
    if (r.rows() == 0) return std::optional<ReplayJob>();
    HR_ASSIGN_OR_RETURN(ReplayJob j, ReadReplayJob(r, 0));
    return std::optional<ReplayJob>(std::move(j));
  });
}

Status PostgresStore::UpdateReplayJob(const ReplayJob& job, const std::string& owner) {
  const TimePoint now = clock_.Now();
  return InTransaction<Unit>([&](PgConn& db) -> Result<Unit> {
           PgParams q;
           const std::string sel =
               "SELECT state, lease_owner FROM replays WHERE id = " + q.Text(job.id) +
               " FOR UPDATE";
           HR_ASSIGN_OR_RETURN(PgResult cur, db.Exec(sel, q, "get replay job " + job.id));
           if (cur.rows() == 0) return Status::NotFound("no replay job " + job.id);
           if (cur.Text(0, 0) != "running" || cur.Text(0, 1) != owner) {
             return Status::FailedPrecondition("replay job " + job.id + " is " + cur.Text(0, 0) +
                                               " and not leased by " + owner);
           }
           const bool final = IsFinal(job.state);
           PgParams p;
           const std::string sql =
               "UPDATE replays SET state = " + p.Text(ReplayJobStateName(job.state)) +
               ", total = " + p.Int(job.total) + ", done = " + p.Int(job.done) +
               ", failed = " + p.Int(job.failed) + ", cursor = " + p.Text(job.cursor) +
               ", error = " + p.OptText(job.error) +
               ", lease_until = " + p.OptTime(final ? std::nullopt : job.lease_until) +
               ", lease_owner = " + p.Text(final ? std::string() : owner) +
               ", updated_at = " + p.Time(now) +
               ", waiting = " + p.OptText(final ? std::nullopt : job.waiting) +
               " WHERE id = " + p.Text(job.id);
           HR_RETURN_IF_ERROR(db.Exec(sql, p, "update replay job " + job.id).status());
           return Unit{};
         })
      .status();
}

Result<std::optional<ReplayJob>> PostgresStore::CancelReplayJob(const std::string& id,
                                                                TimePoint now) {
  return InTransaction<std::optional<ReplayJob>>(
      [&](PgConn& db) -> Result<std::optional<ReplayJob>> {
        PgParams p;
        const std::string sql =
            "UPDATE replays SET state = 'cancelled', lease_until = NULL, lease_owner = '',"
            " waiting = NULL, updated_at = " +
            p.Time(now) + " WHERE id = " + p.Text(id) + " AND state IN ('queued', 'running')";
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "cancel replay job " + id));
        // The node running it (maybe another) stops at once rather than at its next wake-up.
        if (r.affected() > 0) HR_RETURN_IF_ERROR(NotifyOthers(db, kReplaysChannel));
        return SelectReplayJob(db, id);
      });
}

}  // namespace hookrelay::store
