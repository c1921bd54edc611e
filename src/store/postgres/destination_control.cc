// PostgresStore (postgres_store.h): Destination control: breakers, pause and resume (one row of
// `breakers` per destination).

#include <map>
#include <utility>

#include "store/postgres/postgres_store.h"
#include "store/postgres/statements.h"
#include "store/row_codec.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;
using pg_store::kWorkChannel;
using pg_store::Unit;

namespace {

// Shows the destination's waiting deliveries as paused; those in flight (delivering) finish their
// attempt. Returns how many were paused.
Result<int64_t> PauseScheduled(PgConn& db, const std::string& destination,
                               const std::string& reason, TimePoint now) {
  PgParams p;
  const std::string sql = "UPDATE deliveries SET status = 'paused', reason = " + p.Text(reason) +
                          ", updated_at = " + p.Time(now) +
                          " WHERE destination = " + p.Text(destination) +
                          " AND status = 'scheduled'";
  HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "pause deliveries to " + destination));
  return r.affected();
}

// Schedules the destination's paused deliveries for `now`, or at their own due times with
// `keep_due_times`. Returns how many were resumed.
Result<int64_t> ResumePaused(PgConn& db, const std::string& destination, TimePoint now,
                             bool keep_due_times = false) {
  PgParams p;
  const std::string at = p.Time(now);
  const std::string sql = "UPDATE deliveries SET status = 'scheduled', " +
                          (keep_due_times ? std::string() : "next_attempt_at = " + at + ", ") +
                          "reason = NULL, updated_at = " + at +
                          " WHERE destination = " + p.Text(destination) + " AND status = 'paused'";
  HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "resume deliveries to " + destination));
  return r.affected();
}

constexpr char kControlColumns[] =
    "state, consecutive_failures, trips, open_until, closed_since, probe_in_flight,"
    " paused_reason, paused_since";

// The breaker's six columns (the first of kControlColumns) from `col`.
Result<policy::BreakerSnapshot> ReadBreaker(const PgResult& r, int row, int col) {
  policy::BreakerSnapshot s;
  const std::string state = r.Text(row, col);
  std::optional<policy::BreakerState> parsed = ParseBreakerStateName(state);
  if (!parsed) return Status::Internal("unknown breaker state in the database: " + state);
  s.state = *parsed;
  s.consecutive_failures = static_cast<int>(r.Int(row, col + 1));
  s.trips = static_cast<int>(r.Int(row, col + 2));
  s.open_until = r.OptTime(row, col + 3);
  s.closed_since = r.OptTime(row, col + 4);
  s.probe_in_flight = r.Bool(row, col + 5);
  return s;
}

// The row's columns (kControlColumns) from `col`.
Result<DestinationControl> ReadControl(const PgResult& r, int row, int col) {
  DestinationControl c;
  HR_ASSIGN_OR_RETURN(c.breaker, ReadBreaker(r, row, col));
  if (std::optional<TimePoint> since = r.OptTime(row, col + 7)) {
    c.pause = DestinationPause{r.OptText(row, col + 6).value_or(""), *since};
  }
  return c;
}

// The destination's row, locked until the transaction ends (made first when there is none, so
// two nodes that find none still serialise on it).
Result<policy::BreakerSnapshot> LockBreakerRow(PgConn& db, const std::string& destination) {
  for (int pass = 0; pass < 2; ++pass) {
    PgParams p;
    const std::string sql = std::string("SELECT ") + kControlColumns +
                            " FROM breakers WHERE destination = " + p.Text(destination) +
                            " FOR UPDATE";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "lock breaker of " + destination));
    if (r.rows() > 0) {
      HR_ASSIGN_OR_RETURN(DestinationControl c, ReadControl(r, 0, 0));
      return c.breaker;
    }
    PgParams ins;
    const std::string insert =
        "INSERT INTO breakers (destination, state, consecutive_failures, trips,"
        " probe_in_flight) VALUES (" +
        ins.Text(destination) + ", 'closed', 0, 0, false) ON CONFLICT (destination) DO NOTHING";
    HR_RETURN_IF_ERROR(db.Exec(insert, ins, "create breaker of " + destination).status());
  }
  return Status::Internal("the breaker row of " + destination + " vanished while locked");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Breakers, pause and resume, replays, retention

