#pragma once

// A thin layer over libpq for the PostgreSQL store: one connection (PgConn), the parameters of a
// statement (PgParams), and its rows (PgResult). Statements use the extended protocol with text
// parameters, except bytea ones, which go as binary (bodies may hold any byte, NULs included);
// results come back as text (bytea as hex, decoded here).
//
// Errors become Status: a lost connection (or one PostgreSQL ended: shutdown, admin terminate)
// is kUnavailable and marks the connection broken (its owner drops it and connects anew on next
// use); a full disk is kResourceExhausted; a serialization failure or deadlock kUnavailable
// (retrying may succeed); anything else kInternal. Messages name the server by its display
// address (no user, no password) and never carry the URL's password.

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace hookrelay::store::pg {

// Parameters $1, $2, … in the order added. Each Add… returns the placeholder ("$3") to put in the
// SQL, so statements built piece by piece number their parameters as they go.
class PgParams {
 public:
  std::string Int(int64_t v);
  std::string OptInt(std::optional<int64_t> v);
  std::string Text(std::string_view v);
  std::string OptText(const std::optional<std::string>& v);
  std::string Bytes(std::string_view v);  // bytea, sent as binary
  std::string OptBytes(const std::optional<std::string>& v);
  std::string Double(double v);
  std::string Bool(bool v);
  std::string Time(TimePoint t);  // Unix milliseconds, as bigint
  std::string OptTime(std::optional<TimePoint> t);
  std::string Null();

  size_t size() const { return values_.size(); }

 private:
  friend class PgConn;
  std::string Add(std::string value, bool null, int format);
  std::vector<std::string> values_;
  std::vector<bool> null_;
  std::vector<int> formats_;
};

// The rows of one statement (text format). REQUIRES for the accessors: row < rows(), col valid.
class PgResult {
 public:
  explicit PgResult(PGresult* r) : r_(r, &PQclear) {}
  int rows() const { return PQntuples(r_.get()); }
  int64_t affected() const;  // rows an INSERT/UPDATE/DELETE touched
  bool IsNull(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
  std::string Text(int row, int col) const;
  std::optional<std::string> OptText(int row, int col) const;
  int64_t Int(int row, int col) const;
  std::optional<int64_t> OptInt(int row, int col) const;
  double Double(int row, int col) const;
  bool Bool(int row, int col) const;
  TimePoint Time(int row, int col) const { return FromUnixMillis(Int(row, col)); }
  std::optional<TimePoint> OptTime(int row, int col) const;
  // A bytea column, decoded from its hex text form.
  std::string Bytes(int row, int col) const;
  std::optional<std::string> OptBytes(int row, int col) const;

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> r_;
};

// One statement of a pipeline (PgConn::Pipeline).
struct PgStatement {
  std::string sql;
  PgParams params;
  std::string what;  // what it does, for the error message
};

class PgConn {
 public:
  // Connects to `url` (a postgres:// URL or libpq conninfo); `display` is how errors name the
  // server (ParseStoreAddress's display form). kUnavailable when the server cannot be reached,
  // kFailedPrecondition when it refuses (authentication, no such database) or the URL is bad.
  static Result<std::unique_ptr<PgConn>> Connect(const std::string& url,
                                                 const std::string& display);
  ~PgConn();
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  // Runs one statement. `what` says what it was doing, for the error message.
  Result<PgResult> Exec(std::string_view sql, const PgParams& params, std::string_view what);
  Result<PgResult> Exec(std::string_view sql, std::string_view what) {
    return Exec(sql, PgParams(), what);
  }
  // Runs a script of several statements (no parameters): migrations, BEGIN/COMMIT.
  Status Script(std::string_view sql, std::string_view what);

  // Sends every statement at once in libpq's pipeline mode and then reads their results: one
  // round trip for all of them instead of one each. Returns each statement's rows, in order. On
  // the first failure PostgreSQL skips the statements after it (up to the pipeline's end); that
  // failure is returned and, when `failed_at` is given, the failing statement's index is put
  // there. An open transaction stays open (aborted after a failure): the caller commits or rolls
  // back as with Exec.
  Result<std::vector<PgResult>> Pipeline(const std::vector<PgStatement>& statements,
                                         size_t* failed_at = nullptr);

  // The connection is gone (or in an unknown state): drop it, connect anew.
  bool broken() const { return broken_; }
  // The SQLSTATE of the last failed statement ("" when none or unknown).
  const std::string& last_sqlstate() const { return last_sqlstate_; }
  // Ends a transaction left open by a failure (ROLLBACK when the connection still works).
  void RollbackIfOpen();
  bool InTransaction() const;

  // For a LISTEN connection (PgListener): the socket to wait on, reading what arrived (an error
  // when the connection is lost: broken() then), and the notifications read so far.
  struct Notification {
    std::string channel;
    std::string payload;
  };
  int socket() const { return PQsocket(conn_); }
  Status ConsumeInput();
  std::vector<Notification> TakeNotifications();

 private:
  PgConn(PGconn* conn, std::string display, std::string password)
      : conn_(conn), display_(std::move(display)), password_(std::move(password)) {}
  Status ErrorStatus(const PGresult* r, std::string_view what);
  std::string Clean(std::string message) const;

  PGconn* conn_;
  std::string display_;
  std::string password_;  // only to scrub it from messages
  bool broken_ = false;
  std::string last_sqlstate_;
};

}  // namespace hookrelay::store::pg
