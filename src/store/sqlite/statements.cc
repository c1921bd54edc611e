// Helpers shared by SqliteStore's files (statements.h).

#include "store/sqlite/statements.h"

#include <string>
#include <utility>

#include "common/crypto.h"
#include "store/event_id.h"
#include "store/row_codec.h"

namespace hookrelay::store::sqlite {

// Reads the columns of kEventColumns (and the body when `body_col` >= 0).
// `id_bits`: the store's bits of its event ids (EventIdFromKey).
Result<Event> ReadEvent(const Statement& row, int body_col, uint64_t id_bits) {
  Event e;
  e.id = EventIdFromKey(row.Int(0), id_bits);
  e.source = row.Text(1);
  e.received_at = row.Time(2);
  e.content_type = row.Text(3);
  e.size = row.Int(4);
  e.dedup_key = row.OptText(5);
  HR_ASSIGN_OR_RETURN(e.headers, DecodeHeaders(row.Blob(6)));
  e.type = row.OptText(7);
  e.routed = row.Int(8) != 0;
  HR_ASSIGN_OR_RETURN(e.route_misses, DecodeRouteMisses(row.Blob(9)));
  if (body_col >= 0) e.body = row.Blob(body_col);
  return e;
}

// A stored status: 'pending' (a new delivery in no index) reads as kScheduled.
std::optional<DeliveryStatus> ParseStoredStatus(const std::string& status) {
  if (status == "pending") return DeliveryStatus::kScheduled;
  return ParseDeliveryStatus(status);
}

Result<Delivery> ReadDelivery(const Statement& row, uint64_t id_bits) {
  Delivery d;
  d.id = row.Int(0);
  d.event_id = EventIdFromKey(row.Int(1), id_bits);
  d.destination = row.Text(2);
  d.chain = static_cast<int>(row.Int(3));
  std::string status = row.Text(4);
  std::optional<DeliveryStatus> parsed = ParseStoredStatus(status);
  if (!parsed) return Status::Internal("unknown delivery status in the database: " + status);
  d.status = *parsed;
  d.attempts = static_cast<int>(row.Int(5));
  d.max_attempts = static_cast<int>(row.Int(6));
  d.next_attempt_at = row.Time(7);
  d.deadline = row.OptTime(8);
  d.first_failure_at = row.OptTime(9);
  d.last_delay = Duration(row.Int(10));
  d.reason = row.OptText(11);
  d.created_at = row.Time(12);
  d.updated_at = row.Time(13);
  d.order_key = row.OptText(14);
  d.uncounted_attempts = static_cast<int>(row.Int(15));
  return d;
}

// All deliveries a query returns.
Result<std::vector<Delivery>> ReadDeliveries(Statement& stmt, std::string_view what,
                                             uint64_t id_bits) {
  std::vector<Delivery> out;
  for (;;) {
    Result<bool> row = stmt.Step(what);
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Result<Delivery> d = ReadDelivery(stmt, id_bits);
    if (!d.ok()) return d.status();
    out.push_back(std::move(*d));
  }
}

Result<Delivery> LoadDelivery(Connection& db, int64_t id, uint64_t id_bits) {
  Result<Statement> q =
      db.Prepare(std::string("SELECT ") + kDeliveryColumns + " FROM deliveries WHERE id = ?1");
  if (!q.ok()) return q.status();
  q->BindInt(1, id);
  Result<bool> row = q->Step("load delivery");
  if (!row.ok()) return row.status();
  if (!*row) return Status::Internal("delivery " + std::to_string(id) + " vanished");
  return ReadDelivery(*q, id_bits);
}

// The store's bits of its event ids (store/event_id.h): 64 bits from the OS CSPRNG, chosen at the
// first open of a new database and kept in store_meta for its life.
Result<uint64_t> LoadEventIdBits(Connection& db) {
  uint64_t fresh = 0;
  const std::optional<std::string> raw = HexDecode(RandomHexToken(sizeof fresh));
  if (!raw || raw->size() != sizeof fresh) return Status::Internal("no random bits for event ids");
  for (unsigned char c : *raw) fresh = (fresh << 8) | c;
  Result<Statement> ins =
      db.Prepare("INSERT OR IGNORE INTO store_meta(key, value) VALUES ('event_id_bits', ?1)");
  if (!ins.ok()) return ins.status();
  HR_RETURN_IF_ERROR(ins->BindInt(1, static_cast<int64_t>(fresh)).Exec("choose the event id bits"));
  Result<Statement> q = db.Prepare("SELECT value FROM store_meta WHERE key = 'event_id_bits'");
  if (!q.ok()) return q.status();
  Result<bool> row = q->Step("read the event id bits");
  if (!row.ok()) return row.status();
  if (!*row) return Status::Internal("store_meta has no event_id_bits");
  return static_cast<uint64_t>(q->Int(0));
}

Status InsertAudit(Connection& db, const AuditEntry& entry) {
  Result<Statement> ins = db.Prepare(
      "INSERT INTO audit(at, actor, action, target, count, detail)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!ins.ok()) return ins.status();
  ins->BindTime(1, entry.at)
      .BindText(2, entry.actor)
      .BindText(3, entry.action)
      .BindText(4, entry.target)
      .BindInt(5, entry.count)
      .BindText(6, entry.detail);
  return ins->Exec("append audit entry " + entry.action);
}

}  // namespace hookrelay::store::sqlite
