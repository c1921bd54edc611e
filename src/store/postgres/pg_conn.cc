#include "store/postgres/pg_conn.h"

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "common/redact.h"

namespace hookrelay::store::pg {

// --- PgParams -------------------------------------------------------------------------------

std::string PgParams::Add(std::string value, bool null, int format) {
  values_.push_back(std::move(value));
  null_.push_back(null);
  formats_.push_back(format);
  return "$" + std::to_string(values_.size());
}

std::string PgParams::Int(int64_t v) { return Add(std::to_string(v), false, 0); }
std::string PgParams::OptInt(std::optional<int64_t> v) { return v ? Int(*v) : Add({}, true, 0); }
std::string PgParams::Text(std::string_view v) { return Add(std::string(v), false, 0); }
std::string PgParams::OptText(const std::optional<std::string>& v) {
  return v ? Text(*v) : Add({}, true, 0);
}
std::string PgParams::Bytes(std::string_view v) { return Add(std::string(v), false, 1); }
std::string PgParams::OptBytes(const std::optional<std::string>& v) {
  return v ? Bytes(*v) : Add({}, true, 1);
}
std::string PgParams::Double(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest exact form
  (void)ec;
  return Add(std::string(buf, end), false, 0);
}
std::string PgParams::Bool(bool v) { return Add(v ? "true" : "false", false, 0); }
std::string PgParams::Time(TimePoint t) { return Int(ToUnixMillis(t)); }
std::string PgParams::OptTime(std::optional<TimePoint> t) {
  return t ? Time(*t) : Add({}, true, 0);
}
std::string PgParams::Null() { return Add({}, true, 0); }

// --- PgResult -------------------------------------------------------------------------------

int64_t PgResult::affected() const {
  const char* n = PQcmdTuples(r_.get());
  int64_t v = 0;
  if (n != nullptr) std::from_chars(n, n + std::strlen(n), v);
  return v;
}

std::string PgResult::Text(int row, int col) const {
  return std::string(PQgetvalue(r_.get(), row, col),
                     static_cast<size_t>(PQgetlength(r_.get(), row, col)));
}

std::optional<std::string> PgResult::OptText(int row, int col) const {
  if (IsNull(row, col)) return std::nullopt;
  return Text(row, col);
}

int64_t PgResult::Int(int row, int col) const {
  const char* s = PQgetvalue(r_.get(), row, col);
  int64_t v = 0;
  std::from_chars(s, s + PQgetlength(r_.get(), row, col), v);
  return v;
}

std::optional<int64_t> PgResult::OptInt(int row, int col) const {
  if (IsNull(row, col)) return std::nullopt;
  return Int(row, col);
}

double PgResult::Double(int row, int col) const {
  return std::strtod(PQgetvalue(r_.get(), row, col), nullptr);
}

bool PgResult::Bool(int row, int col) const { return PQgetvalue(r_.get(), row, col)[0] == 't'; }

std::optional<TimePoint> PgResult::OptTime(int row, int col) const {
  if (IsNull(row, col)) return std::nullopt;
  return Time(row, col);
}

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

}  // namespace

std::string PgResult::Bytes(int row, int col) const {
  // bytea_output = 'hex' (the default since 9.0, and set per connection): "\x" then two hex
  // digits a byte.
  const char* s = PQgetvalue(r_.get(), row, col);
  const size_t n = static_cast<size_t>(PQgetlength(r_.get(), row, col));
  if (n < 2 || s[0] != '\\' || s[1] != 'x') return std::string(s, n);
  std::string out((n - 2) / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<char>((HexValue(s[2 + 2 * i]) << 4) | HexValue(s[3 + 2 * i]));
  }
  return out;
}

std::optional<std::string> PgResult::OptBytes(int row, int col) const {
  if (IsNull(row, col)) return std::nullopt;
  return Bytes(row, col);
}

// --- PgConn ---------------------------------------------------------------------------------

namespace {

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The password as written in a URL's userinfo (between the first ':' and the authority's last
// '@'; "" when none): what libpq quotes when it cannot decode it ("invalid percent-encoded token").
std::string RawUrlPassword(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return "";
  const std::string_view rest = url.substr(scheme + 3);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  const size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return "";
  const std::string_view userinfo = authority.substr(0, at);
  const size_t colon = userinfo.find(':');
  return colon == std::string_view::npos ? "" : std::string(userinfo.substr(colon + 1));
}

// The password a URL or conninfo carries ("" when none), to scrub it from messages. A URL libpq
// cannot parse gives its password as written.
std::string PasswordOf(const std::string& url) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (err != nullptr) PQfreemem(err);
  std::string password;
  if (opts != nullptr) {
    for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
      if (std::strcmp(o->keyword, "password") == 0 && o->val != nullptr) password = o->val;
    }
    PQconninfoFree(opts);
  } else {
    password = RawUrlPassword(url);
  }
  return password;
}

}  // namespace

