#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/clock.h"
#include "common/result.h"

// Thin RAII wrappers over the SQLite C API: a connection with a cache of prepared statements, and
// a borrowed statement that resets itself. Nothing here knows about hookrelay's tables.
namespace hookrelay::store::sqlite {

// Maps an SQLite result code to a Status; `what` names the operation ("insert event").
//   SQLITE_FULL                      → kResourceExhausted "disk full: <what>: <sqlite message>"
//   primary key / unique violation   → kAlreadyExists
//   other constraint violations      → kFailedPrecondition
//   BUSY, LOCKED, IOERR, CANTOPEN, … → kUnavailable (transient)
//   anything else                    → kInternal
Status ErrorStatus(sqlite3* db, int rc, std::string_view what);

// Turns the error of a failed BEGIN/COMMIT (or of a transaction SQLite rolled back itself) into the
// error every operation of that transaction reports: disk full stays kResourceExhausted, anything
// else becomes kUnavailable, because retrying later may succeed.
Status TransactionError(const Status& cause);

class Connection;

// A prepared statement borrowed from a Connection's cache. When it goes out of scope its cursor
// and bindings are reset, so the next user starts clean. Not thread-safe (neither is the
// connection it belongs to). Indexes are 1-based for Bind*, 0-based for columns, as in SQLite.
class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;

  // Text and blobs are bound without copying (SQLITE_STATIC): REQUIRES the bytes outlive this
  // Statement. Bind errors are remembered and returned by the next Step()/Exec().
  Statement& BindInt(int i, int64_t v);
  Statement& BindDouble(int i, double v);
  Statement& BindText(int i, std::string_view v);
  Statement& BindBlob(int i, std::string_view v);  // zero-length binds an empty blob, not NULL
  Statement& BindNull(int i);
  Statement& BindTime(int i, TimePoint t) { return BindInt(i, ToUnixMillis(t)); }
  Statement& BindOptTime(int i, const std::optional<TimePoint>& t);
  Statement& BindOptText(int i, const std::optional<std::string>& v);
  Statement& BindOptInt(int i, const std::optional<int64_t>& v);

  // true when a row is available, false when the statement is done. `what` names the operation
  // in error messages.
  Result<bool> Step(std::string_view what);
  // Runs the statement to completion, ignoring any rows.
  Status Exec(std::string_view what);
  // Rewinds the statement to run it again; bindings are kept (bind again to change them).
  void Reset();

  bool IsNull(int col) const;
  int64_t Int(int col) const;
  double Double(int col) const;
  std::string Text(int col) const;
  std::string Blob(int col) const;
  TimePoint Time(int col) const { return FromUnixMillis(Int(col)); }
  std::optional<TimePoint> OptTime(int col) const;
  std::optional<std::string> OptText(int col) const;
  std::optional<int64_t> OptInt(int col) const;

 private:
  void NoteBind(int rc);

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  int bind_error_ = SQLITE_OK;
};

// One SQLite connection. Owned and used by one thread at a time (opened SQLITE_OPEN_NOMUTEX).
class Connection {
 public:
  // Opens `path` with `flags` (SQLITE_OPEN_*), with extended result codes on.
  static Result<std::unique_ptr<Connection>> Open(const std::string& path, int flags);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* handle() const { return db_; }

  // Runs `sql` (one or more statements, no parameters) with sqlite3_exec: DDL and pragmas.
  Status ExecScript(const std::string& sql, std::string_view what);
  // Runs one cached statement without parameters (BEGIN, COMMIT, SAVEPOINT, …).
  Status Exec(const std::string& sql, std::string_view what);
  // The cached prepared statement for `sql`, prepared on first use. REQUIRES: no other Statement
  // for the same `sql` is alive (they would share one cursor).
  Result<Statement> Prepare(const std::string& sql);
  // Runs a pragma that returns one value and returns it as text ("" when it returns no row).
  Result<std::string> PragmaValue(const std::string& pragma);

  int64_t Changes() const { return sqlite3_changes64(db_); }
  int64_t LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }
  // True while a transaction is open. After some errors (SQLITE_FULL, IOERR, NOMEM, BUSY) SQLite
  // may roll the whole transaction back by itself; callers check this to notice.
  bool InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

 private:
  explicit Connection(sqlite3* db) : db_(db) {}

  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
};

}  // namespace hookrelay::store::sqlite
