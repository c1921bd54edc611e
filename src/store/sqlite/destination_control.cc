// SqliteStore: destination control: the shared breaker and pauses (one row of `breakers` per
// destination).

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

Result<int64_t> SqliteStore::UnpauseDeliveries(const std::string& destination, TimePoint now) {
  return Write<int64_t>([&destination, now](Connection& db) -> Result<int64_t> {
    return ResumeDeliveriesIn(db, destination, now, /*keep_due_times=*/true);
  });
}

Result<int64_t> SqliteStore::ResumeDeliveriesIn(Connection& db, const std::string& destination,
                                                TimePoint now, bool keep_due_times) {
  Result<Statement> up = db.Prepare(
      keep_due_times ? "UPDATE deliveries SET status = 'scheduled', reason = NULL,"
                       " updated_at = ?2 WHERE destination = ?1 AND status = 'paused'"
                       " AND status IN ('scheduled', 'paused')"
                     : "UPDATE deliveries SET status = 'scheduled', next_attempt_at = ?2,"
                       " reason = NULL, updated_at = ?2 WHERE destination = ?1"
                       " AND status = 'paused' AND status IN ('scheduled', 'paused')");
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
        std::vector<policy::BreakerStep> steps = policy::ApplyBreakerInputs(config, before, inputs);
        const policy::BreakerSnapshot& s = steps.back().after;
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

}  // namespace hookrelay::store