std::string PgConn::Clean(std::string message) const {
  message = RedactUrlCredentials(Trim(std::move(message)));
  if (!password_.empty()) {
    // Every occurrence, however short: a password never shows (RedactSecretValues skips short
    // ones to keep text readable; here the text is an error message).
    for (size_t at = message.find(password_); at != std::string::npos;
         at = message.find(password_, at + 3)) {
      message.replace(at, password_.size(), "***");
    }
  }
  return message;
}

Result<std::unique_ptr<PgConn>> PgConn::Connect(const std::string& url,
                                                const std::string& display) {
  const std::string password = PasswordOf(url);
  // connect_timeout first: the URL's own value, if it has one, overrides it.
  const char* keywords[] = {"connect_timeout", "application_name", "dbname", nullptr};
  const char* values[] = {"10", "hookrelay", url.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  std::unique_ptr<PgConn> c(new PgConn(conn, display, password));
  if (conn == nullptr) return Status::Unavailable("PostgreSQL at " + display + ": out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    const std::string why = c->Clean(PQerrorMessage(conn));
    // Refused by a server that answered (authentication, no such database, bad options): a
    // retry will not help. Otherwise the server could not be reached.
    const bool refused = why.find("FATAL") != std::string::npos ||
                         why.find("invalid") != std::string::npos ||
                         why.find("missing") != std::string::npos;
    std::string msg = "cannot connect to PostgreSQL at " + display + ": " + why;
    return refused ? Status::FailedPrecondition(std::move(msg))
                   : Status::Unavailable(std::move(msg));
  }
  // Times are bigint milliseconds and bytea comes back as hex: nothing depends on the server's
  // time zone or locale; these keep the rest predictable.
  HR_RETURN_IF_ERROR(
      c->Script("SET bytea_output = 'hex'; SET client_min_messages = warning", "set up"));
  return c;
}

PgConn::~PgConn() {
  if (conn_ != nullptr) PQfinish(conn_);
}

bool PgConn::InTransaction() const {
  return PQtransactionStatus(conn_) != PQTRANS_IDLE &&
         PQtransactionStatus(conn_) != PQTRANS_UNKNOWN;
}

void PgConn::RollbackIfOpen() {
  if (broken_ || PQstatus(conn_) != CONNECTION_OK) {
    broken_ = true;
    return;
  }
  if (InTransaction()) {
    PGresult* r = PQexec(conn_, "ROLLBACK");
    if (PQresultStatus(r) != PGRES_COMMAND_OK) broken_ = true;
    PQclear(r);
  }
}

Status PgConn::ErrorStatus(const PGresult* r, std::string_view what) {
  const char* state = r != nullptr ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  last_sqlstate_ = state != nullptr ? state : "";
  std::string why = r != nullptr ? PQresultErrorMessage(r) : "";
  if (why.empty()) why = PQerrorMessage(conn_);
  why = Clean(std::move(why));
  std::string msg = "PostgreSQL at " + display_ + ": " + std::string(what) + ": " + why;
  const std::string_view cls = std::string_view(last_sqlstate_).substr(0, 2);
  if (PQstatus(conn_) != CONNECTION_OK || cls == "08" || last_sqlstate_ == "57P01" ||
      last_sqlstate_ == "57P02" || last_sqlstate_ == "57P03") {
    broken_ = true;
    return Status::Unavailable(std::move(msg));
  }
  if (last_sqlstate_ == "53100") return Status::ResourceExhausted(std::move(msg));
  if (cls == "53" || last_sqlstate_ == "40001" || last_sqlstate_ == "40P01" ||
      last_sqlstate_ == "55P03" || last_sqlstate_ == "57014") {
    return Status::Unavailable(std::move(msg));
  }
  return Status::Internal(std::move(msg));
}

Result<PgResult> PgConn::Exec(std::string_view sql, const PgParams& params, std::string_view what) {
  if (broken_) return Status::Unavailable("PostgreSQL at " + display_ + ": connection lost");
  std::vector<const char*> values(params.values_.size());
  std::vector<int> lengths(params.values_.size());
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = params.null_[i] ? nullptr : params.values_[i].data();
    lengths[i] = static_cast<int>(params.values_[i].size());
  }
  const std::string text(sql);
  PGresult* r = PQexecParams(conn_, text.c_str(), static_cast<int>(values.size()), nullptr,
                             values.data(), lengths.data(), params.formats_.data(), 0);
  const ExecStatusType st = PQresultStatus(r);
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
    last_sqlstate_.clear();
    return PgResult(r);
  }
  Status s = ErrorStatus(r, what);
  PQclear(r);
  return s;
}

