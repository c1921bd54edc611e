#include "store/sqlite/sqlite_db.h"

#include <string>

namespace hookrelay::store::sqlite {

Status ErrorStatus(sqlite3* db, int rc, std::string_view what) {
  std::string msg(what);
  msg += ": ";
  // sqlite3_errmsg describes the most recent failure on the connection, which is this one as long
  // as the caller maps the error right away; fall back to the generic text for the code.
  msg +=
      db != nullptr && sqlite3_extended_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_FULL: return Status::ResourceExhausted("disk full: " + msg);
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE) {
        return Status::AlreadyExists(msg);
      }
      return Status::FailedPrecondition(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
    case SQLITE_READONLY: return Status::Unavailable(msg);
    default: return Status::Internal(msg);
  }
}

Status TransactionError(const Status& cause) {
  if (cause.code() == Status::Code::kResourceExhausted) return cause;
  return Status::Unavailable(cause.message());
}

Statement::~Statement() {
  if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), bind_error_(other.bind_error_) {
  other.stmt_ = nullptr;
}

void Statement::NoteBind(int rc) {
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
}

Statement& Statement::BindInt(int i, int64_t v) {
  NoteBind(sqlite3_bind_int64(stmt_, i, v));
  return *this;
}

Statement& Statement::BindDouble(int i, double v) {
  NoteBind(sqlite3_bind_double(stmt_, i, v));
  return *this;
}

Statement& Statement::BindText(int i, std::string_view v) {
  NoteBind(sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_STATIC, SQLITE_UTF8));
  return *this;
}

Statement& Statement::BindBlob(int i, std::string_view v) {
  // A null data pointer would bind NULL; "" must stay an empty blob.
  static const char kEmpty = 0;
  NoteBind(sqlite3_bind_blob64(stmt_, i, v.empty() ? &kEmpty : v.data(), v.size(), SQLITE_STATIC));
  return *this;
}

Statement& Statement::BindNull(int i) {
  NoteBind(sqlite3_bind_null(stmt_, i));
  return *this;
}

Statement& Statement::BindOptTime(int i, const std::optional<TimePoint>& t) {
  return t ? BindTime(i, *t) : BindNull(i);
}

Statement& Statement::BindOptText(int i, const std::optional<std::string>& v) {
  return v ? BindText(i, *v) : BindNull(i);
}

Statement& Statement::BindOptInt(int i, const std::optional<int64_t>& v) {
  return v ? BindInt(i, *v) : BindNull(i);
}

Result<bool> Statement::Step(std::string_view what) {
  if (bind_error_ != SQLITE_OK) return ErrorStatus(nullptr, bind_error_, what);
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return ErrorStatus(db_, rc, what);
}

Status Statement::Exec(std::string_view what) {
  for (;;) {
    Result<bool> row = Step(what);
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
  }
}

void Statement::Reset() { sqlite3_reset(stmt_); }

bool Statement::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

int64_t Statement::Int(int col) const { return sqlite3_column_int64(stmt_, col); }

double Statement::Double(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), n);
}

std::string Statement::Blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return p == nullptr ? std::string() : std::string(static_cast<const char*>(p), n);
}

std::optional<TimePoint> Statement::OptTime(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Time(col);
}

std::optional<std::string> Statement::OptText(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Text(col);
}

std::optional<int64_t> Statement::OptInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Int(col);
}

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& path, int flags) {
  // SQLite's memory statistics take a global mutex around every malloc and free it makes, about
  // 5% of the writer's CPU; nothing reads them. Only possible before SQLite initialises (the
  // first open does that); should something have initialised it earlier, the call fails and
  // changes nothing.
  [[maybe_unused]] static const int no_memstatus = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status s = ErrorStatus(db, rc, "open " + path);
    sqlite3_close_v2(db);
    return s;
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<Connection>(new Connection(db));
}

Connection::~Connection() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

Status Connection::ExecScript(const std::string& sql, std::string_view what) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return ErrorStatus(db_, rc, what);
  return Status::Ok();
}

Status Connection::Exec(const std::string& sql, std::string_view what) {
  Result<Statement> stmt = Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  return stmt->Exec(what);
}

Result<Statement> Connection::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return ErrorStatus(db_, rc, "prepare: " + sql);
    it = cache_.emplace(sql, stmt).first;
  }
  return Statement(db_, it->second);
}

Result<std::string> Connection::PragmaValue(const std::string& pragma) {
  Result<Statement> stmt = Prepare("PRAGMA " + pragma);
  if (!stmt.ok()) return stmt.status();
  Result<bool> row = stmt->Step("PRAGMA " + pragma);
  if (!row.ok()) return row.status();
  return *row ? stmt->Text(0) : std::string();
}

}  // namespace hookrelay::store::sqlite
