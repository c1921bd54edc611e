// SqliteStore: the catalog (sources, destinations, routes, tokens) and its version.

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

// ---------------------------------------------------------------------------------------------
// Catalog

Result<int64_t> SqliteStore::CatalogVersion() {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q =
      (*db)->Prepare("SELECT value FROM store_meta WHERE key = 'catalog_version'");
  if (!q.ok()) return q.status();
  Result<bool> row = q->Step("read the catalog version");
  if (!row.ok()) return row.status();
  return *row ? q->Int(0) : int64_t{0};
}

Result<std::vector<CatalogObject>> SqliteStore::ListCatalog() {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(
      "SELECT kind, name, spec, origin, created_at, updated_at FROM catalog ORDER BY seq");
  if (!q.ok()) return q.status();
  std::vector<CatalogObject> out;
  for (;;) {
    Result<bool> row = q->Step("list catalog");
    if (!row.ok()) return row.status();
    if (!*row) break;
    CatalogObject o;
    const std::string kind = q->Text(0);
    if (kind == "destination") {
      o.kind = CatalogKind::kDestination;
    } else if (kind == "route") {
      o.kind = CatalogKind::kRoute;
    }
    o.name = q->Text(1);
    o.spec = q->Text(2);
    o.origin = q->Text(3);
    o.created_at = q->Time(4);
    o.updated_at = q->Time(5);
    out.push_back(std::move(o));
  }
  return out;
}

Status SqliteStore::ApplyCatalogChange(const CatalogChange& change) {
  HR_RETURN_IF_ERROR(CheckCatalogChange(change));
  const TimePoint now = clock_.Now();
  Result<Unit> r = Write<Unit>([this, &change, now](Connection& db) -> Result<Unit> {
    {
      // The catalog's version, raised with the change (store_meta; absent means 0).
      Result<Statement> v = db.Prepare(
          "INSERT INTO store_meta(key, value) VALUES ('catalog_version', 1)"
          " ON CONFLICT(key) DO UPDATE SET value = value + 1 RETURNING value");
      if (!v.ok()) return v.status();
      Result<bool> row = v->Step("raise the catalog version");
      if (!row.ok()) return row.status();
      const int64_t version = *row ? v->Int(0) : 0;
      if (change.if_version && *change.if_version != version - 1) {
        return CatalogChangedMeanwhile(*change.if_version, version - 1);
      }
    }
    for (const std::string& destination : change.require_no_open_deliveries) {
      // Waiting ones by the due index, new ones from the frontier on (leased ones read as
      // pending or scheduled). In this transaction: nothing slips in between.
      Result<Statement> q = db.Prepare(
          "SELECT (SELECT COUNT(*) FROM deliveries WHERE destination = ?1"
          "  AND status IN ('scheduled', 'paused'))"
          " + (SELECT COUNT(*) FROM deliveries WHERE id >= ?2 AND destination = ?1"
          "  AND status = 'pending')");
      if (!q.ok()) return q.status();
      q->BindText(1, destination)
          .BindInt(2, PendingFrontier(destination).value_or(std::numeric_limits<int64_t>::max()));
      Result<bool> row = q->Step("count open deliveries");
      if (!row.ok()) return row.status();
      if (const int64_t open = *row ? q->Int(0) : 0; open > 0) {
        return Status::FailedPrecondition("destination \"" + destination + "\" has " +
                                          std::to_string(open) +
                                          " deliveries that are not delivered or failed yet");
      }
    }
    for (const auto& [kind, name] : change.remove) {
      Result<Statement> del = db.Prepare("DELETE FROM catalog WHERE kind = ?1 AND name = ?2");
      if (!del.ok()) return del.status();
      del->BindText(1, CatalogKindName(kind)).BindText(2, name);
      HR_RETURN_IF_ERROR(del->Exec("delete catalog object " + name));
      if (kind == CatalogKind::kDestination && !PutsDestination(change, name)) {
        // Its breaker and pause go with it: a destination made again under this name starts
        // closed and unpaused.
        Result<Statement> forget = db.Prepare("DELETE FROM breakers WHERE destination = ?1");
        if (!forget.ok()) return forget.status();
        forget->BindText(1, name);
        HR_RETURN_IF_ERROR(forget->Exec("forget the breaker of " + name));
      }
    }
    for (const CatalogObject& o : change.put) {
      Result<Statement> up = db.Prepare(
          "INSERT INTO catalog(kind, name, spec, origin, created_at, updated_at)"
          " VALUES (?1, ?2, ?3, ?4, ?5, ?5)"
          " ON CONFLICT(kind, name) DO UPDATE SET spec = excluded.spec,"
          " origin = excluded.origin, updated_at = excluded.updated_at");
      if (!up.ok()) return up.status();
      up->BindText(1, CatalogKindName(o.kind))
          .BindText(2, o.name)
          .BindText(3, o.spec)
          .BindText(4, o.origin)
          .BindTime(5, now);
      HR_RETURN_IF_ERROR(up->Exec("write catalog object " + o.name));
    }
    if (change.audit) HR_RETURN_IF_ERROR(InsertAudit(db, *change.audit));
    return Unit{};
  });
  return r.ok() ? Status::Ok() : r.status();
}

}  // namespace hookrelay::store
