// SqliteStore: named API tokens (api_tokens).

#include <string>
#include <vector>

#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/write_ops.h"

namespace hookrelay::store {

using sqlite::Connection;
using sqlite::Statement;

namespace {

// Adds `t` unless a token of its name exists; returns whether it added. A clash is no error here:
// an operation that fails would roll the writer's whole batch back and run it again with a
// savepoint per operation.
Result<bool> InsertToken(Connection& db, const ApiToken& t) {
  Result<Statement> ins = db.Prepare(
      "INSERT INTO api_tokens (name, hash, role, scope, created_at, expires_at, created_by,"
      " last_used_at, last_used_addr, revoked) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
      " ON CONFLICT (name) DO NOTHING");
  if (!ins.ok()) return ins.status();
  ins->BindText(1, t.name)
      .BindText(2, t.hash)
      .BindText(3, t.role)
      .BindText(4, t.scope)
      .BindTime(5, t.created_at)
      .BindOptTime(6, t.expires_at)
      .BindText(7, t.created_by)
      .BindOptTime(8, t.last_used_at)
      .BindText(9, t.last_used_addr)
      .BindInt(10, t.revoked ? 1 : 0);
  HR_RETURN_IF_ERROR(ins->Exec("add token " + t.name));
  return db.Changes() > 0;
}

}  // namespace

Status SqliteStore::CreateToken(const ApiToken& token) {
  HR_ASSIGN_OR_RETURN(const bool added, EnsureToken(token));
  if (added) return Status::Ok();
  // WithFieldPrefix on a status without a field sets it: the clash is about "name".
  return Status::AlreadyExists("a token named \"" + token.name + "\" exists")
      .WithFieldPrefix("name");
}

Result<bool> SqliteStore::EnsureToken(const ApiToken& token) {
  return Write<bool>([&token](Connection& db) { return InsertToken(db, token); });
}

Result<std::vector<ApiToken>> SqliteStore::ListTokens() {
  Result<Reader> db = AcquireReader();
  if (!db.ok()) return db.status();
  Result<Statement> q = (*db)->Prepare(
      "SELECT name, hash, role, scope, created_at, expires_at, created_by, last_used_at,"
      " last_used_addr, revoked FROM api_tokens ORDER BY name");
  if (!q.ok()) return q.status();
  std::vector<ApiToken> out;
  for (;;) {
    Result<bool> row = q->Step("list tokens");
    if (!row.ok()) return row.status();
    if (!*row) break;
    ApiToken t;
    t.name = q->Text(0);
    t.hash = q->Text(1);
    t.role = q->Text(2);
    t.scope = q->Text(3);
    t.created_at = q->Time(4);
    t.expires_at = q->OptTime(5);
    t.created_by = q->Text(6);
    t.last_used_at = q->OptTime(7);
    t.last_used_addr = q->Text(8);
    t.revoked = q->Int(9) != 0;
    out.push_back(std::move(t));
  }
  return out;
}

Result<bool> SqliteStore::DeleteToken(const std::string& name) {
  return Write<bool>([&name](Connection& db) -> Result<bool> {
    Result<Statement> del = db.Prepare("DELETE FROM api_tokens WHERE name = ?1");
    if (!del.ok()) return del.status();
    del->BindText(1, name);
    HR_RETURN_IF_ERROR(del->Exec("delete token " + name));
    return db.Changes() > 0;
  });
}

Result<bool> SqliteStore::RevokeToken(const std::string& name) {
  return Write<bool>([&name](Connection& db) -> Result<bool> {
    Result<Statement> up =
        db.Prepare("UPDATE api_tokens SET revoked = 1 WHERE name = ?1 AND revoked = 0");
    if (!up.ok()) return up.status();
    up->BindText(1, name);
    HR_RETURN_IF_ERROR(up->Exec("revoke token " + name));
    return db.Changes() > 0;
  });
}

Status SqliteStore::TouchToken(const std::string& name, TimePoint at, const std::string& addr) {
  return Write<bool>([&](Connection& db) -> Result<bool> {
           Result<Statement> up = db.Prepare(
               "UPDATE api_tokens SET last_used_at = ?2, last_used_addr = ?3 WHERE name = ?1"
               " AND (last_used_at IS NULL OR last_used_at < ?2)");
           if (!up.ok()) return up.status();
           up->BindText(1, name).BindTime(2, at).BindText(3, addr);
           HR_RETURN_IF_ERROR(up->Exec("note a use of token " + name));
           return db.Changes() > 0;
         })
      .status();
}

}  // namespace hookrelay::store
