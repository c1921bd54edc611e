// PostgresStore (postgres_store.h): Counts for the dashboard and metrics.

#include <map>

#include "store/event_id.h"
#include "store/postgres/postgres_store.h"
#include "store/postgres/statements.h"
#include "store/row_codec.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;

Result<std::optional<TimePoint>> PostgresStore::OldestDueAt(TimePoint now) {
  return EarliestScheduled("", now);
}

Result<int64_t> PostgresStore::CountDue(TimePoint now) {
  return WithConn<int64_t>([&](PgConn& db) -> Result<int64_t> {
    PgParams p;
    const std::string sql = "SELECT COUNT(*) FROM deliveries WHERE claim_at <= " + p.Time(now) +
                            " AND status = 'scheduled'";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "count due deliveries"));
    return r.Int(0, 0);
  });
}

Result<std::map<std::string, int64_t>> PostgresStore::CountDueByDestination(TimePoint now) {
  return WithConn<std::map<std::string, int64_t>>(
      [&](PgConn& db) -> Result<std::map<std::string, int64_t>> {
        PgParams p;
        const std::string sql =
            "SELECT destination, COUNT(*) FROM deliveries WHERE claim_at <= " + p.Time(now) +
            " AND status = 'scheduled' GROUP BY destination";
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "count due deliveries per destination"));
        std::map<std::string, int64_t> out;
        for (int i = 0; i < r.rows(); ++i) out[r.Text(i, 0)] = r.Int(i, 1);
        return out;
      });
}

Result<std::vector<StatsRow>> PostgresStore::GetStats(TimePoint since, TimePoint until) {
  return WithConn<std::vector<StatsRow>>([&](PgConn& db) -> Result<std::vector<StatsRow>> {
    PgParams p;
    const std::string sql =
        "SELECT minute, destination, received, delivered, failed, attempts, attempt_failures"
        " FROM stats_minute WHERE minute >= " +
        p.Int(UnixMinute(since)) + " AND minute < " +
        p.Int(UnixMinute(until + std::chrono::minutes(1) - Duration(1))) +
        " ORDER BY minute, destination COLLATE \"C\"";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "read stats"));
    std::vector<StatsRow> out;
    for (int i = 0; i < r.rows(); ++i) {
      StatsRow s;
      s.minute = r.Int(i, 0);
      s.destination = r.Text(i, 1);
      s.received = r.Int(i, 2);
      s.delivered = r.Int(i, 3);
      s.failed = r.Int(i, 4);
      s.attempts = r.Int(i, 5);
      s.attempt_failures = r.Int(i, 6);
      out.push_back(std::move(s));
    }
    return out;
  });
}

Result<int64_t> PostgresStore::CountDeliveries(DeliveryStatus status) {
  return WithConn<int64_t>([&](PgConn& db) -> Result<int64_t> {
    PgParams p;
    const std::string sql =
        "SELECT COUNT(*) FROM deliveries WHERE status = " + p.Text(DeliveryStatusName(status)) +
        " AND current";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "count deliveries"));
    return r.Int(0, 0);
  });
}

}  // namespace hookrelay::store
