// The neutral entry point (OpenStore and the store address) and the data directory's lock
// (DataDirLock), on real directories.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "store/open_store.h"
#include "store/sqlite/data_dir_lock.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/open.h"
#include "support/process.h"

namespace hookrelay::store {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

unsigned Mode(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return 0xffff;
  return st.st_mode & 07777;
}

TEST(StoreAddressTest, ADirectoryOrAPostgresUrl) {
  auto dir = ParseStoreAddress("./hookrelay-data");
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(dir->kind, StoreAddress::Kind::kDirectory);
  EXPECT_EQ(dir->location, "./hookrelay-data");
  EXPECT_EQ(dir->display, "./hookrelay-data");

  for (const std::string url :
       {"postgres://db/hr", "postgresql://db/hr", "POSTGRES://db/hr", "PostgreSQL://db/hr"}) {
    auto pg = ParseStoreAddress(url);
    ASSERT_TRUE(pg.ok()) << url;
    EXPECT_EQ(pg->kind, StoreAddress::Kind::kPostgres) << url;
    EXPECT_EQ(pg->location, url);
  }
  // What may be shown: no user, password or query (libpq takes password=… there too).
  auto secret = ParseStoreAddress(
      "postgresql://hr:pa%40ss@word@db.internal:5432/hookrelay?password=x&sslmode=require#f");
  ASSERT_TRUE(secret.ok());
  EXPECT_EQ(secret->display, "postgresql://db.internal:5432/hookrelay");
  EXPECT_EQ(ParseStoreAddress("postgres://db").value().display, "postgres://db");
  // A multi-host URL (failover, issue 15): every host shown, the user, password and
  // target_session_attrs not.
  auto hosts = ParseStoreAddress(
      "postgres://hr:pw-secret@10.0.0.1:5432,10.0.0.2:5433/"
      "hookrelay?target_session_attrs=read-write");
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(hosts->kind, StoreAddress::Kind::kPostgres);
  EXPECT_EQ(hosts->display, "postgres://10.0.0.1:5432,10.0.0.2:5433/hookrelay");
  EXPECT_EQ(ParseStoreAddress("postgres://u:p@db?password=y").value().display, "postgres://db");

  auto mysql = ParseStoreAddress("mysql://u:secret@db/hr");
  ASSERT_FALSE(mysql.ok());
  EXPECT_EQ(mysql.status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Has(mysql.status().message(), "unknown store address scheme \"mysql\""))
      << mysql.status().message();
  EXPECT_FALSE(Has(mysql.status().message(), "secret"));
  EXPECT_EQ(ParseStoreAddress("").status().code(), Status::Code::kInvalidArgument);
  // Not a scheme: a directory whose name happens to hold "://".
  EXPECT_EQ(ParseStoreAddress("./a://b").value().kind, StoreAddress::Kind::kDirectory);
}

TEST(OpenStoreTest, AnUnreachablePostgresUrlIsUnavailableAndCreatesNothing) {
  TempDir dir;
  const std::string cwd = fs::current_path();
  const std::string url = "postgres://hr:s3cret@127.0.0.1:1/hookrelay";
  ASSERT_TRUE(CheckStoreAvailable(ParseStoreAddress(url).value()).ok());
  auto s = OpenStore(url, SystemClock::Instance());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kUnavailable) << s.status().ToString();
  EXPECT_TRUE(
      Has(s.status().message(), "cannot connect to PostgreSQL at postgres://127.0.0.1:1/hookrelay"))
      << s.status().message();
  EXPECT_FALSE(Has(s.status().message(), "s3cret"));
  EXPECT_FALSE(fs::exists(cwd + "/postgres:"));
}

