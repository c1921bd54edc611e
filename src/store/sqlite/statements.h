// Private to SqliteStore's files (src/store/sqlite/*.cc): the column lists and row readers they
// share. Not part of the store's interface.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/sqlite/sqlite_db.h"
#include "store/store.h"

namespace hookrelay::store {

namespace sqlite {

// SQLite's largest max_page_count (SQLITE_MAX_PAGE_COUNT in the 3.40 default build).
inline constexpr int64_t kSqliteMaxPageCount = 1073741823;
inline constexpr int kBusyTimeoutMs = 5000;

// The value of a write that returns nothing (Write<Unit>).
struct Unit {};

inline constexpr char kEventColumns[] =
    "e.id, e.source, e.received_at, e.content_type, e.size, e.dedup_key, e.headers, e.type,"
    " e.routed, e.route_misses";
// The body's column when it follows kEventColumns.
inline constexpr int kEventBodyColumn = 10;

// Reads the columns of kEventColumns (and the body when `body_col` >= 0).
// `id_bits`: the store's bits of its event ids (EventIdFromKey).
Result<Event> ReadEvent(const Statement& row, int body_col, uint64_t id_bits);

inline constexpr char kDeliveryColumns[] =
    "id, event_id, destination, chain, status, attempts, max_attempts, next_attempt_at, deadline, "
    "first_failure_at, last_delay_ms, reason, created_at, updated_at, order_key, "
    "uncounted_attempts";

// A stored status: 'pending' (a new delivery in no index) reads as kScheduled.
std::optional<DeliveryStatus> ParseStoredStatus(const std::string& status);

// The columns of kDeliveryColumns.
Result<Delivery> ReadDelivery(const Statement& row, uint64_t id_bits);

// All deliveries a query returns.
Result<std::vector<Delivery>> ReadDeliveries(Statement& stmt, std::string_view what,
                                             uint64_t id_bits);

// The delivery with rowid `id` (kInternal when it is gone).
Result<Delivery> LoadDelivery(Connection& db, int64_t id, uint64_t id_bits);

// The store's bits of its event ids (store/event_id.h): 64 bits from the OS CSPRNG, chosen at the
// first open of a new database and kept in store_meta for its life.
Result<uint64_t> LoadEventIdBits(Connection& db);

// Appends one audit entry in the caller's transaction (AppendAudit, ApplyCatalogChange).
Status InsertAudit(Connection& db, const AuditEntry& entry);

}  // namespace sqlite

using sqlite::InsertAudit;
using sqlite::kBusyTimeoutMs;
using sqlite::kDeliveryColumns;
using sqlite::kEventBodyColumn;
using sqlite::kEventColumns;
using sqlite::kSqliteMaxPageCount;
using sqlite::LoadDelivery;
using sqlite::LoadEventIdBits;
using sqlite::ParseStoredStatus;
using sqlite::ReadDeliveries;
using sqlite::ReadDelivery;
using sqlite::ReadEvent;
using sqlite::Unit;

}  // namespace hookrelay::store