Result<std::optional<policy::BreakerSnapshot>> PostgresStore::GetBreaker(
    const std::string& destination) {
  return WithConn<std::optional<policy::BreakerSnapshot>>(
      [&](PgConn& db) -> Result<std::optional<policy::BreakerSnapshot>> {
        PgParams p;
        const std::string sql =
            "SELECT state, consecutive_failures, trips, open_until, closed_since, probe_in_flight"
            " FROM breakers WHERE destination = " +
            p.Text(destination);
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get breaker of " + destination));
        if (r.rows() == 0) return std::optional<policy::BreakerSnapshot>();
        HR_ASSIGN_OR_RETURN(policy::BreakerSnapshot s, ReadBreaker(r, 0, 0));
        return std::optional<policy::BreakerSnapshot>(s);
      });
}

Status PostgresStore::PutBreaker(const std::string& destination,
                                 const policy::BreakerSnapshot& snapshot) {
  return WithConn<Unit>([&](PgConn& db) -> Result<Unit> {
           PgParams p;
           const std::string sql =
               "INSERT INTO breakers (destination, state, consecutive_failures, trips,"
               " open_until, closed_since, probe_in_flight) VALUES (" +
               p.Text(destination) + ", " + p.Text(policy::BreakerStateName(snapshot.state)) +
               ", " + p.Int(snapshot.consecutive_failures) + ", " + p.Int(snapshot.trips) + ", " +
               p.OptTime(snapshot.open_until) + ", " + p.OptTime(snapshot.closed_since) + ", " +
               p.Bool(snapshot.probe_in_flight) +
               ") ON CONFLICT (destination) DO UPDATE SET state = excluded.state,"
               " consecutive_failures = excluded.consecutive_failures, trips = excluded.trips,"
               " open_until = excluded.open_until, closed_since = excluded.closed_since,"
               " probe_in_flight = excluded.probe_in_flight";
           HR_RETURN_IF_ERROR(db.Exec(sql, p, "store breaker of " + destination).status());
           return Unit{};
         })
      .status();
}

Result<int64_t> PostgresStore::PauseDeliveries(const std::string& destination,
                                               const std::string& reason) {
  const TimePoint now = clock_.Now();
  return WithConn<int64_t>(
      [&](PgConn& db) -> Result<int64_t> { return PauseScheduled(db, destination, reason, now); });
}

Result<int64_t> PostgresStore::ResumeDeliveries(const std::string& destination, TimePoint now) {
  return InTransaction<int64_t>([&](PgConn& db) -> Result<int64_t> {
    HR_ASSIGN_OR_RETURN(int64_t resumed, ResumePaused(db, destination, now));
    if (resumed > 0) HR_RETURN_IF_ERROR(NotifyOthers(db, kWorkChannel));
    return resumed;
  });
}

Result<int64_t> PostgresStore::UnpauseDeliveries(const std::string& destination, TimePoint now) {
  return InTransaction<int64_t>([&](PgConn& db) -> Result<int64_t> {
    HR_ASSIGN_OR_RETURN(int64_t resumed,
                        ResumePaused(db, destination, now, /*keep_due_times=*/true));
    if (resumed > 0) HR_RETURN_IF_ERROR(NotifyOthers(db, kWorkChannel));
    return resumed;
  });
}