TEST(OpenStoreTest, ADirectoryOpensTheEmbeddedStoreLockedForThisProcess) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  auto first = OpenStore(data, SystemClock::Instance());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(ReadFile(data + "/hookrelay.lock"), std::to_string(::getpid()) + "\n");
  EXPECT_EQ(Mode(data + "/hookrelay.lock"), 0600u);
  auto second = OpenStore(data, SystemClock::Instance());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_TRUE(Has(second.status().message(), "data directory " + data +
                                                 " is already in use by this process (PID " +
                                                 std::to_string(::getpid())))
      << second.status().message();
  first->reset();
  EXPECT_TRUE(OpenStore(data, SystemClock::Instance()).ok());
}

// serve takes the lock before it binds its address and hands it to the store.
TEST(OpenStoreTest, TheStoreKeepsALockTakenByItsCaller) {
  TempDir dir;
  auto lock = DataDirLock::Acquire(dir.path());
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  auto s = OpenStore(dir.path(), SystemClock::Instance(), {.dir_lock = *lock});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  lock->reset();  // the store still holds it
  EXPECT_EQ(DataDirLock::Acquire(dir.path()).status().code(), Status::Code::kFailedPrecondition);
  s->reset();
  EXPECT_TRUE(DataDirLock::Acquire(dir.path()).ok());

  TempDir other, fresh;
  auto other_lock = DataDirLock::Acquire(other.path());
  ASSERT_TRUE(other_lock.ok());
  auto wrong = OpenSqliteStore({.dir = fresh.path(), .lock = *other_lock}, SystemClock::Instance());
  ASSERT_FALSE(wrong.ok());
  EXPECT_FALSE(fs::exists(fresh.path() + "/hookrelay.db")) << "opened with another's lock";
}

// Runs `sql` on DIR/hookrelay.db with the SQLite library itself (no hookrelay code).
void RawSql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << (err ? err : "") << " in " << sql;
  sqlite3_free(err);
  sqlite3_close(db);
}

// Issue 13 (store-open): a hookrelay.db this build cannot use — damaged, not a database, another
// program's, a development build's or a newer build's — is refused (kFailedPrecondition: exit 2)
// with a message naming the file and what to do, and its bytes are left exactly as they were
// (no switch to WAL, no migration).
TEST(OpenStoreTest, ADatabaseThisBuildCannotUseIsRefusedPreciselyAndLeftUntouched) {
  const int latest = static_cast<int>(sqlite::SchemaMigrations().size());
  struct Case {
    std::string name;
    std::function<void(const std::string& db)> make;
    std::vector<std::string> expected;  // parts of the message
  };
  auto with_store = [](const std::string& db, const std::string& sql) {
    {
      auto s = OpenStore(fs::path(db).parent_path().string(), SystemClock::Instance());
      ASSERT_TRUE(s.ok()) << s.status().ToString();
    }
    if (!sql.empty()) RawSql(db, sql);
  };
  const std::vector<Case> cases = {
      {"garbage",
       [](const std::string& db) { WriteFile(db, std::string(10000, 'x') + "not a database\n"); },
       {"is not a SQLite database", "aside to start with an empty store", "backup"}},
      {"truncated",
       [&](const std::string& db) {
         with_store(db,
                    "CREATE TABLE filler(x BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                    "SELECT i + 1 FROM n WHERE i < 200) INSERT INTO filler SELECT randomblob(4000) "
                    "FROM n;");
         ASSERT_EQ(::truncate(db.c_str(), 8 * 4096), 0);
       },
       {"is damaged", "backup", "aside to start with an empty store"}},
      {"no version, with tables",
       [&](const std::string& db) { with_store(db, "PRAGMA user_version = 0;"); },
       {"has tables but no hookrelay schema version", "aside to start with an empty store"}},
      {"negative version",
       [&](const std::string& db) { with_store(db, "PRAGMA user_version = -1;"); },
       {"has schema version -1, which no hookrelay build writes", "backup"}},
      {"newer",
       [&](const std::string& db) {
         with_store(db, "PRAGMA user_version = " + std::to_string(latest + 1) + ";");
       },
       {"has schema version " + std::to_string(latest + 1) + ", newer than this build supports (" +
            std::to_string(latest) + ")",
        "newer hookrelay"}},
      {"newer, in the -wal (after a crash)",
       [&](const std::string& db) {
         with_store(db, "");
         sqlite3* raw = nullptr;
         ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
         sqlite3_db_config(raw, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
         EXPECT_EQ(
             sqlite3_exec(raw, ("PRAGMA user_version = " + std::to_string(latest + 1)).c_str(),
                          nullptr, nullptr, nullptr),
             SQLITE_OK);
         sqlite3_close(raw);
         ASSERT_GT(fs::file_size(db + "-wal"), 0u);
       },
       {"has schema version " + std::to_string(latest + 1) + ", newer than this build"}},
      {"development build",
       [](const std::string& db) {
         RawSql(db,
                "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT "
                "NULL, description TEXT NOT NULL); INSERT INTO schema_version VALUES (7, 0, 'd');");
       },
       {"has schema version 7 from a development build"}},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const std::string db = dir.path() + "/hookrelay.db";
    c.make(db);
    const std::string before = ReadFile(db);
    ASSERT_FALSE(before.empty()) << c.name;
    const bool had_wal = fs::exists(db + "-wal");
    const std::string wal_before = had_wal ? ReadFile(db + "-wal") : "";
    auto s = OpenStore(dir.path(), SystemClock::Instance());
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.status().code(), Status::Code::kFailedPrecondition)
        << c.name << ": " << s.status().ToString();
    const std::string& m = s.status().message();
    if (c.name != "development build") {
      EXPECT_TRUE(Has(m, db)) << c.name << ": " << m;
    }
    for (const std::string& part : c.expected) EXPECT_TRUE(Has(m, part)) << c.name << ": " << m;
    EXPECT_TRUE(ReadFile(db) == before) << c.name << ": the refused database was changed";
    if (had_wal) {
      EXPECT_TRUE(ReadFile(db + "-wal") == wal_before) << c.name << ": the -wal was changed";
    } else {
      EXPECT_FALSE(fs::exists(db + "-wal")) << c.name << ": nothing is created next to it";
      EXPECT_FALSE(fs::exists(db + "-shm")) << c.name;
    }
  }
}

