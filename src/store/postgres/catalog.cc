// PostgresStore (postgres_store.h): the catalog's rows, ApplyCatalogChange's operations
// (store/catalog_change.h has its steps) and the catalog version.

#include <map>
#include <set>
#include <utility>

#include "store/catalog_change.h"
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

namespace {

// ApplyCatalogChangeSteps's operations on one transaction of one connection.
class PgCatalogTransaction final : public CatalogTransaction {
 public:
  explicit PgCatalogTransaction(PgConn& db) : db_(db) {}

  Result<int64_t> RaiseVersion() override {
    // The row stays locked until COMMIT, so changes from several nodes take their versions in
    // turn and a change made against an older version is refused (if_version).
    HR_ASSIGN_OR_RETURN(PgResult v,
                        db_.Exec("INSERT INTO store_meta (key, value) VALUES ('catalog_version', 1)"
                                 " ON CONFLICT (key) DO UPDATE SET value = store_meta.value + 1"
                                 " RETURNING value",
                                 "raise the catalog version"));
    return v.Int(0, 0);
  }
  Status HoldDeliveries() override {
    // No delivery may be created or reopened between the count and the commit (a replay on
    // another node): SHARE mode lets readers on, holds writers of deliveries for this short
    // transaction.
    return db_.Script("LOCK TABLE deliveries IN SHARE MODE",
                      "hold deliveries for a catalog change");
  }
  Result<int64_t> CountOpenDeliveries(const std::string& destination) override {
    PgParams p;
    const std::string sql =
        "SELECT COUNT(*) FROM deliveries WHERE destination = " + p.Text(destination) +
        " AND status IN ('scheduled', 'delivering', 'paused')";
    HR_ASSIGN_OR_RETURN(PgResult r, db_.Exec(sql, p, "count open deliveries"));
    return r.Int(0, 0);
  }
  Status Remove(CatalogKind kind, const std::string& name) override {
    PgParams p;
    const std::string sql = "DELETE FROM catalog WHERE kind = " + p.Text(CatalogKindName(kind)) +
                            " AND name = " + p.Text(name);
    return db_.Exec(sql, p, "delete catalog object " + name).status();
  }
  Status ForgetDestinationControl(const std::string& destination) override {
    PgParams p;
    const std::string sql = "DELETE FROM breakers WHERE destination = " + p.Text(destination);
    return db_.Exec(sql, p, "forget the breaker of " + destination).status();
  }
  Status Put(const CatalogObject& o, TimePoint now) override {
    PgParams p;
    const std::string at = p.Time(now);
    const std::string sql =
        "INSERT INTO catalog (kind, name, spec, origin, created_at, updated_at) VALUES (" +
        p.Text(CatalogKindName(o.kind)) + ", " + p.Text(o.name) + ", " + p.Text(o.spec) + ", " +
        p.Text(o.origin) + ", " + at + ", " + at +
        ") ON CONFLICT (kind, name) DO UPDATE SET spec = excluded.spec,"
        " origin = excluded.origin, updated_at = excluded.updated_at";
    return db_.Exec(sql, p, "write catalog object " + o.name).status();
  }
  Status AppendAudit(const AuditEntry& entry) override { return InsertAudit(db_, entry); }

 private:
  PgConn& db_;
};

}  // namespace

Status PostgresStore::ApplyCatalogChange(const CatalogChange& change) {
  HR_RETURN_IF_ERROR(CheckCatalogChange(change));
  const TimePoint now = clock_.Now();
  return InTransaction<Unit>([&](PgConn& db) -> Result<Unit> {
           PgCatalogTransaction txn(db);
           HR_RETURN_IF_ERROR(ApplyCatalogChangeSteps(change, now, txn));
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
