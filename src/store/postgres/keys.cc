// PostgresStore (postgres_store.h): the wrapped data keys (data_keys) and erasing old copies of
// rewritten secrets.

#include <string>
#include <vector>

#include "store/postgres/postgres_store.h"
#include "store/postgres/statements.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;

Result<std::vector<WrappedDataKey>> PostgresStore::ListDataKeys() {
  return WithConn<std::vector<WrappedDataKey>>(
      [&](PgConn& db) -> Result<std::vector<WrappedDataKey>> {
        HR_ASSIGN_OR_RETURN(PgResult r, db.Exec("SELECT master_key_id, wrapped, created_at FROM"
                                                " data_keys ORDER BY created_at, master_key_id",
                                                "list data keys"));
        std::vector<WrappedDataKey> out;
        for (int i = 0; i < r.rows(); ++i)
          out.push_back({r.Text(i, 0), r.Text(i, 1), r.Time(i, 2)});
        return out;
      });
}

Result<bool> PostgresStore::AddDataKey(const WrappedDataKey& key, bool only_if_none) {
  return InTransaction<bool>([&](PgConn& db) -> Result<bool> {
    // Two nodes starting on an empty store with different master keys must not both make a
    // data key: the lock makes the second wait for the first's row and see it.
    HR_RETURN_IF_ERROR(
        db.Exec("LOCK TABLE data_keys IN SHARE ROW EXCLUSIVE MODE", "lock data keys").status());
    PgParams p;
    std::string sql = "INSERT INTO data_keys (master_key_id, wrapped, created_at) SELECT " +
                      p.Text(key.master_key_id) + ", " + p.Text(key.wrapped) + ", " +
                      p.Time(key.created_at);
    if (only_if_none) sql += " WHERE NOT EXISTS (SELECT 1 FROM data_keys)";
    sql += " ON CONFLICT (master_key_id) DO NOTHING";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "add a data key"));
    return r.affected() > 0;
  });
}

Result<bool> PostgresStore::DeleteDataKey(const std::string& master_key_id) {
  return InTransaction<bool>([&](PgConn& db) -> Result<bool> {
    // Rows locked first: two deletes at once cannot each leave the other's row as "not last".
    HR_ASSIGN_OR_RETURN(
        PgResult all, db.Exec("SELECT master_key_id FROM data_keys FOR UPDATE", "lock data keys"));
    bool found = false;
    for (int i = 0; i < all.rows(); ++i) found = found || all.Text(i, 0) == master_key_id;
    if (!found) return false;
    if (all.rows() == 1) {
      return Status::FailedPrecondition("master key " + master_key_id +
                                        " is the only one that opens the store: add another first");
    }
    PgParams p;
    HR_RETURN_IF_ERROR(
        db.Exec("DELETE FROM data_keys WHERE master_key_id = " + p.Text(master_key_id), p,
                "delete a data key")
            .status());
    return true;
  });
}

Status PostgresStore::EraseOldCopies() {
  // The rows' old versions stay in the table's pages until VACUUM reclaims them (a dump never
  // shows them, a copy of the data files would). VACUUM cannot run in a transaction.
  return WithConn<bool>([&](PgConn& db) -> Result<bool> {
           HR_RETURN_IF_ERROR(db.Exec("VACUUM catalog", "vacuum the catalog").status());
           return true;
         })
      .status();
}

}  // namespace hookrelay::store