// Damage that only the start-up queries reach (a page of the deliveries table; the schema and the
// header are sound) is refused with exit 2 and what to do too, not as an internal error.
TEST(OpenStoreTest, DamageFoundByTheStartUpQueriesIsReportedAsADamagedDatabase) {
  TempDir dir;
  const std::string db = dir.path() + "/hookrelay.db";
  {
    auto s = OpenStore(dir.path(), SystemClock::Instance());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
  }
  RawSql(db,
         "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
         "INSERT INTO deliveries (event_id, destination, status, max_attempts, next_attempt_at, "
         "created_at, updated_at) SELECT i, 'd' || (i % 7), 'pending', 5, 0, 0, 0 FROM n;");
  int64_t root = 0;
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    ASSERT_EQ(
        sqlite3_prepare_v2(raw, "SELECT rootpage FROM sqlite_master WHERE name = 'deliveries'", -1,
                           &q, nullptr),
        SQLITE_OK);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    root = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(raw);
  }
  ASSERT_FALSE(fs::exists(db + "-wal"));
  // The table's root (an interior page: 3000 rows span many pages) becomes garbage.
  std::string bytes = ReadFile(db);
  const size_t page = 4096;
  ASSERT_GE(bytes.size(), static_cast<size_t>(root) * page);
  for (size_t i = (static_cast<size_t>(root) - 1) * page; i < static_cast<size_t>(root) * page;
       ++i) {
    bytes[i] = static_cast<char>(0xA5);
  }
  WriteFile(db, bytes);
  auto s = OpenStore(dir.path(), SystemClock::Instance());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kFailedPrecondition) << s.status().ToString();
  EXPECT_TRUE(Has(s.status().message(), db + " is damaged (")) << s.status().message();
  EXPECT_TRUE(Has(s.status().message(), "restore the data directory from a backup"))
      << s.status().message();
}

