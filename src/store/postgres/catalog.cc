// PostgresStore (postgres_store.h): The catalog: its rows, ApplyCatalogChange and the catalog
// version.

#include <map>
#include <set>
#include <utility>

#include "store/postgres/postgres_store.h"
#include "store/postgres/statements.h"
#include "store/row_codec.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;
using pg_store::InsertAudit;
using pg_store::kCatalogChannel;
using pg_store::Unit;

// ---------------------------------------------------------------------------------------------
// Catalog

Result<std::vector<CatalogObject>> PostgresStore::ListCatalog() {
  return WithConn<std::vector<CatalogObject>>(
      [&](PgConn& db) -> Result<std::vector<CatalogObject>> {
        HR_ASSIGN_OR_RETURN(
            PgResult r,
            db.Exec("SELECT kind, name, spec, origin, created_at, updated_at FROM catalog"
                    " ORDER BY seq",
                    "list catalog"));
        std::vector<CatalogObject> out;
        for (int i = 0; i < r.rows(); ++i) {
          CatalogObject o;
          const std::string kind = r.Text(i, 0);
          if (kind == "destination") {
            o.kind = CatalogKind::kDestination;
          } else if (kind == "route") {
            o.kind = CatalogKind::kRoute;
          }
          o.name = r.Text(i, 1);
          o.spec = r.Text(i, 2);
          o.origin = r.Text(i, 3);
          o.created_at = r.Time(i, 4);
          o.updated_at = r.Time(i, 5);
          out.push_back(std::move(o));
        }
        return out;
      });
}

Status PostgresStore::ApplyCatalogChange(const CatalogChange& change) {
  HR_RETURN_IF_ERROR(CheckCatalogChange(change));
  const TimePoint now = clock_.Now();
  return InTransaction<Unit>([&](PgConn& db) -> Result<Unit> {
           {
             // The catalog's version, raised with the change. The row stays locked until
             // COMMIT, so changes from several nodes take their versions in turn and a change
             // made against an older version is refused (if_version).
             HR_ASSIGN_OR_RETURN(
                 PgResult v,
                 db.Exec("INSERT INTO store_meta (key, value) VALUES ('catalog_version', 1)"
                         " ON CONFLICT (key) DO UPDATE SET value = store_meta.value + 1"
                         " RETURNING value",
                         "raise the catalog version"));
             const int64_t version = v.Int(0, 0);
             if (change.if_version && *change.if_version != version - 1) {
               return CatalogChangedMeanwhile(*change.if_version, version - 1);
             }
           }
           if (!change.require_no_open_deliveries.empty()) {
             // No delivery may be created or reopened between the check and the commit (a
             // replay on another node): SHARE mode lets readers on, holds writers of deliveries
             // for this short transaction.
             HR_RETURN_IF_ERROR(db.Script("LOCK TABLE deliveries IN SHARE MODE",
                                          "hold deliveries for a catalog change"));
           }
           for (const std::string& destination : change.require_no_open_deliveries) {
             PgParams p;
             const std::string sql =
                 "SELECT COUNT(*) FROM deliveries WHERE destination = " + p.Text(destination) +
                 " AND status IN ('scheduled', 'delivering', 'paused')";
             HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "count open deliveries"));
             if (const int64_t open = r.Int(0, 0); open > 0) {
               return Status::FailedPrecondition(
                   "destination \"" + destination + "\" has " + std::to_string(open) +
                   " deliveries that are not delivered or failed yet");
             }
           }
           for (const auto& [kind, name] : change.remove) {
             PgParams p;
             const std::string sql =
                 "DELETE FROM catalog WHERE kind = " + p.Text(CatalogKindName(kind)) +
                 " AND name = " + p.Text(name);
             HR_RETURN_IF_ERROR(db.Exec(sql, p, "delete catalog object " + name).status());
             if (kind == CatalogKind::kDestination && !PutsDestination(change, name)) {
               // Its breaker and pause go with it: a destination made again under this name
               // starts closed and unpaused.
               PgParams b;
               const std::string forget =
                   "DELETE FROM breakers WHERE destination = " + b.Text(name);
               HR_RETURN_IF_ERROR(db.Exec(forget, b, "forget the breaker of " + name).status());
             }
           }
           for (const CatalogObject& o : change.put) {
             PgParams p;
             const std::string at = p.Time(now);
             const std::string sql =
                 "INSERT INTO catalog (kind, name, spec, origin, created_at, updated_at) VALUES (" +
                 p.Text(CatalogKindName(o.kind)) + ", " + p.Text(o.name) + ", " + p.Text(o.spec) +
                 ", " + p.Text(o.origin) + ", " + at + ", " + at +
                 ") ON CONFLICT (kind, name) DO UPDATE SET spec = excluded.spec,"
                 " origin = excluded.origin, updated_at = excluded.updated_at";
             HR_RETURN_IF_ERROR(db.Exec(sql, p, "write catalog object " + o.name).status());
           }
           if (change.audit) HR_RETURN_IF_ERROR(InsertAudit(db, *change.audit));
           HR_RETURN_IF_ERROR(NotifyOthers(db, kCatalogChannel));
           return Unit{};
         })
      .status();
}

Result<int64_t> PostgresStore::CatalogVersion() {
  return WithConn<int64_t>([&](PgConn& db) -> Result<int64_t> {
    HR_ASSIGN_OR_RETURN(PgResult r,
                        db.Exec("SELECT value FROM store_meta WHERE key = 'catalog_version'",
                                "read the catalog version"));
    return r.rows() == 0 ? int64_t{0} : r.Int(0, 0);
  });
}

}  // namespace hookrelay::store
