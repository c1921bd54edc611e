// PostgresStore (postgres_store.h): named API tokens (api_tokens). Other nodes read the table
// again every 500 ms (app/token_refresher.h): no notification is sent.

#include <string>
#include <vector>

#include "store/postgres/postgres_store.h"
#include "store/postgres/statements.h"

namespace hookrelay::store {

using pg::PgConn;
using pg::PgParams;
using pg::PgResult;

namespace {

// Adds `t` unless a token of its name exists; returns whether it added.
Result<bool> InsertToken(PgConn& db, const ApiToken& t) {
  PgParams p;
  const std::string sql =
      "INSERT INTO api_tokens (name, hash, role, scope, created_at, expires_at, created_by,"
      " last_used_at, last_used_addr, revoked) VALUES (" +
      p.Text(t.name) + ", " + p.Text(t.hash) + ", " + p.Text(t.role) + ", " + p.Text(t.scope) +
      ", " + p.Time(t.created_at) + ", " + p.OptTime(t.expires_at) + ", " + p.Text(t.created_by) +
      ", " + p.OptTime(t.last_used_at) + ", " + p.Text(t.last_used_addr) + ", " +
      p.Bool(t.revoked) + ") ON CONFLICT (name) DO NOTHING";
  HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "add token " + t.name));
  return r.affected() > 0;
}

}  // namespace

Status PostgresStore::CreateToken(const ApiToken& token) {
  HR_ASSIGN_OR_RETURN(const bool added, EnsureToken(token));
  if (added) return Status::Ok();
  // WithFieldPrefix on a status without a field sets it: the clash is about "name".
  return Status::AlreadyExists("a token named \"" + token.name + "\" exists")
      .WithFieldPrefix("name");
}

Result<bool> PostgresStore::EnsureToken(const ApiToken& token) {
  return WithConn<bool>([&](PgConn& db) { return InsertToken(db, token); });
}

Result<std::vector<ApiToken>> PostgresStore::ListTokens() {
  return WithConn<std::vector<ApiToken>>([&](PgConn& db) -> Result<std::vector<ApiToken>> {
    HR_ASSIGN_OR_RETURN(
        PgResult r,
        db.Exec("SELECT name, hash, role, scope, created_at, expires_at, created_by, last_used_at,"
                " last_used_addr, revoked FROM api_tokens ORDER BY name COLLATE \"C\"",
                "list tokens"));
    std::vector<ApiToken> out;
    for (int i = 0; i < r.rows(); ++i) {
      ApiToken t;
      t.name = r.Text(i, 0);
      t.hash = r.Text(i, 1);
      t.role = r.Text(i, 2);
      t.scope = r.Text(i, 3);
      t.created_at = r.Time(i, 4);
      t.expires_at = r.OptTime(i, 5);
      t.created_by = r.Text(i, 6);
      t.last_used_at = r.OptTime(i, 7);
      t.last_used_addr = r.Text(i, 8);
      t.revoked = r.Bool(i, 9);
      out.push_back(std::move(t));
    }
    return out;
  });
}

Result<bool> PostgresStore::DeleteToken(const std::string& name) {
  return WithConn<bool>([&](PgConn& db) -> Result<bool> {
    PgParams p;
    const std::string sql = "DELETE FROM api_tokens WHERE name = " + p.Text(name);
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "delete token " + name));
    return r.affected() > 0;
  });
}

Result<bool> PostgresStore::RevokeToken(const std::string& name) {
  return WithConn<bool>([&](PgConn& db) -> Result<bool> {
    PgParams p;
    const std::string sql =
        "UPDATE api_tokens SET revoked = true WHERE name = " + p.Text(name) + " AND NOT revoked";
    HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "revoke token " + name));
    return r.affected() > 0;
  });
}

Status PostgresStore::TouchToken(const std::string& name, TimePoint at, const std::string& addr) {
  return WithConn<bool>([&](PgConn& db) -> Result<bool> {
           PgParams p;
           const std::string when = p.Time(at);
           const std::string sql = "UPDATE api_tokens SET last_used_at = " + when +
                                   ", last_used_addr = " + p.Text(addr) +
                                   " WHERE name = " + p.Text(name) +
                                   " AND (last_used_at IS NULL OR last_used_at < " + when + ")";
           HR_ASSIGN_OR_RETURN(PgResult r, db.Exec(sql, p, "note a use of token " + name));
           return r.affected() > 0;
         })
      .status();
}

}  // namespace hookrelay::store
