// SqliteStore: retention (purging old events and rejections).

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

Result<int64_t> SqliteStore::PurgeEventsBefore(TimePoint cutoff, int batch) {
  if (batch <= 0) return int64_t{0};
  // The dashboard's counters are read for at most 7 days back (GET /api/v1/stats): older minutes
  // go with each purge pass (a range of the primary key; usually nothing).
  const int64_t stats_cutoff = UnixMinute(clock_.Now() - std::chrono::days(8));
  return Write<int64_t>([cutoff, batch, stats_cutoff](Connection& db) -> Result<int64_t> {
    {
      Result<Statement> old = db.Prepare("DELETE FROM stats_minute WHERE minute < ?1");
      if (!old.ok()) return old.status();
      old->BindInt(1, stats_cutoff);
      HR_RETURN_IF_ERROR(old->Exec("purge old stats"));
    }
    // Deliveries and attempts go with their events (ON DELETE CASCADE). An event with a
    // delivery still under way (scheduled, delivering, paused) is kept: retention never turns a
    // pending delivery into a silent loss.
    // The cutoff is a key range of the events table itself (keys are time-ordered).
    Result<Statement> del = db.Prepare(
        "DELETE FROM events WHERE id IN"
        " (SELECT e.id FROM events e WHERE e.id < ?1 AND NOT EXISTS"
        "   (SELECT 1 FROM deliveries d WHERE d.event_id = e.id"
        "    AND d.status NOT IN ('delivered', 'failed'))"
        "  ORDER BY e.id LIMIT ?2)");
    if (!del.ok()) return del.status();
    del->BindInt(1, EventKeyFloor(cutoff)).BindInt(2, batch);
    HR_RETURN_IF_ERROR(del->Exec("purge events"));
    return db.Changes();  // counts the events only, not the cascaded rows
  });
}

Result<int64_t> SqliteStore::PurgeRejectionsBefore(TimePoint cutoff, int batch) {
  if (batch <= 0) return int64_t{0};
  return Write<int64_t>([cutoff, batch](Connection& db) -> Result<int64_t> {
    Result<Statement> del = db.Prepare(
        "DELETE FROM rejections WHERE id IN (SELECT id FROM rejections WHERE received_at < ?1"
        " ORDER BY received_at LIMIT ?2)");
    if (!del.ok()) return del.status();
    del->BindTime(1, cutoff).BindInt(2, batch);
    HR_RETURN_IF_ERROR(del->Exec("purge rejections"));
    return db.Changes();
  });
}

}  // namespace hookrelay::store
