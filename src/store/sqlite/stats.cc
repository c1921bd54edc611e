// SqliteStore: the dashboard's figures and the counts.

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

// Per destination (the same skip-scan), how many wait for a retry and are due at ?1.
constexpr char kDueCountsSql[] =
    "WITH RECURSIVE d(name) AS ("
    " SELECT MIN(destination) FROM deliveries WHERE status IN ('scheduled', 'paused')"
    " UNION ALL SELECT (SELECT MIN(destination) FROM deliveries WHERE destination > d.name"
    "  AND status IN ('scheduled', 'paused')) FROM d WHERE d.name IS NOT NULL)"
    " SELECT name, (SELECT COUNT(*) FROM deliveries WHERE destination = d.name"
    " AND status = 'scheduled' AND status IN ('scheduled', 'paused') AND next_attempt_at <= ?1)"
    " FROM d WHERE name IS NOT NULL";

}  // namespace

Result<int64_t> SqliteStore::CountDue(TimePoint now) {
  Result<std::map<std::string, int64_t>> by = CountDueByDestination(now);
  if (!by.ok()) return by.status();
  int64_t n = 0;
  for (const auto& [dest, count] : *by) n += count;
  return n;
}

Result<std::map<std::string, int64_t>> SqliteStore::CountDueByDestination(TimePoint now) {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  // Waiting for a retry: entries of the due index due at `now` (proportional to what is due, never
  // to the whole backlog); new ones: the in-memory counts. Minus what is leased in memory.
  Result<Statement> q = (*db)->Prepare(kDueCountsSql);
  if (!q.ok()) return q.status();
  q->BindTime(1, now);
  std::map<std::string, int64_t> out;
  for (;;) {
    Result<bool> row = q->Step("count due deliveries per destination");
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (q->Int(1) > 0) out[q->Text(0)] = q->Int(1);
  }
  {
    MutexLock lock(leases_mu_);
    for (const auto& [dest, p] : pending_) {
      if (p.count > 0) out[dest] += p.count;
    }
    for (const auto& [id, l] : leases_) {
      if (!l.pending && l.due > now) continue;
      auto it = out.find(l.destination);
      if (it != out.end()) --it->second;
    }
  }
  for (auto it = out.begin(); it != out.end();) {
    it = it->second <= 0 ? out.erase(it) : std::next(it);
  }
  return out;
}

Result<std::vector<StatsRow>> SqliteStore::GetStats(TimePoint since, TimePoint until) {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(
      "SELECT minute, destination, received, delivered, failed, attempts, attempt_failures"
      " FROM stats_minute WHERE minute >= ?1 AND minute < ?2 ORDER BY minute, destination");
  if (!q.ok()) return q.status();
  q->BindInt(1, UnixMinute(since))
      .BindInt(2, UnixMinute(until + std::chrono::minutes(1) - Duration(1)));
  std::vector<StatsRow> out;
  for (;;) {
    Result<bool> row = q->Step("read stats");
    if (!row.ok()) return row.status();
    if (!*row) break;
    StatsRow r;
    r.minute = q->Int(0);
    r.destination = q->Text(1);
    r.received = q->Int(2);
    r.delivered = q->Int(3);
    r.failed = q->Int(4);
    r.attempts = q->Int(5);
    r.attempt_failures = q->Int(6);
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::optional<TimePoint>> SqliteStore::OldestDueAt(TimePoint now) {
  return EarliestScheduled("", now);
}

Result<int64_t> SqliteStore::CountDeliveries(DeliveryStatus status) {
  // Claims live in memory: a current delivery leased there is delivering, though its row reads
  // as pending or scheduled.
  int64_t leased_current = 0, leased_scheduled_current = 0;
  {
    MutexLock lock(leases_mu_);
    for (const auto& [id, l] : leases_) {
      leased_current += l.current ? 1 : 0;
      leased_scheduled_current += l.current && !l.pending ? 1 : 0;
    }
  }
  if (status == DeliveryStatus::kDelivering) return leased_current;
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  // Scheduled and paused: counts of the due index minus the superseded chains in it (the small
  // partial index deliveries_superseded); both read an index only. Delivered and failed: no
  // index covers them (ingest and every result would write it), so this walks the table; the
  // server's metrics do not ask for them.
  Result<Statement> q =
      status == DeliveryStatus::kScheduled || status == DeliveryStatus::kPaused
          ? (*db)->Prepare(
                "SELECT (SELECT COUNT(*) FROM deliveries WHERE status = ?1"
                "  AND status IN ('scheduled', 'paused'))"
                " - (SELECT COUNT(*) FROM deliveries WHERE status = ?1 AND current = 0)")
          : (*db)->Prepare("SELECT COUNT(*) FROM deliveries WHERE status = ?1 AND current = 1");
  if (!q.ok()) return q.status();
  q->BindText(1, DeliveryStatusName(status));
  Result<bool> row = q->Step("count deliveries");
  if (!row.ok()) return row.status();
  int64_t n = *row ? q->Int(0) : int64_t{0};
  if (status == DeliveryStatus::kScheduled) {
    // New ones not leased are all current (a replay stops those not in flight).
    n += UnleasedPending("") - leased_scheduled_current;
  }
  return std::max<int64_t>(n, 0);
}

}  // namespace hookrelay::store
