// PostgresStore (postgres_store.h): Retention: time partitions and purging old events.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "store/event_id.h"
#include "store/postgres/postgres_store.h"
#include "store/postgres/statements.h"
#include "store/row_codec.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;
using pg_store::ArrayLiteral;
using pg_store::CommitError;
using pg_store::Unit;

namespace {

// Serialises the creation and the dropping of partitions across nodes ("hrpartit").
constexpr int64_t kPartitionLock = 0x6872706172746974;
constexpr int64_t kDayMillis = 86'400'000;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Time partitions

int64_t PostgresStore::KeyDay(int64_t key) {
  return ToUnixMillis(EventKeyTime(key)) / kDayMillis;  // keys are never negative
}

std::set<int64_t> PostgresStore::MissingDays(const std::set<int64_t>& days) const {
  std::set<int64_t> missing;
  MutexLock lock(partition_mu_);
  for (int64_t d : days) {
    if (!partition_days_.count(d)) missing.insert(d);
  }
  return missing;
}

Status PostgresStore::EnsurePartitions(PgConn& db, const std::set<int64_t>& days) {
  const std::set<int64_t> missing = MissingDays(days);
  if (missing.empty()) return Status::Ok();
  std::vector<int64_t> list(missing.begin(), missing.end());
  auto run = [&]() -> Status {
    HR_RETURN_IF_ERROR(db.Script("BEGIN", "begin making partitions"));
    PgParams p;
    const std::string sql = "SELECT pg_advisory_xact_lock(" + p.Int(kPartitionLock) +
                            "), hookrelay_day_partitions(d) FROM unnest(" +
                            p.Text(ArrayLiteral(list)) + "::bigint[]) d";
    HR_RETURN_IF_ERROR(db.Exec(sql, p, "make the partitions of new days").status());
    return CommitError(db.Script("COMMIT", "commit the new partitions"));
  };
  Status st = run();
  if (!st.ok()) {
    db.RollbackIfOpen();
    return st;
  }
  MutexLock lock(partition_mu_);
  partition_days_.insert(missing.begin(), missing.end());
  return Status::Ok();
}

Result<int64_t> PostgresStore::DropExpiredPartitions(TimePoint cutoff) {
  // The day partitions wholly before the cutoff, oldest first (their names carry their day).
  struct Day {
    int64_t day;
    std::string events, attempts;
  };
  const int64_t cutoff_ms = ToUnixMillis(cutoff);
  HR_ASSIGN_OR_RETURN(
      std::vector<Day> expired,
      WithConn<std::vector<Day>>([&](PgConn& db) -> Result<std::vector<Day>> {
        HR_ASSIGN_OR_RETURN(
            PgResult r,
            db.Exec("SELECT c.relname, (to_date(substr(c.relname, 9), 'YYYYMMDD')"
                    " - DATE '1970-01-01')::bigint FROM pg_inherits i"
                    " JOIN pg_class c ON c.oid = i.inhrelid"
                    " WHERE i.inhparent = 'events'::regclass AND c.relname ~ '^events_p[0-9]{8}$'"
                    " ORDER BY 2",
                    "list the event partitions"));
        std::vector<Day> out;
        for (int i = 0; i < r.rows(); ++i) {
          const int64_t day = r.Int(i, 1);
          if ((day + 1) * kDayMillis > cutoff_ms) break;
          const std::string name = r.Text(i, 0);
          out.push_back({day, name, "attempts_p" + name.substr(8)});
        }
        return out;
      }));
  int64_t purged = 0;
  for (const Day& d : expired) {
    PgParams range;
    const std::string lo = range.Int(EventKeyFloor(FromUnixMillis(d.day * kDayMillis)));
    const std::string hi = range.Int(EventKeyFloor(FromUnixMillis((d.day + 1) * kDayMillis)));
    const std::string in_range = "event_id >= " + lo + " AND event_id < " + hi;
    // First the deliveries of its events, while the partition is held in EXCLUSIVE mode (reads go
    // on; a replay, which locks its event's row, waits): none may be open, or the day is kept
    // and only its finished events go, row by row (PurgeEventsBefore).
    HR_ASSIGN_OR_RETURN(
        std::optional<int64_t> events,
        InTransaction<std::optional<int64_t>>([&](PgConn& db) -> Result<std::optional<int64_t>> {
          HR_RETURN_IF_ERROR(db.Script("SET LOCAL lock_timeout = '2s'", "set lock_timeout"));
          HR_RETURN_IF_ERROR(db.Script("LOCK TABLE " + d.events + " IN EXCLUSIVE MODE",
                                       "hold the partition " + d.events));
          HR_ASSIGN_OR_RETURN(PgResult open,
                              db.Exec("SELECT EXISTS (SELECT 1 FROM deliveries WHERE " + in_range +
                                          " AND status IN ('scheduled', 'delivering', 'paused'))",
                                      range, "look for open deliveries in " + d.events));
          if (open.Bool(0, 0)) return std::optional<int64_t>();
          HR_ASSIGN_OR_RETURN(PgResult n, db.Exec("SELECT COUNT(*) FROM " + d.events,
                                                  "count the events of " + d.events));
          HR_RETURN_IF_ERROR(db.Exec("DELETE FROM deliveries WHERE " + in_range, range,
                                     "delete the deliveries of " + d.events)
                                 .status());
          return std::optional<int64_t>(n.Int(0, 0));
        }));
    if (!events) continue;
    // Then the partitions, in a short transaction holding the parents (ACCESS EXCLUSIVE, as any
    // DROP of a partition): only if no delivery was made for its events meanwhile (a replay
    // that committed between the two transactions keeps the day for a later pass).
    HR_ASSIGN_OR_RETURN(
        bool dropped, InTransaction<bool>([&](PgConn& db) -> Result<bool> {
          PgParams p;
          HR_RETURN_IF_ERROR(db.Exec("SELECT pg_advisory_xact_lock(" + p.Int(kPartitionLock) + ")",
                                     p, "take the partition lock")
                                 .status());
          HR_RETURN_IF_ERROR(db.Script("SET LOCAL lock_timeout = '2s'", "set lock_timeout"));
          HR_RETURN_IF_ERROR(db.Script("LOCK TABLE ONLY events IN ACCESS EXCLUSIVE MODE",
                                       "hold events to drop " + d.events));
          HR_ASSIGN_OR_RETURN(
              PgResult any,
              db.Exec("SELECT EXISTS (SELECT 1 FROM deliveries WHERE " + in_range + ")", range,
                      "look for new deliveries in " + d.events));
          if (any.Bool(0, 0)) return false;
          HR_RETURN_IF_ERROR(db.Script("DROP TABLE IF EXISTS " + d.attempts + ", " + d.events,
                                       "drop the partitions " + d.events));
          return true;
        }));
    if (!dropped) continue;
    {
      MutexLock lock(partition_mu_);
      partition_days_.erase(d.day);
    }
    spdlog::info("PostgreSQL store: retention dropped the partitions {} and {} ({} events)",
                 d.events, d.attempts, *events);
    purged += *events;
  }
  return purged;
}

Result<int64_t> PostgresStore::PurgeEventsBefore(TimePoint cutoff, int batch) {
  if (batch <= 0) return int64_t{0};
  // The dashboard's counters are read for at most 7 days back: older minutes go with each pass.
  const int64_t stats_cutoff = UnixMinute(clock_.Now() - std::chrono::days(8));
  {
    // The partitions of today and tomorrow are made ahead (each pass, a no-op once they exist),
    // so appends seldom have to make one.
    const int64_t today = KeyDay(EventKeyFloor(clock_.Now()));
    HR_RETURN_IF_ERROR(WithConn<Unit>([&](PgConn& db) -> Result<Unit> {
                         HR_RETURN_IF_ERROR(EnsurePartitions(db, {today, today + 1}));
                         return Unit{};
                       }).status());
  }
  // Whole days first: a day past the cutoff none of whose events has an open delivery is dropped
  // (its partitions of events and attempts, and its deliveries). This may exceed `batch`.
  HR_ASSIGN_OR_RETURN(const int64_t dropped, DropExpiredPartitions(cutoff));
  // Then row by row, up to `batch`: the events before the cutoff in the day it falls in, and the
  // finished events of a day kept for an open delivery.
  HR_ASSIGN_OR_RETURN(
      const int64_t deleted, InTransaction<int64_t>([&](PgConn& db) -> Result<int64_t> {
        {
          PgParams p;
          const std::string sql = "DELETE FROM stats_minute WHERE minute < " + p.Int(stats_cutoff);
          HR_RETURN_IF_ERROR(db.Exec(sql, p, "purge old stats").status());
        }
        // Deliveries and attempts go with their events (deleted below). An event with a delivery
        // not final yet (scheduled, delivering, paused) is kept. Rows another transaction holds (a
        // replay starting) are skipped this time.
        //
        // Two statements, not one: a replay on another node locks the event's row, adds its chain
        // and commits. Had it committed after this statement's snapshot but before the row lock
        // below, a single DELETE would still judge the event by the old snapshot (no open delivery)
        // and take the new chain with it. The DELETE gets a new snapshot (READ COMMITTED) while
        // this transaction holds the rows: every replay that committed before the lock is seen, and
        // every later one waits for the lock and then finds the event gone (not found).
        std::string locked = "{";
        {
          PgParams p;
          const std::string sql =
              "SELECT e.id FROM events e WHERE e.id < " + p.Int(EventKeyFloor(cutoff)) +
              " AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id"
              " AND d.status IN ('scheduled', 'delivering', 'paused'))"
              " ORDER BY e.id LIMIT " +
              p.Int(batch) + " FOR UPDATE SKIP LOCKED";
          HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "lock events to purge"));
          if (r.rows() == 0) return int64_t{0};
          for (int i = 0; i < r.rows(); ++i) {
            if (i > 0) locked += ',';
            locked += std::to_string(r.Int(i, 0));
          }
        }
        locked += '}';
        // No foreign keys (partitions): the event's deliveries and attempts are deleted with it
        // here.
        PgParams p;
        const std::string keys = p.Text(locked);
        const std::string sql =
            "WITH e AS (DELETE FROM events e WHERE e.id = ANY(" + keys +
            "::bigint[]) AND NOT EXISTS (SELECT 1 FROM deliveries d"
            " WHERE d.event_id = e.id AND d.status IN ('scheduled', 'delivering', 'paused')) "
            "RETURNING e.id),"
            " d AS (DELETE FROM deliveries WHERE event_id IN (SELECT id FROM e)),"
            " a AS (DELETE FROM attempts WHERE event_id = ANY(" +
            keys +
            "::bigint[]) AND event_id IN (SELECT id FROM e))"
            " SELECT COUNT(*) FROM e";
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "purge events"));
        return r.Int(0, 0);  // the events only, not their deliveries and attempts
      }));
  return dropped + deleted;
}

}  // namespace hookrelay::store
