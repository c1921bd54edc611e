#include "store/postgres/statements.h"

#include "store/event_id.h"
#include "store/row_codec.h"

namespace hookrelay::store::pg_store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;
using pg::PgStatement;

std::string ArrayLiteral(const std::vector<int64_t>& keys) {
  std::string out = "{";
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(keys[i]);
  }
  return out + "}";
}

Result<Delivery> ReadDelivery(const PgResult& r, int row, uint64_t id_bits) {
  Delivery d;
  d.id = r.Int(row, 0);
  d.event_id = EventIdFromKey(r.Int(row, 1), id_bits);
  d.destination = r.Text(row, 2);
  d.chain = static_cast<int>(r.Int(row, 3));
  const std::string status = r.Text(row, 4);
  std::optional<DeliveryStatus> parsed = ParseDeliveryStatus(status);
  if (!parsed) return Status::Internal("unknown delivery status in the database: " + status);
  d.status = *parsed;
  d.attempts = static_cast<int>(r.Int(row, 5));
  d.max_attempts = static_cast<int>(r.Int(row, 6));
  d.next_attempt_at = r.Time(row, 7);
  d.deadline = r.OptTime(row, 8);
  d.first_failure_at = r.OptTime(row, 9);
  d.last_delay = Duration(r.Int(row, 10));
  d.reason = r.OptText(row, 11);
  d.lease_until = r.OptTime(row, 12);
  d.lease_owner = r.Text(row, 13);
  d.created_at = r.Time(row, 14);
  d.updated_at = r.Time(row, 15);
  d.order_key = r.OptText(row, 16);
  d.uncounted_attempts = static_cast<int>(r.Int(row, 17));
  return d;
}

Status InsertAudit(PgConn& db, const AuditEntry& entry) {
  PgParams p;
  const std::string sql = "INSERT INTO audit (at, actor, action, target, count, detail) VALUES (" +
                          p.Time(entry.at) + ", " + p.Text(entry.actor) + ", " +
                          p.Text(entry.action) + ", " + p.Text(entry.target) + ", " +
                          p.Int(entry.count) + ", " + p.Text(entry.detail) + ")";
  return db.Exec(sql, p, "append audit entry " + entry.action).status();
}

std::optional<PgStatement> StatsStatement(const StatsDelta& delta) {
  if (delta.empty()) return std::nullopt;
  PgParams p;
  std::string sql =
      "INSERT INTO stats_minute (minute, destination, received, delivered, failed, attempts,"
      " attempt_failures) VALUES ";
  bool first = true;
  for (const auto& [key, c] : delta) {
    if (!first) sql += ", ";
    first = false;
    sql += "(" + p.Int(key.first) + ", " + p.Text(key.second) + ", " + p.Int(c.received) + ", " +
           p.Int(c.delivered) + ", " + p.Int(c.failed) + ", " + p.Int(c.attempts) + ", " +
           p.Int(c.attempt_failures) + ")";
  }
  sql +=
      " ON CONFLICT (minute, destination) DO UPDATE SET"
      " received = stats_minute.received + excluded.received,"
      " delivered = stats_minute.delivered + excluded.delivered,"
      " failed = stats_minute.failed + excluded.failed,"
      " attempts = stats_minute.attempts + excluded.attempts,"
      " attempt_failures = stats_minute.attempt_failures + excluded.attempt_failures";
  return PgStatement{std::move(sql), std::move(p), "add to the per-minute counts"};
}

Status FlushStats(PgConn& db, const StatsDelta& delta) {
  std::optional<PgStatement> st = StatsStatement(delta);
  if (!st) return Status::Ok();
  return db.Exec(st->sql, st->params, st->what).status();
}

Status CommitError(const Status& commit) {
  return commit.code() == Status::Code::kInternal ? Status::Unavailable(commit.message()) : commit;
}

Status PipelineError(const Status& st, size_t failed_at, size_t count) {
  return failed_at + 1 == count ? CommitError(st) : st;
}

}  // namespace hookrelay::store::pg_store