Result<std::vector<policy::BreakerStep>> PostgresStore::UpdateBreaker(
    const std::string& destination, const policy::BreakerConfig& config,
    const std::vector<BreakerInputAt>& inputs) {
  if (inputs.empty()) return Status::InvalidArgument("no breaker inputs", "inputs");
  return InTransaction<std::vector<policy::BreakerStep>>(
      [&](PgConn& db) -> Result<std::vector<policy::BreakerStep>> {
        // The row lock serialises the nodes: each applies its inputs to what the last one wrote.
        HR_ASSIGN_OR_RETURN(policy::BreakerSnapshot before, LockBreakerRow(db, destination));
        std::vector<policy::BreakerStep> steps = policy::ApplyBreakerInputs(config, before, inputs);
        const policy::BreakerSnapshot& s = steps.back().after;
        if (s == before) return steps;
        PgParams p;
        const std::string sql =
            "UPDATE breakers SET state = " + p.Text(policy::BreakerStateName(s.state)) +
            ", consecutive_failures = " + p.Int(s.consecutive_failures) +
            ", trips = " + p.Int(s.trips) + ", open_until = " + p.OptTime(s.open_until) +
            ", closed_since = " + p.OptTime(s.closed_since) +
            ", probe_in_flight = " + p.Bool(s.probe_in_flight) +
            " WHERE destination = " + p.Text(destination);
        HR_RETURN_IF_ERROR(db.Exec(sql, p, "update breaker of " + destination).status());
        return steps;
      });
}

Result<DestinationControl> PostgresStore::GetDestinationControl(const std::string& destination) {
  return WithConn<DestinationControl>([&](PgConn& db) -> Result<DestinationControl> {
    PgParams p;
    const std::string sql = std::string("SELECT ") + kControlColumns +
                            " FROM breakers WHERE destination = " + p.Text(destination);
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "get control of " + destination));
    if (r.rows() == 0) return DestinationControl{};
    return ReadControl(r, 0, 0);
  });
}

Result<std::map<std::string, DestinationControl>> PostgresStore::ListDestinationControls() {
  return WithConn<std::map<std::string, DestinationControl>>(
      [&](PgConn& db) -> Result<std::map<std::string, DestinationControl>> {
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(std::string("SELECT destination, ") +
                                                    kControlColumns + " FROM breakers",
                                                "list destination controls"));
        std::map<std::string, DestinationControl> out;
        for (int i = 0; i < r.rows(); ++i) {
          HR_ASSIGN_OR_RETURN(DestinationControl c, ReadControl(r, i, 1));
          out.emplace(r.Text(i, 0), std::move(c));
        }
        return out;
      });
}

Result<int64_t> PostgresStore::PauseDestination(const std::string& destination,
                                                const std::string& reason, TimePoint now) {
  return InTransaction<int64_t>([&](PgConn& db) -> Result<int64_t> {
    {
      PgParams p;
      const std::string sql =
          "INSERT INTO breakers (destination, state, consecutive_failures, trips,"
          " probe_in_flight, paused_reason, paused_since) VALUES (" +
          p.Text(destination) + ", 'closed', 0, 0, false, " + p.Text(reason) + ", " + p.Time(now) +
          ") ON CONFLICT (destination) DO UPDATE SET paused_reason = excluded.paused_reason,"
          " paused_since = COALESCE(breakers.paused_since, excluded.paused_since)";
      HR_RETURN_IF_ERROR(db.Exec(sql, p, "pause " + destination).status());
    }
    return PauseScheduled(db, destination, reason, now);
  });
}

Result<int64_t> PostgresStore::ResumeDestination(const std::string& destination, TimePoint now) {
  return InTransaction<int64_t>([&](PgConn& db) -> Result<int64_t> {
    {
      PgParams p;
      const std::string sql =
          "UPDATE breakers SET paused_reason = NULL, paused_since = NULL WHERE destination = " +
          p.Text(destination);
      HR_RETURN_IF_ERROR(db.Exec(sql, p, "resume " + destination).status());
    }
    return ResumePaused(db, destination, now);
  });
}

}  // namespace hookrelay::store
