// SqliteStore: the wrapped data keys (data_keys) and erasing old copies of rewritten secrets.

#include <string>
#include <vector>

#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/statements.h"
#include "store/sqlite/write_ops.h"

namespace hookrelay::store {

using sqlite::Connection;
using sqlite::Statement;

Result<std::vector<WrappedDataKey>> SqliteStore::ListDataKeys() {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(
      "SELECT master_key_id, wrapped, created_at FROM data_keys ORDER BY created_at, rowid");
  if (!q.ok()) return q.status();
  std::vector<WrappedDataKey> out;
  for (;;) {
    Result<bool> row = q->Step("list data keys");
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({q->Text(0), q->Text(1), q->Time(2)});
  }
  return out;
}

Result<bool> SqliteStore::AddDataKey(const WrappedDataKey& key, bool only_if_none) {
  return Write<bool>([&key, only_if_none](Connection& db) -> Result<bool> {
    // No clash is an error here: an operation that fails would roll the writer's batch back.
    Result<Statement> ins =
        db.Prepare(std::string("INSERT INTO data_keys (master_key_id, wrapped, created_at)"
                               " SELECT ?1, ?2, ?3") +
                   (only_if_none ? " WHERE NOT EXISTS (SELECT 1 FROM data_keys)" : "") +
                   " ON CONFLICT (master_key_id) DO NOTHING");
    if (!ins.ok()) return ins.status();
    ins->BindText(1, key.master_key_id).BindText(2, key.wrapped).BindTime(3, key.created_at);
    HR_RETURN_IF_ERROR(ins->Exec("add a data key"));
    return db.Changes() > 0;
  });
}

Result<bool> SqliteStore::DeleteDataKey(const std::string& master_key_id) {
  // Refused when it is the last row, in the delete's own transaction; the refusal is a result
  // of the operation (not an error that would roll back the writer's batch).
  enum class Outcome { kDeleted, kAbsent, kLast };
  Result<Outcome> r = Write<Outcome>([&master_key_id](Connection& db) -> Result<Outcome> {
    Result<Statement> del = db.Prepare(
        "DELETE FROM data_keys WHERE master_key_id = ?1"
        " AND (SELECT COUNT(*) FROM data_keys) > 1");
    if (!del.ok()) return del.status();
    del->BindText(1, master_key_id);
    HR_RETURN_IF_ERROR(del->Exec("delete a data key"));
    if (db.Changes() > 0) return Outcome::kDeleted;
    Result<Statement> q = db.Prepare("SELECT COUNT(*) FROM data_keys WHERE master_key_id = ?1");
    if (!q.ok()) return q.status();
    q->BindText(1, master_key_id);
    Result<bool> row = q->Step("find a data key");
    if (!row.ok()) return row.status();
    return *row && q->Int(0) > 0 ? Outcome::kLast : Outcome::kAbsent;
  });
  if (!r.ok()) return r.status();
  if (*r == Outcome::kLast) {
    return Status::FailedPrecondition("master key " + master_key_id +
                                      " is the only one that opens the store: add another first");
  }
  return *r == Outcome::kDeleted;
}

Status SqliteStore::EraseOldCopies() {
  // On a connection of its own, outside the writer's transactions: VACUUM rebuilds the file
  // (no free page keeps an old row), secure_delete zeroes what it frees, and the checkpoint
  // moves everything into the main file and truncates the write-ahead log, whose old frames
  // held the rows as they were.
  Result<std::unique_ptr<Connection>> c =
      Connection::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
  if (!c.ok()) return c.status();
  HR_RETURN_IF_ERROR((*c)->ExecScript("PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs) +
                                          "; PRAGMA secure_delete = ON; VACUUM;"
                                          " PRAGMA wal_checkpoint(TRUNCATE);",
                                      "erase old copies (VACUUM)"));
  return Status::Ok();
}

}  // namespace hookrelay::store
