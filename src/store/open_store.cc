#include "store/open_store.h"

#include <sqlite3.h>

#include <filesystem>
#include <string_view>

#include "common/ascii.h"
#include "store/postgres/migrations.h"
#include "store/postgres/pg_conn.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/open.h"
#include "store/sqlite/sqlite_db.h"

namespace hookrelay::store {

namespace {

// The "scheme" of "scheme://…" (RFC 3986: a letter, then letters, digits, "+", "-", "."), or
// empty when `address` does not start with one.
std::string_view SchemeOf(std::string_view address) {
  const size_t sep = address.find("://");
  if (sep == std::string_view::npos || sep == 0) return {};
  const std::string_view scheme = address.substr(0, sep);
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!alpha(scheme[0])) return {};
  for (char c : scheme) {
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return {};
  }
  return scheme;
}

}  // namespace

Result<StoreAddress> ParseStoreAddress(const std::string& address) {
  if (address.empty()) {
    return Status::InvalidArgument(
        "the store address is empty: give a data directory or a postgres:// URL");
  }
  const std::string_view scheme = SchemeOf(address);
  if (scheme.empty()) {
    return StoreAddress{StoreAddress::Kind::kDirectory, address, address};
  }
  const std::string lower = AsciiLower(scheme);
  if (lower != "postgres" && lower != "postgresql") {
    return Status::InvalidArgument("unknown store address scheme \"" + lower +
                                   "\": give a data directory (the embedded store) or a "
                                   "postgres:// URL");
  }
  // Shown without what may be secret: the user and password, and the query (libpq takes
  // password=… there too).
  std::string_view rest = std::string_view(address).substr(scheme.size() + 3);
  rest = rest.substr(0, rest.find_first_of("?#"));
  const size_t authority_end = rest.find('/');
  std::string_view authority = rest.substr(0, authority_end);
  const std::string_view path =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  return StoreAddress{StoreAddress::Kind::kPostgres, address,
                      lower + "://" + std::string(authority) + std::string(path)};
}

Status CheckStoreAvailable(const StoreAddress& address) {
  switch (address.kind) {
    case StoreAddress::Kind::kDirectory:
    case StoreAddress::Kind::kPostgres: return Status::Ok();
  }
  return Status::Internal("unknown store kind");
}

Result<std::unique_ptr<Store>> OpenStore(const std::string& address, const Clock& clock,
                                         const OpenStoreOptions& options) {
  Result<StoreAddress> parsed = ParseStoreAddress(address);
  if (!parsed.ok()) return parsed.status();
  return OpenStore(*parsed, clock, options);
}

Result<std::unique_ptr<Store>> OpenStore(const StoreAddress& address, const Clock& clock,
                                         const OpenStoreOptions& options) {
  HR_RETURN_IF_ERROR(CheckStoreAvailable(address));
  if (address.kind == StoreAddress::Kind::kPostgres) {
    return OpenPostgresStore(
        {.url = address.location, .display = address.display, .migrate = options.migrate_postgres},
        clock);
  }
  SqliteOptions sqlite;
  sqlite.dir = address.location;
  sqlite.max_page_count = options.sqlite_max_page_count;
  sqlite.lock = options.dir_lock;
  return OpenSqliteStore(sqlite, clock);
}

Result<MigrationPlan> PlanMigrations(const StoreAddress& address) {
  MigrationPlan plan;
  if (address.kind == StoreAddress::Kind::kPostgres) {
    HR_ASSIGN_OR_RETURN(std::unique_ptr<pg::PgConn> db,
                        pg::PgConn::Connect(address.location, address.display));
    HR_ASSIGN_OR_RETURN(plan.current, pg::ReadSchemaVersion(*db));
    for (const pg::Migration& m : pg::SchemaMigrations()) {
      plan.latest = m.version;
      if (m.version > plan.current) plan.pending.push_back({m.version, m.description});
    }
    return plan;
  }
  const std::string path = (std::filesystem::path(address.location) / "hookrelay.db").string();
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    HR_ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Connection> db,
                        sqlite::Connection::Open(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX));
    HR_ASSIGN_OR_RETURN(plan.current, sqlite::SchemaVersion(*db));
  }
  for (const sqlite::Migration& m : sqlite::SchemaMigrations()) {
    plan.latest = m.version;
    if (m.version > plan.current) plan.pending.push_back({m.version, m.description});
  }
  return plan;
}

}  // namespace hookrelay::store