TEST(DataDirLockTest, ParsePid) {
  EXPECT_EQ(DataDirLock::ParsePid("1234\n"), 1234);
  EXPECT_EQ(DataDirLock::ParsePid("1"), 1);
  EXPECT_EQ(DataDirLock::ParsePid("2147483647\n"), 2147483647);
  for (const char* bad : {"", "\n", "0\n", "-5\n", "12 34", "2147483648", "99999999999", "abc",
                          "12\n\n", " 12", "0x10", "12\x1b[2J"}) {
    EXPECT_EQ(DataDirLock::ParsePid(bad), std::nullopt) << bad;
  }
}

// Another process holds the directory: its PID is in the message; once it is killed (-9) the
// kernel has dropped its lock and the directory can be taken.
TEST(DataDirLockTest, AnotherProcessHoldsItUntilItIsKilled) {
  TempDir dir;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = DataDirLock::Acquire(dir.path());
    const char c = lock.ok() ? '1' : '0';
    if (::write(ready[1], &c, 1) != 1) ::_exit(1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(c, '1');
  auto refused = DataDirLock::Acquire(dir.path());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(),
            "data directory " + dir.path() + " is in use by hookrelay process " +
                std::to_string(child) + " (lock file " + dir.path() +
                "/hookrelay.lock): stop that process first, or give this one another data "
                "directory");
  EXPECT_EQ(ReadFile(dir.path() + "/hookrelay.lock"), std::to_string(child) + "\n")
      << "the refused one does not overwrite the holder's PID";
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  auto taken = DataDirLock::Acquire(dir.path());
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_EQ(ReadFile(dir.path() + "/hookrelay.lock"), std::to_string(::getpid()) + "\n");
}

// A lock file someone else made: its content is never trusted or shown; unlocked, it is taken
// over (and its content replaced); held by something that wrote no PID, the message says so.
TEST(DataDirLockTest, ALockFileWithOtherContent) {
  TempDir dir;
  const std::string path = dir.path() + "/hookrelay.lock";
  WriteFile(path, "not a pid \x1b[31m with escapes and a long tail ......................\n");
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  auto refused = DataDirLock::Acquire(dir.path());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_TRUE(Has(refused.status().message(), "data directory " + dir.path() +
                                                  " is in use by another process, which holds "
                                                  "the lock on " +
                                                  path + " but wrote no PID"))
      << refused.status().message();
  EXPECT_FALSE(Has(refused.status().message(), "escapes"));
  ::close(fd);
  auto taken = DataDirLock::Acquire(dir.path());
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_EQ(ReadFile(path), std::to_string(::getpid()) + "\n");
}

// Issue 13 (store-open): the PID in the lock file is named only when that process is alive; a
// dead hookrelay's PID left in the file while something else holds the lock is not shown.
TEST(DataDirLockTest, ADeadProcesssPidInTheFileIsNotNamed) {
  TempDir dir;
  const std::string path = dir.path() + "/hookrelay.lock";
  const pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(dead, &status, 0), dead);
  WriteFile(path, std::to_string(dead) + "\n");
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);  // another open file description: a holder that wrote no PID
  auto refused = DataDirLock::Acquire(dir.path());
  ::close(fd);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kFailedPrecondition);
  const std::string& m = refused.status().message();
  EXPECT_FALSE(Has(m, std::to_string(dead))) << m;
  EXPECT_TRUE(
      Has(m, "is in use by another process, which holds the lock on " + path + " but wrote no PID"))
      << m;
}

// Two servers starting at once on a new directory: the loser may find the lock taken before the
// winner wrote its PID; it waits briefly for the PID rather than saying "wrote no PID".
TEST(DataDirLockTest, AHolderThatWritesItsPidJustAfterLockingIsNamed) {
  TempDir dir;
  const std::string path = dir.path() + "/hookrelay.lock";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
    if (::write(ready[1], "1", 1) != 1) ::_exit(1);
    ::usleep(20'000);  // then writes its PID, as DataDirLock::Acquire does
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) ::_exit(1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  auto refused = DataDirLock::Acquire(dir.path());
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Has(refused.status().message(),
                  "is in use by hookrelay process " + std::to_string(child) + " "))
      << refused.status().message();
}

