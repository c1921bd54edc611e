// Private to PostgresStore's files (store/postgres/*.cc): the helpers several areas share, and
// the connection templates (WithConn, InTransaction) every area runs its statements through.
#pragma once

#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/postgres/pg_conn.h"
#include "store/postgres/postgres_store.h"
#include "store/stats_counts.h"
#include "store/store.h"

namespace hookrelay::store::pg_store {

struct Unit {};

// '{1,2,3}': an int8[] parameter's text.
std::string ArrayLiteral(const std::vector<int64_t>& keys);

inline constexpr char kDeliveryColumns[] =
    "id, event_id, destination, chain, status, attempts, max_attempts, next_attempt_at, deadline,"
    " first_failure_at, last_delay_ms, reason, lease_until, lease_owner, created_at, updated_at,"
    " order_key, uncounted_attempts";

// One row of kDeliveryColumns.
Result<Delivery> ReadDelivery(const pg::PgResult& r, int row, uint64_t id_bits);

Status InsertAudit(pg::PgConn& db, const AuditEntry& entry);

using store::StatsCounts;
using store::StatsDelta;

// The channels other nodes LISTEN on (Watch).
inline constexpr std::string_view kWorkChannel = "hookrelay_work";
inline constexpr std::string_view kCatalogChannel = "hookrelay_catalog";
inline constexpr std::string_view kReplaysChannel = "hookrelay_replays";

// The upsert of `delta` into stats_minute (nullopt when it is empty).
std::optional<pg::PgStatement> StatsStatement(const StatsDelta& delta);
Status FlushStats(pg::PgConn& db, const StatsDelta& delta);

// What a failed COMMIT answers: kInternal becomes kUnavailable (the store's failure, not the
// caller's: retrying may succeed); any other status passes as it is.
Status CommitError(const Status& commit);
// The same for a pipeline of `count` statements ending with COMMIT that failed at `failed_at`:
// only the COMMIT's kInternal becomes kUnavailable; a statement before it failed on its own.
Status PipelineError(const Status& st, size_t failed_at, size_t count);

}  // namespace hookrelay::store::pg_store

namespace hookrelay::store {

template <typename T>
Result<T> PostgresStore::WithConn(const std::function<Result<T>(pg::PgConn&)>& fn) {
  HR_ASSIGN_OR_RETURN(Conn c, Acquire());
  Result<T> r = fn(*c);
  if (!r.ok() && c->broken()) {
    spdlog::warn("PostgreSQL store: {} (reconnecting on next use)", r.status().message());
  }
  Release(std::move(c));
  return r;
}

template <typename T>
Result<T> PostgresStore::InTransaction(const std::function<Result<T>(pg::PgConn&)>& fn) {
  HR_ASSIGN_OR_RETURN(Conn c, Acquire());
  Status begin = c->Script("BEGIN", "begin");
  Result<T> r = begin.ok() ? fn(*c) : Result<T>(begin);
  if (r.ok()) {
    Status commit = c->Script("COMMIT", "commit");
    if (!commit.ok()) r = pg_store::CommitError(commit);
  }
  if (!r.ok()) {
    c->RollbackIfOpen();
    if (c->broken()) {
      spdlog::warn("PostgreSQL store: {} (reconnecting on next use)", r.status().message());
    }
  }
  Release(std::move(c));
  return r;
}

}  // namespace hookrelay::store
