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
#include "store/catalog_change.h"
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

namespace {

// ApplyCatalogChangeSteps's operations on the writer's transaction.
class SqliteCatalogTransaction final : public CatalogTransaction {
 public:
  SqliteCatalogTransaction(
      Connection& db, std::function<std::optional<int64_t>(const std::string&)> pending_frontier)
      : db_(db), pending_frontier_(std::move(pending_frontier)) {}

  Result<int64_t> RaiseVersion() override {
    // store_meta; absent means 0.
    HR_ASSIGN_OR_RETURN(
        Statement v, db_.Prepare("INSERT INTO store_meta(key, value) VALUES ('catalog_version', 1)"
                                 " ON CONFLICT(key) DO UPDATE SET value = value + 1"
                                 " RETURNING value"));
    HR_ASSIGN_OR_RETURN(const bool row, v.Step("raise the catalog version"));
    return row ? v.Int(0) : int64_t{0};
  }
  // The writer is the only one: nothing else writes deliveries until this transaction ends.
  Status HoldDeliveries() override { return Status::Ok(); }
  Result<int64_t> CountOpenDeliveries(const std::string& destination) override {
    // Waiting ones by the due index, new ones from the frontier on (leased ones read as pending
    // or scheduled).
    HR_ASSIGN_OR_RETURN(Statement q,
                        db_.Prepare("SELECT (SELECT COUNT(*) FROM deliveries WHERE destination = ?1"
                                    "  AND status IN ('scheduled', 'paused'))"
                                    " + (SELECT COUNT(*) FROM deliveries WHERE id >= ?2"
                                    "  AND destination = ?1 AND status = 'pending')"));
    q.BindText(1, destination)
        .BindInt(2, pending_frontier_(destination).value_or(std::numeric_limits<int64_t>::max()));
    HR_ASSIGN_OR_RETURN(const bool row, q.Step("count open deliveries"));
    return row ? q.Int(0) : int64_t{0};
  }
  Status Remove(CatalogKind kind, const std::string& name) override {
    HR_ASSIGN_OR_RETURN(Statement del,
                        db_.Prepare("DELETE FROM catalog WHERE kind = ?1 AND name = ?2"));
    del.BindText(1, CatalogKindName(kind)).BindText(2, name);
    return del.Exec("delete catalog object " + name);
  }
  Status ForgetDestinationControl(const std::string& destination) override {
    HR_ASSIGN_OR_RETURN(Statement forget,
                        db_.Prepare("DELETE FROM breakers WHERE destination = ?1"));
    forget.BindText(1, destination);
    return forget.Exec("forget the breaker of " + destination);
  }
  Status Put(const CatalogObject& o, TimePoint now) override {
    HR_ASSIGN_OR_RETURN(
        Statement up,
        db_.Prepare("INSERT INTO catalog(kind, name, spec, origin, created_at, updated_at)"
                    " VALUES (?1, ?2, ?3, ?4, ?5, ?5)"
                    " ON CONFLICT(kind, name) DO UPDATE SET spec = excluded.spec,"
                    " origin = excluded.origin, updated_at = excluded.updated_at"));
    up.BindText(1, CatalogKindName(o.kind))
        .BindText(2, o.name)
        .BindText(3, o.spec)
        .BindText(4, o.origin)
        .BindTime(5, now);
    return up.Exec("write catalog object " + o.name);
  }
  Status AppendAudit(const AuditEntry& entry) override { return InsertAudit(db_, entry); }

 private:
  Connection& db_;
  std::function<std::optional<int64_t>(const std::string&)> pending_frontier_;
};

}  // namespace

Status SqliteStore::ApplyCatalogChange(const CatalogChange& change) {
  HR_RETURN_IF_ERROR(CheckCatalogChange(change));
  const TimePoint now = clock_.Now();
  Result<Unit> r = Write<Unit>([this, &change, now](Connection& db) -> Result<Unit> {
    SqliteCatalogTransaction txn(
        db, [this](const std::string& destination) { return PendingFrontier(destination); });
    HR_RETURN_IF_ERROR(ApplyCatalogChangeSteps(change, now, txn));
    return Unit{};
  });
  return r.ok() ? Status::Ok() : r.status();
}

}  // namespace hookrelay::store