// A symbolic link or a hard link planted as hookrelay.lock is refused: the PID is never written
// through it into another file.
TEST(DataDirLockTest, ALinkPlantedAsTheLockFileIsRefusedAndNotFollowed) {
  TempDir dir;
  const std::string path = dir.path() + "/hookrelay.lock";
  const std::string victim = dir.path() + "/victim.txt";
  WriteFile(victim, "precious\n");
  ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
  auto refused = DataDirLock::Acquire(dir.path());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_TRUE(Has(refused.status().message(), path + " is a symbolic link; hookrelay does not "
                                                     "follow it"))
      << refused.status().message();
  EXPECT_EQ(ReadFile(victim), "precious\n");
  // A dangling one is not followed to create its target either.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::symlink((dir.path() + "/created").c_str(), path.c_str()), 0);
  EXPECT_FALSE(DataDirLock::Acquire(dir.path()).ok());
  EXPECT_FALSE(fs::exists(dir.path() + "/created"));
  // The store refuses to open there, before it creates the database.
  auto s = OpenStore(dir.path(), SystemClock::Instance());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(dir.path() + "/hookrelay.db"));

  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::link(victim.c_str(), path.c_str()), 0);
  refused = DataDirLock::Acquire(dir.path());
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Has(refused.status().message(), path + " has 2 hard links"))
      << refused.status().message();
  EXPECT_EQ(ReadFile(victim), "precious\n");

  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  refused = DataDirLock::Acquire(dir.path());  // does not block on the FIFO
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Has(refused.status().message(), path + " is not a regular file"))
      << refused.status().message();
  ASSERT_EQ(::unlink(path.c_str()), 0);
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  refused = DataDirLock::Acquire(dir.path());
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Has(refused.status().message(), path + " is not a regular file"))
      << refused.status().message();
}

TEST(DataDirLockTest, NotADirectory) {
  TempDir dir;
  WriteFile(dir.path() + "/file", "x");
  auto file = DataDirLock::Acquire(dir.path() + "/file");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(file.status().message(), "not a directory: " + dir.path() + "/file");
  auto missing = DataDirLock::Acquire(dir.path() + "/missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(DataDirLock::Acquire("").status().code(), Status::Code::kInvalidArgument);
}

TEST(DataDirLockTest, AReadOnlyDirectory) {
  // Root writes into read-only directories, so as root the lock is tried by a child process that
  // has become "nobody" (CI runs as root); otherwise by this process.
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0555), 0);
  const std::string expected = "cannot open the lock file " + dir.path() +
                               "/hookrelay.lock: Permission denied (the data directory must be "
                               "writable by this user)";
  auto check = [&]() -> std::string {  // "" when the lock was refused as expected
    auto lock = DataDirLock::Acquire(dir.path());
    if (lock.ok()) return "the lock was taken in a read-only directory";
    if (lock.status().code() != Status::Code::kUnavailable)
      return "code: " + lock.status().message();
    if (!Has(lock.status().message(), expected)) return "message: " + lock.status().message();
    return "";
  };
  std::string failure;
  if (::geteuid() != 0) {
    failure = check();
  } else {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(fds[0]);
      std::string why = (::setgid(65534) == 0 && ::setuid(65534) == 0) ? check() : "setuid failed";
      if (::write(fds[1], why.data(), why.size()) < 0) _exit(3);
      _exit(why.empty() ? 0 : 1);
    }
    ::close(fds[1]);
    char buf[512];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) failure.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0 && failure.empty()) failure = "child failed";
  }
  ::chmod(dir.path().c_str(), 0700);
  EXPECT_EQ(failure, "");
}

}  // namespace
}  // namespace hookrelay::store