Status PgConn::Script(std::string_view sql, std::string_view what) {
  if (broken_) return Status::Unavailable("PostgreSQL at " + display_ + ": connection lost");
  const std::string text(sql);
  PGresult* r = PQexec(conn_, text.c_str());
  const ExecStatusType st = PQresultStatus(r);
  Status s = Status::Ok();
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) s = ErrorStatus(r, what);
  PQclear(r);
  return s;
}

Status PgConn::ConsumeInput() {
  if (broken_) return Status::Unavailable("PostgreSQL at " + display_ + ": connection lost");
  if (PQconsumeInput(conn_) == 0 || PQstatus(conn_) != CONNECTION_OK) {
    broken_ = true;
    return Status::Unavailable("PostgreSQL at " + display_ +
                               ": connection lost: " + Clean(PQerrorMessage(conn_)));
  }
  return Status::Ok();
}

std::vector<PgConn::Notification> PgConn::TakeNotifications() {
  std::vector<Notification> out;
  while (PGnotify* n = PQnotifies(conn_)) {
    out.push_back({n->relname != nullptr ? n->relname : "", n->extra != nullptr ? n->extra : ""});
    PQfreemem(n);
  }
  return out;
}

Result<std::vector<PgResult>> PgConn::Pipeline(const std::vector<PgStatement>& statements,
                                               size_t* failed_at) {
  if (broken_) return Status::Unavailable("PostgreSQL at " + display_ + ": connection lost");
  auto lost = [&](std::string_view what) {
    broken_ = true;
    return Status::Unavailable("PostgreSQL at " + display_ + ": " + std::string(what) + ": " +
                               Clean(PQerrorMessage(conn_)));
  };
  if (PQenterPipelineMode(conn_) != 1) return lost("enter pipeline mode");
  // Sent without waiting: libpq buffers the messages (flushing as its buffer fills), the sync
  // sends the rest. The server answers each with a few bytes, so it never blocks on a client
  // that is still sending.
  for (const PgStatement& st : statements) {
    const PgParams& params = st.params;
    std::vector<const char*> values(params.values_.size());
    std::vector<int> lengths(params.values_.size());
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = params.null_[i] ? nullptr : params.values_[i].data();
      lengths[i] = static_cast<int>(params.values_[i].size());
    }
    if (PQsendQueryParams(conn_, st.sql.c_str(), static_cast<int>(values.size()), nullptr,
                          values.data(), lengths.data(), params.formats_.data(), 0) != 1) {
      return lost(st.what);  // only when the connection is gone: the pipeline is abandoned
    }
  }
  if (PQpipelineSync(conn_) != 1) return lost("send the pipeline");
  // Each statement's results end with a NULL; then comes the sync.
  Status first = Status::Ok();
  std::vector<PgResult> results;
  results.reserve(statements.size());
  for (size_t i = 0; i < statements.size(); ++i) {
    for (;;) {
      PGresult* r = PQgetResult(conn_);
      if (r == nullptr) break;
      const ExecStatusType st = PQresultStatus(r);
      if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
        results.emplace_back(r);
        continue;
      }
      if (st != PGRES_PIPELINE_ABORTED && first.ok()) {
        first = ErrorStatus(r, statements[i].what);
        if (failed_at != nullptr) *failed_at = i;
      }
      PQclear(r);
      if (PQstatus(conn_) != CONNECTION_OK) return lost(statements[i].what);
    }
  }
  PGresult* sync = PQgetResult(conn_);
  const bool synced = sync != nullptr && PQresultStatus(sync) == PGRES_PIPELINE_SYNC;
  PQclear(sync);
  if (!synced || PQexitPipelineMode(conn_) != 1) return lost("end the pipeline");
  if (!first.ok()) return first;
  last_sqlstate_.clear();
  if (results.size() != statements.size()) {
    return Status::Internal("PostgreSQL at " + display_ + ": the pipeline gave " +
                            std::to_string(results.size()) + " results for " +
                            std::to_string(statements.size()) + " statements");
  }
  return results;
}

}  // namespace hookrelay::store::pg
