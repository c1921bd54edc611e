#include "store/sqlite/backup.h"

#include <openssl/evp.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "common/crypto.h"
#include "common/file_text.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/statements.h"

namespace hookrelay::store {

namespace fs = std::filesystem;
using sqlite::Connection;

namespace {

constexpr const char* kDbName = "hookrelay.db";

// SHA-256 of a file, read in pieces (a store may be larger than memory).
Result<std::string> FileSha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Unavailable("cannot read " + path);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return Status::Internal("SHA-256 unavailable");
  }
  std::string buf(1 << 20, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Status::Unavailable("cannot read " + path);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &n);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(md), n));
}

// The whole of `src` into the new database file `dest_path`, in one step (one read transaction
// on `src`: a consistent moment).
Status CopyDatabase(Connection& src, const std::string& dest_path) {
  HR_ASSIGN_OR_RETURN(std::unique_ptr<Connection> dest,
                      Connection::Open(dest_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                                      SQLITE_OPEN_NOMUTEX));
  sqlite3_backup* b = sqlite3_backup_init(dest->handle(), "main", src.handle(), "main");
  if (b == nullptr) {
    return Status::Unavailable(std::string("backup: ") + sqlite3_errmsg(dest->handle()));
  }
  int rc = SQLITE_OK;
  while ((rc = sqlite3_backup_step(b, -1)) == SQLITE_BUSY || rc == SQLITE_LOCKED) {
    sqlite3_sleep(50);
  }
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) {
    return Status::Unavailable(std::string("backup: ") + sqlite3_errstr(rc));
  }
  // A file on its own: no -wal beside it is needed to read it.
  HR_RETURN_IF_ERROR(dest->ExecScript("PRAGMA journal_mode = DELETE", "backup journal mode"));
  Result<sqlite::Statement> check = dest->Prepare("PRAGMA quick_check");
  if (!check.ok()) return check.status();
  Result<bool> row = check->Step("check the copy");
  if (!row.ok()) return row.status();
  if (!*row || check->Text(0) != "ok") {
    return Status::Internal("the copy does not pass quick_check: " +
                            (*row ? check->Text(0) : std::string("no answer")));
  }
  return Status::Ok();
}

// Whether `db` is hookrelay's store (its store_meta table), and its schema version.
Result<int> HookrelaySchema(Connection& db, const std::string& what) {
  Result<sqlite::Statement> q =
      db.Prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'store_meta'");
  if (!q.ok()) {
    return Status::FailedPrecondition(what + " is not a SQLite database hookrelay can read (" +
                                      q.status().message() + ")");
  }
  Result<bool> row = q->Step("read the schema");
  if (!row.ok()) {
    return Status::FailedPrecondition(what + " is not a SQLite database hookrelay can read (" +
                                      row.status().message() + ")");
  }
  if (!*row || q->Int(0) != 1) {
    return Status::FailedPrecondition(what + " is not a hookrelay store (no store_meta table)");
  }
  return sqlite::SchemaVersion(db);
}

}  // namespace

Result<BackupInfo> BackupSqliteStore(const std::string& dir, const std::string& file) {
  const std::string db_path = (fs::path(dir) / kDbName).string();
  std::error_code ec;
  if (!fs::exists(db_path, ec)) {
    return Status::FailedPrecondition("no store in " + dir + " (no " + kDbName + ")");
  }
  if (fs::exists(file, ec)) {
    return Status::FailedPrecondition(file + " exists: give a new file name");
  }
  // READWRITE (the WAL's shared memory is written even to read) but query_only: never a writer.
  HR_ASSIGN_OR_RETURN(std::unique_ptr<Connection> src,
                      Connection::Open(db_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX));
  HR_RETURN_IF_ERROR(src->ExecScript(
      "PRAGMA busy_timeout = " + std::to_string(sqlite::kBusyTimeoutMs) + "; PRAGMA query_only = 1",
      "open the store to back it up"));
  HR_ASSIGN_OR_RETURN(const int version, HookrelaySchema(*src, db_path));
  const std::string tmp = file + ".tmp";
  fs::remove(tmp, ec);
  {
    // Owner-only from its first byte: it holds every payload (and the secrets, encrypted).
    const mode_t old = ::umask(077);
    Status copied = CopyDatabase(*src, tmp);
    ::umask(old);
    if (!copied.ok()) {
      fs::remove(tmp, ec);
      return copied;
    }
  }
  fs::rename(tmp, file, ec);
  if (ec) return Status::Unavailable("cannot write " + file + ": " + ec.message());
  BackupInfo info;
  info.schema_version = version;
  info.bytes = fs::file_size(file, ec);
  HR_ASSIGN_OR_RETURN(info.sha256_hex, FileSha256(file));
  info.checksum_file = file + ".sha256";
  HR_RETURN_IF_ERROR(WritePrivateFile(
      info.checksum_file, info.sha256_hex + "  " + fs::path(file).filename().string() + "\n"));
  return info;
}

Result<int> RestoreSqliteStore(const std::string& file, const std::string& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return Status::FailedPrecondition(file + " is not a file");
  if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec))) {
    return Status::FailedPrecondition(
        dir + " is not empty: restore into a new or empty directory (nothing was changed)");
  }
  const std::string sums = file + ".sha256";
  if (fs::exists(sums, ec)) {
    HR_ASSIGN_OR_RETURN(const std::string line, ReadFileText(sums));
    HR_ASSIGN_OR_RETURN(const std::string actual, FileSha256(file));
    if (line.substr(0, actual.size()) != actual) {
      return Status::FailedPrecondition(file + " does not match its checksum in " + sums +
                                        " (damaged or changed): not restored");
    }
  }
  {
    HR_ASSIGN_OR_RETURN(std::unique_ptr<Connection> backup,
                        Connection::Open(file, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX));
    HR_ASSIGN_OR_RETURN(const int version, HookrelaySchema(*backup, file));
    const int latest = sqlite::SchemaMigrations().back().version;
    if (version > latest) {
      return Status::FailedPrecondition(file + " was made by a newer hookrelay (schema " +
                                        std::to_string(version) + "; this one knows up to " +
                                        std::to_string(latest) +
                                        "): restore it with that version or a later one");
    }
    fs::create_directories(dir, ec);
    if (ec) return Status::Unavailable("cannot create " + dir + ": " + ec.message());
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    const mode_t old = ::umask(077);
    Status copied = CopyDatabase(*backup, (fs::path(dir) / kDbName).string());
    ::umask(old);
    if (!copied.ok()) {
      fs::remove_all(dir, ec);
      return copied;
    }
    return version;
  }
}

}  // namespace hookrelay::store
