// What only the SQLite store promises: durability settings, files on disk, migrations, group
// commit, and SQLITE_FULL handling.
#include "store/sqlite/sqlite_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <latch>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "conformance/store_test_util.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_db.h"
#include "support/process.h"

namespace hookrelay::store {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using test::MakeEvent;
using test::RandomBytes;

class SqliteStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<SqliteStore> Open(SqliteOptions options = {}) {
    if (options.dir.empty()) options.dir = dir_.path();
    Result<std::unique_ptr<SqliteStore>> s = SqliteStore::Open(options, clock_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  // A raw connection to the database file, to look behind the store's back.
  std::unique_ptr<sqlite::Connection> Raw() {
    Result<std::unique_ptr<sqlite::Connection>> c =
        sqlite::Connection::Open(dir_.path() + "/hookrelay.db",
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  int64_t QueryInt(sqlite::Connection& db, const std::string& sql) {
    Result<sqlite::Statement> q = db.Prepare(sql);
    EXPECT_TRUE(q.ok()) << q.status().ToString();
    if (!q.ok()) return -1;
    Result<bool> row = q->Step(sql);
    EXPECT_TRUE(row.ok() && *row) << sql;
    return row.ok() && *row ? q->Int(0) : -1;
  }

  // Appends `n` events (one delivery each) and claims all their deliveries.
  std::vector<Delivery> AppendAndClaim(SqliteStore& store, int n) {
    for (int i = 0; i < n; ++i) EXPECT_TRUE(store.AppendEventSync(MakeEvent(clock_, random_)).ok());
    auto claimed = store.ClaimDue(clock_.Now(), n, seconds(30), "s");
    EXPECT_TRUE(claimed.ok()) << claimed.status().ToString();
    EXPECT_EQ(claimed.ok() ? claimed->size() : 0u, static_cast<size_t>(n));
    return claimed.ok() ? *claimed : std::vector<Delivery>{};
  }

  hookrelay::testing::TempDir dir_;
  FakeClock clock_;
  SeededRandom random_{7};
};

// Appends an event ("gate") and then holds the writer thread inside a batch of its own until
// Release(), so that the operations queued meanwhile are all taken as one batch. (Completions run
// on the syncer, so holding one of them would not hold the writer.)
class WriterGate {
 public:
  explicit WriterGate(SqliteStore& store, const Clock& clock, Random& random) {
    EXPECT_TRUE(store.AppendEventSync(MakeEvent(clock, random, "gate")).ok());
    // The function owns the state too: the writer may still be inside release.wait() when the
    // gate has been released and destroyed.
    store.TEST_RunOnWriter([state = state_] {
      state->entered.count_down();
      state->release.wait();
    });
    state_->entered.wait();
  }
  ~WriterGate() { Release(); }
  void Release() {
    if (!released_) state_->release.count_down();
    released_ = true;
  }

 private:
  struct State {
    std::latch entered{1};
    std::latch release{1};
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
  bool released_ = false;
};

TEST_F(SqliteStoreTest, CreatesPrivateDirectoryAndDatabaseFile) {
  std::string dir = dir_.path() + "/nested/data";
  std::unique_ptr<SqliteStore> store = Open({.dir = dir});
  ASSERT_NE(store, nullptr);
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(store->path(), dir + "/hookrelay.db");
  EXPECT_TRUE(std::filesystem::exists(dir + "/hookrelay.db"));
}

TEST_F(SqliteStoreTest, OpenFailsWhenDirIsAFile) {
  hookrelay::testing::WriteFile(dir_.path() + "/file", "x");
  Result<std::unique_ptr<SqliteStore>> s =
      SqliteStore::Open({.dir = dir_.path() + "/file"}, clock_);
  EXPECT_FALSE(s.ok());
  Result<std::unique_ptr<SqliteStore>> empty = SqliteStore::Open({.dir = ""}, clock_);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), Status::Code::kInvalidArgument);
}

TEST_F(SqliteStoreTest, DirectoryHasOneStoreAtATime) {
  std::unique_ptr<SqliteStore> first = Open();
  ASSERT_NE(first, nullptr);
  Result<std::unique_ptr<SqliteStore>> second = SqliteStore::Open({.dir = dir_.path()}, clock_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kFailedPrecondition)
      << second.status().ToString();
  first.reset();
  EXPECT_NE(Open(), nullptr);
}

TEST_F(SqliteStoreTest, DurabilitySettings) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->TEST_WriterPragma("journal_mode"), "wal");
  // NORMAL: COMMIT does not fsync; the syncer does, before anything is acknowledged (below).
  EXPECT_EQ(*store->TEST_WriterPragma("synchronous"), "1");
  EXPECT_EQ(*store->TEST_WriterPragma("foreign_keys"), "1");
  EXPECT_EQ(*store->TEST_WriterPragma("busy_timeout"), "5000");
  // WAL is a property of the file: a fresh connection sees it too.
  std::unique_ptr<sqlite::Connection> raw = Raw();
  EXPECT_EQ(*raw->PragmaValue("journal_mode"), "wal");
}

// A WAL sync the tests can hold back: each call waits until Allow(n) lets that many through.
class HeldSync {
 public:
  std::function<int(int)> Hook() {
    return [this](int fd) {
      std::unique_lock lock(mu_);
      const int me = ++started_;
      cv_.notify_all();
      cv_.wait_for(lock, seconds(10), [&] { return me <= allowed_; });  // (no hang on failure)
      return ::fdatasync(fd);
    };
  }
  void Allow(int n) {
    std::lock_guard lock(mu_);
    allowed_ = n;
    cv_.notify_all();
  }
  bool WaitStarted(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, seconds(10), [&] { return started_ >= n; });
  }
  int started() {
    std::lock_guard lock(mu_);
    return started_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int started_ = 0;
  int allowed_ = 0;
};

// Durability with a pipelined sync: an append is acknowledged only once a sync of the log that
// began after its COMMIT has returned, and the writer commits the next batch while a sync runs.
TEST_F(SqliteStoreTest, AnAppendIsAcknowledgedOnlyAfterASyncThatBeganAfterItsCommit) {
  HeldSync sync;
  std::unique_ptr<SqliteStore> store = Open({.wal_sync = sync.Hook()});
  ASSERT_NE(store, nullptr);
  std::atomic<int> first_acked_after{-1}, second_acked_after{-1};
  std::latch first_done(1), second_done(1);
  store->AppendEvent(MakeEvent(clock_, random_), [&](Result<AppendResult> r) {
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    first_acked_after = sync.started();
    first_done.count_down();
  });
  ASSERT_TRUE(sync.WaitStarted(1));  // the first sync began: the first event is committed
  store->AppendEvent(MakeEvent(clock_, random_), [&](Result<AppendResult> r) {
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    second_acked_after = sync.started();
    second_done.count_down();
  });
  // The writer commits the second event while the first sync is held (pipelined).
  const auto deadline = std::chrono::steady_clock::now() + seconds(10);
  while (store->writer_stats().commits < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(store->writer_stats().commits, 2);
  EXPECT_EQ(first_acked_after.load(), -1);  // its sync has not returned
  sync.Allow(1);
  first_done.wait();
  EXPECT_EQ(first_acked_after.load(), 1);
  // The second event's COMMIT came after the first sync began: it waits for a second one.
  ASSERT_TRUE(sync.WaitStarted(2));
  EXPECT_EQ(second_acked_after.load(), -1);
  sync.Allow(2);
  second_done.wait();
  EXPECT_EQ(second_acked_after.load(), 2);
  EXPECT_EQ(store->writer_stats().syncs, 2);
}

// A claim runs ahead of the writer's next transaction, but what it read may be committed and not
// yet synced: a new event whose 202 has not gone out. Its answer waits for the sync under way, so
// a destination never receives an event before its sender was told it is stored.
TEST_F(SqliteStoreTest, AClaimIsAnsweredOnlyOnceWhatItReadIsSynced) {
  HeldSync sync;
  std::unique_ptr<SqliteStore> store = Open({.wal_sync = sync.Hook()});
  ASSERT_NE(store, nullptr);
  std::latch appended(1);
  store->AppendEvent(MakeEvent(clock_, random_), [&](Result<AppendResult> r) {
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    appended.count_down();
  });
  ASSERT_TRUE(sync.WaitStarted(1));  // committed, its sync held
  std::future<Result<std::vector<Delivery>>> claim = std::async(
      std::launch::async, [&] { return store->ClaimDue(clock_.Now(), 10, seconds(30), "s"); });
  // The writer counts a claim once it has handed it over (answered it, or queued its answer).
  const auto deadline = std::chrono::steady_clock::now() + seconds(10);
  while (store->writer_stats().claims < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(store->writer_stats().claims, 1);
  EXPECT_NE(claim.wait_for(std::chrono::milliseconds(0)), std::future_status::ready)
      << "a claim was answered with an event whose commit is not synced";
  sync.Allow(1);
  appended.wait();
  Result<std::vector<Delivery>> claimed = claim.get();
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  EXPECT_EQ(claimed->size(), 1u);
}

// A failed sync of the log: the writes it covered are not acknowledged (they fail with
// kUnavailable), and neither is any later write, since the log past the last good sync is unknown.
TEST_F(SqliteStoreTest, AFailedSyncFailsItsBatchAndEveryLaterWrite) {
  std::atomic<int> calls{0};
  std::unique_ptr<SqliteStore> store = Open({.wal_sync = [&](int) {
    ++calls;
    errno = EIO;
    return -1;
  }});
  ASSERT_NE(store, nullptr);
  Result<AppendResult> first = store->AppendEventSync(MakeEvent(clock_, random_));
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(first.status().message().find("could not be synced to disk"), std::string::npos)
      << first.status().message();
  EXPECT_EQ(calls.load(), 1);
  Result<AppendResult> later = store->AppendEventSync(MakeEvent(clock_, random_));
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.status().code(), Status::Code::kUnavailable);
  Status audit = store->AppendAudit({.at = clock_.Now(), .actor = "t", .action = "pause"});
  EXPECT_EQ(audit.code(), Status::Code::kUnavailable) << audit.ToString();
  EXPECT_EQ(calls.load(), 1);  // nothing was synced after the failure: nothing was committed
}

TEST_F(SqliteStoreTest, ReopenKeepsEverything) {
  std::string id;
  int64_t delivery_id = 0;
  const TimePoint t0 = clock_.Now();
  policy::BreakerSnapshot breaker{
      policy::BreakerState::kOpen, 20, 1, t0 + minutes(10), std::nullopt, false};
  {
    std::unique_ptr<SqliteStore> store = Open();
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->migrations_applied(), static_cast<int>(sqlite::SchemaMigrations().size()));
    NewEvent e = MakeEvent(clock_, random_, test::BinaryBody(), {"billing", "crm"});
    e.dedup_key = "k";
    e.dedup_window = hours(1);
    id = store->AppendEventSync(e)->id;
    std::vector<Delivery> claimed = *store->ClaimDue(t0, 1, seconds(30), "s");
    ASSERT_EQ(claimed.size(), 1u);
    delivery_id = claimed[0].id;
    ASSERT_TRUE(store
                    ->RecordAttempt({delivery_id, 1, t0, 9, 503, std::nullopt, "5", "busy"},
                                    {DeliveryStatus::kScheduled, t0 + minutes(5)}, "s")
                    .ok());
    ASSERT_TRUE(store->PutBreaker("billing", breaker).ok());
  }
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->migrations_applied(), 0);
  Result<std::optional<Event>> e = store->GetEvent(id);
  ASSERT_TRUE(e.ok() && e->has_value());
  EXPECT_TRUE((*e)->body == test::BinaryBody());
  EXPECT_EQ(store->GetDeliveries(id)->size(), 2u);
  Result<std::vector<Attempt>> attempts = store->GetAttempts(delivery_id);
  ASSERT_EQ(attempts->size(), 1u);
  EXPECT_EQ((*attempts)[0].response_snippet, "busy");
  EXPECT_EQ(**store->GetBreaker("billing"), breaker);
  // Dedup state survives too.
  NewEvent again = MakeEvent(clock_, random_);
  again.dedup_key = "k";
  again.dedup_window = hours(1);
  Result<AppendResult> dup = store->AppendEventSync(again);
  ASSERT_TRUE(dup.ok());
  EXPECT_TRUE(dup->duplicate);
  EXPECT_EQ(dup->id, id);
}

TEST_F(SqliteStoreTest, MigrationsRunOnceAndAreRecorded) {
  const int latest = static_cast<int>(sqlite::SchemaMigrations().size());
  {
    std::unique_ptr<SqliteStore> store = Open();
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->schema_version(), latest);
    EXPECT_EQ(store->migrations_applied(), latest);
  }
  int64_t applied_at = 0;
  {
    std::unique_ptr<sqlite::Connection> raw = Raw();
    EXPECT_EQ(QueryInt(*raw, "PRAGMA user_version"), latest);
    EXPECT_EQ(QueryInt(*raw, "SELECT COUNT(*) FROM schema_migrations"), latest);
    EXPECT_EQ(QueryInt(*raw, "SELECT MAX(version) FROM schema_migrations"), latest);
    applied_at = QueryInt(*raw, "SELECT applied_at FROM schema_migrations WHERE version = 1");
    EXPECT_EQ(applied_at, ToUnixMillis(clock_.Now()));
  }
  clock_.Advance(hours(1));
  {
    std::unique_ptr<SqliteStore> store = Open();
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->schema_version(), latest);
    EXPECT_EQ(store->migrations_applied(), 0);
  }
  std::unique_ptr<sqlite::Connection> raw = Raw();
  EXPECT_EQ(QueryInt(*raw, "SELECT COUNT(*) FROM schema_migrations"), latest);
  EXPECT_EQ(QueryInt(*raw, "SELECT applied_at FROM schema_migrations WHERE version = 1"),
            applied_at);
}

TEST_F(SqliteStoreTest, MigrationsApplyInOrderOnlyWhatIsNew) {
  std::unique_ptr<sqlite::Connection> db = Raw();  // creates an empty database
  ASSERT_NE(db, nullptr);
  const sqlite::Migration v1{1, "a", "CREATE TABLE a(x INTEGER)"};
  const sqlite::Migration v2{2, "b", "CREATE TABLE b(x INTEGER); INSERT INTO a VALUES (2)"};
  const sqlite::Migration v3{3, "c", "INSERT INTO a VALUES (3)"};
  const sqlite::Migration bad{4, "bad", "CREATE TABLE d(x INTEGER); INSERT INTO nope VALUES (1)"};

  std::vector<sqlite::Migration> two = {v1, v2};
  Result<sqlite::MigrationResult> r = sqlite::ApplyMigrations(*db, two, clock_.Now());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 2);
  EXPECT_EQ(r->applied, 2);
  r = sqlite::ApplyMigrations(*db, two, clock_.Now());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->applied, 0);
  EXPECT_EQ(QueryInt(*db, "SELECT COUNT(*) FROM a"), 1);

  std::vector<sqlite::Migration> three = {v1, v2, v3};
  r = sqlite::ApplyMigrations(*db, three, clock_.Now());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->version, 3);
  EXPECT_EQ(r->applied, 1);
  EXPECT_EQ(QueryInt(*db, "SELECT COUNT(*) FROM a"), 2);

  // A failing migration leaves nothing behind and the version where it was.
  std::vector<sqlite::Migration> four = {v1, v2, v3, bad};
  r = sqlite::ApplyMigrations(*db, four, clock_.Now());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(*sqlite::SchemaVersion(*db), 3);
  EXPECT_EQ(QueryInt(*db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'd'"), 0);

  // A database newer than the code is refused, not touched.
  r = sqlite::ApplyMigrations(*db, two, clock_.Now());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kFailedPrecondition) << r.status().ToString();
}

// A data directory of the schema before API tokens, with an audit entry, gains the api_tokens
// table at the next open, its rows kept.
TEST_F(SqliteStoreTest, AStoreFromBeforeTokensGainsTheirTableAndKeepsItsRows) {
  const std::span<const sqlite::Migration> all = sqlite::SchemaMigrations();
  const auto tokens = std::find_if(all.begin(), all.end(), [](const sqlite::Migration& m) {
    return std::string(m.sql).find("CREATE TABLE api_tokens") != std::string::npos;
  });
  ASSERT_NE(tokens, all.end());
  const size_t before = static_cast<size_t>(tokens - all.begin());
  {
    std::unique_ptr<sqlite::Connection> raw = Raw();  // creates an empty database
    ASSERT_NE(raw, nullptr);
    Result<sqlite::MigrationResult> r =
        sqlite::ApplyMigrations(*raw, all.first(before), clock_.Now());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->version, tokens->version - 1);
    ASSERT_TRUE(raw->ExecScript("INSERT INTO audit(at, actor, action, target, count, detail)"
                                " VALUES (1700000000000, 'token:ab12cd34', 'pause', 'crm', 1, '')",
                                "an audit entry")
                    .ok());
  }
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->schema_version(), all.back().version);
  EXPECT_EQ(store->migrations_applied(), static_cast<int>(all.size() - before));
  Result<AuditPage> audit = store->ListAudit("", 10);
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  ASSERT_EQ(audit->items.size(), 1u);
  EXPECT_EQ(audit->items[0].target, "crm");
  ApiToken t{.name = "bootstrap", .role = "admin", .created_at = clock_.Now()};
  ASSERT_TRUE(store->CreateToken(t).ok());
  Result<std::vector<ApiToken>> tokens_listed = store->ListTokens();
  ASSERT_TRUE(tokens_listed.ok()) << tokens_listed.status().ToString();
  EXPECT_EQ(*tokens_listed, std::vector<ApiToken>{t});
}

TEST_F(SqliteStoreTest, RefusesDatabaseFromNewerVersion) {
  Open().reset();
  {
    std::unique_ptr<sqlite::Connection> raw = Raw();
    ASSERT_TRUE(raw->ExecScript("PRAGMA user_version = 99", "x").ok());
  }
  Result<std::unique_ptr<SqliteStore>> s = SqliteStore::Open({.dir = dir_.path()}, clock_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("99"), std::string::npos) << s.status().message();
}

// A data directory made by a development build (schema versions 1 to 7, recorded in a
// schema_version table) is refused, untouched, with its version and what to do in the message.
TEST_F(SqliteStoreTest, DevelopmentSchemaIsRefusedWithItsVersion) {
  for (int version : {7, 1}) {
    hookrelay::testing::TempDir dir;
    {
      // What such a build left: its version table and a TEXT-keyed events table with an event.
      Result<std::unique_ptr<sqlite::Connection>> raw = sqlite::Connection::Open(
          dir.path() + "/hookrelay.db",
          SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
      ASSERT_TRUE(raw.ok());
      std::string script =
          "PRAGMA journal_mode = WAL;"
          "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL,"
          " description TEXT NOT NULL);"
          "CREATE TABLE events (id TEXT PRIMARY KEY NOT NULL, source TEXT NOT NULL,"
          " received_at INTEGER NOT NULL, content_type TEXT NOT NULL, size INTEGER NOT NULL,"
          " dedup_key TEXT, headers BLOB NOT NULL, body BLOB NOT NULL);"
          "INSERT INTO events VALUES ('01JDZ8X4AC1N4G0Y5K6M7P8Q9R', 'stripe', 0, '', 0, NULL,"
          " x'', x'');";
      for (int v = 1; v <= version; ++v) {
        script += "INSERT INTO schema_version VALUES (" + std::to_string(v) + ", 0, 'dev');";
      }
      ASSERT_TRUE((*raw)->ExecScript(script, "seed").ok());
    }
    Result<std::unique_ptr<SqliteStore>> s = SqliteStore::Open({.dir = dir.path()}, clock_);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), Status::Code::kFailedPrecondition);
    const std::string& m = s.status().message();
    EXPECT_NE(m.find("data directory " + dir.path() + " has schema version " +
                     std::to_string(version) + " from a development build"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("move the directory aside"), std::string::npos) << m;
    // Untouched: still the old schema, with its event.
    Result<std::unique_ptr<sqlite::Connection>> raw = sqlite::Connection::Open(
        dir.path() + "/hookrelay.db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
    ASSERT_TRUE(raw.ok());
    EXPECT_EQ(QueryInt(**raw, "SELECT COUNT(*) FROM events"), 1);
    EXPECT_EQ(QueryInt(**raw, "PRAGMA user_version"), 0);
    EXPECT_EQ(QueryInt(**raw, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'deliveries'"), 0);
  }
}

// Runs kThreads × kPerThread appends of 1 KiB; `sync` waits for each commit before the next
// append (one outstanding per thread, like HTTP handlers), else all are fired at once.
struct LoadResult {
  int events = 0;
  int failures = 0;
  size_t distinct_ids = 0;
  double seconds = 0;
  SqliteStore::WriterStats stats;
};

LoadResult RunLoad(SqliteStore& store, const Clock& clock, bool sync) {
  constexpr int kThreads = 16;
  constexpr int kPerThread = 500;
  const SqliteStore::WriterStats before = store.writer_stats();
  std::mutex mu;
  std::set<std::string> ids;
  int failures = 0;
  std::latch done(kThreads * kPerThread);
  auto record = [&](const Result<AppendResult>& r) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (r.ok() && !r->duplicate) {
        ids.insert(r->id);
      } else {
        ++failures;
      }
    }
    done.count_down();
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      SeededRandom random(100 + t);
      for (int i = 0; i < kPerThread; ++i) {
        NewEvent e = MakeEvent(clock, random, RandomBytes(random, 1024), {"billing"});
        if (sync) {
          record(store.AppendEventSync(std::move(e)));
        } else {
          store.AppendEvent(std::move(e), record);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  done.wait();
  LoadResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.events = kThreads * kPerThread;
  r.failures = failures;
  r.distinct_ids = ids.size();
  SqliteStore::WriterStats after = store.writer_stats();
  r.stats.ops = after.ops - before.ops;
  r.stats.batches = after.batches - before.batches;
  r.stats.commits = after.commits - before.commits;
  r.stats.failed_commits = after.failed_commits - before.failed_commits;
  r.stats.largest_batch = after.largest_batch;
  std::printf(
      "[ group commit ] %s: %d events in %.3f s = %.0f events/s, %lld commits, "
      "%.1f events/commit, largest batch %lld\n",
      sync ? "16 threads x 500 AppendEventSync" : "16 threads x 500 AppendEvent (async)", r.events,
      r.seconds, r.events / r.seconds, static_cast<long long>(r.stats.commits),
      static_cast<double>(r.events) / static_cast<double>(std::max<int64_t>(1, r.stats.commits)),
      static_cast<long long>(r.stats.largest_batch));
  return r;
}

TEST_F(SqliteStoreTest, GroupCommitBatchesConcurrentAppends) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  LoadResult r = RunLoad(*store, clock_, /*sync=*/false);
  EXPECT_EQ(r.failures, 0);
  EXPECT_EQ(r.distinct_ids, static_cast<size_t>(r.events));
  EXPECT_EQ(r.stats.ops, r.events);
  EXPECT_EQ(r.stats.failed_commits, 0);
  // Far fewer commits (fsyncs) than events.
  EXPECT_LE(r.stats.commits * 4, r.events);
  EXPECT_EQ(*store->CountDeliveries(DeliveryStatus::kScheduled), r.events);
}

TEST_F(SqliteStoreTest, GroupCommitBatchesSynchronousWriters) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  LoadResult r = RunLoad(*store, clock_, /*sync=*/true);
  EXPECT_EQ(r.failures, 0);
  EXPECT_EQ(r.distinct_ids, static_cast<size_t>(r.events));
  // Each thread waits for its commit, so at most 16 are queued at once; still they share commits.
  EXPECT_LT(r.stats.commits, r.events);
  EXPECT_LE(r.stats.largest_batch, 16);
}

TEST_F(SqliteStoreTest, RecordAttemptsIsOneWriteOperation) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  constexpr int kN = 50;
  std::vector<Delivery> claimed = AppendAndClaim(*store, kN);
  ASSERT_EQ(claimed.size(), static_cast<size_t>(kN));
  std::vector<AttemptRecord> batch;
  for (const Delivery& d : claimed) {
    batch.push_back({{d.id, 1, clock_.Now(), 1, 200, std::nullopt, std::nullopt, ""},
                     {DeliveryStatus::kDelivered, clock_.Now()}});
  }
  const SqliteStore::WriterStats before = store->writer_stats();
  std::vector<Status> st = store->RecordAttempts(batch, "s");
  const SqliteStore::WriterStats after = store->writer_stats();
  ASSERT_EQ(st.size(), batch.size());
  for (const Status& s : st) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(after.ops - before.ops, 1);
  EXPECT_EQ(after.commits - before.commits, 1);
  EXPECT_EQ(*store->CountDeliveries(DeliveryStatus::kDelivered), kN);
}

TEST_F(SqliteStoreTest, RecordAttemptsOnAFullDiskFailsEveryRecordAndWritesNothing) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  constexpr int kN = 20;
  std::vector<Delivery> claimed = AppendAndClaim(*store, kN);
  ASSERT_EQ(claimed.size(), static_cast<size_t>(kN));
  std::vector<AttemptRecord> batch;
  for (const Delivery& d : claimed) {
    // Large snippets, so the batch cannot fit in what is left.
    batch.push_back({{d.id, 1, clock_.Now(), 1, 200, std::nullopt, std::nullopt,
                      RandomBytes(random_, 64 * 1024)},
                     {DeliveryStatus::kDelivered, clock_.Now()}});
  }
  const int64_t pages = std::stoll(*store->TEST_WriterPragma("page_count"));
  ASSERT_TRUE(store->TEST_SetMaxPageCount(pages + 4).ok());
  std::vector<Status> st = store->RecordAttempts(batch, "s");
  ASSERT_EQ(st.size(), batch.size());
  for (const Status& s : st) EXPECT_EQ(s.code(), Status::Code::kResourceExhausted) << s.ToString();
  EXPECT_EQ(*store->CountDeliveries(DeliveryStatus::kDelivering), kN);
  EXPECT_TRUE(store->GetAttempts(claimed[0].id)->empty());

  ASSERT_TRUE(store->TEST_SetMaxPageCount(0).ok());
  st = store->RecordAttempts(batch, "s");
  for (const Status& s : st) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(*store->CountDeliveries(DeliveryStatus::kDelivered), kN);
}

// The appends of one batch tell their callers whether another new event's completion follows
// (AppendResult::more_follow), so that ingest wakes the delivery engine once per batch: only the
// last new event of the batch says none follows; duplicates don't count.
TEST_F(SqliteStoreTest, AppendsOfOneBatchSayWhetherANewEventFollows) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  auto with_key = [&](std::string key) {
    NewEvent e = MakeEvent(clock_, random_);
    e.dedup_key = std::move(key);
    e.dedup_window = hours(1);
    return e;
  };
  std::vector<std::optional<bool>> more(5);  // nullopt: the append failed
  std::latch done(5);
  {
    WriterGate gate(*store, clock_, random_);
    std::vector<NewEvent> events;
    events.push_back(with_key("a"));
    events.push_back(MakeEvent(clock_, random_));
    events.push_back(with_key("a"));  // a duplicate of the first
    events.push_back(MakeEvent(clock_, random_));
    events.push_back(with_key("a"));  // a duplicate again, after the last new event
    for (size_t i = 0; i < events.size(); ++i) {
      store->AppendEvent(std::move(events[i]), [&, i](Result<AppendResult> r) {
        if (r.ok()) more[i] = r->more_follow;
        done.count_down();
      });
    }
    gate.Release();
  }
  done.wait();
  EXPECT_EQ(more[0], true);
  EXPECT_EQ(more[1], true);
  EXPECT_EQ(more[2], false);  // a duplicate: its caller does not wake anything
  EXPECT_EQ(more[3], false);  // the last new event of the batch
  EXPECT_EQ(more[4], false);
}

// The dashboard's per-minute counters are summed in memory for a batch and written once per
// (minute, destination) at its commit, not once per event or attempt: a batch of N appends with one
// route changes N event rows + N delivery rows + 1 counter row; N attempts of one destination
// recorded together change N deliveries + N attempts + 1 counter row.
TEST_F(SqliteStoreTest, StatsAreWrittenOncePerMinuteAndDestinationPerBatch) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  constexpr int kN = 20;
  const int64_t start = *store->TEST_WriterTotalChanges();
  std::latch done(kN);
  {
    WriterGate gate(*store, clock_, random_);
    for (int i = 0; i < kN; ++i) {
      store->AppendEvent(MakeEvent(clock_, random_), [&](Result<AppendResult> r) {
        EXPECT_TRUE(r.ok());
        done.count_down();
      });
    }
    // Counted after the gate's own append (3 rows: event, delivery, counter) has committed.
    gate.Release();
  }
  done.wait();
  const int64_t after_appends = *store->TEST_WriterTotalChanges();
  EXPECT_EQ(after_appends - start, 3 + (2 * kN + 1));
  Result<std::vector<StatsRow>> rows = store->GetStats(clock_.Now(), clock_.Now() + minutes(1));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].received, kN + 1);

  std::vector<Delivery> claimed = *store->ClaimDue(clock_.Now(), kN + 1, seconds(30), "s");
  ASSERT_EQ(claimed.size(), static_cast<size_t>(kN + 1));
  const int64_t before_record = *store->TEST_WriterTotalChanges();
  std::vector<AttemptRecord> batch;
  for (const Delivery& d : claimed) {
    batch.push_back({{d.id, 1, clock_.Now(), 1, 200, std::nullopt, std::nullopt, ""},
                     {DeliveryStatus::kDelivered, clock_.Now()}});
  }
  for (const Status& s : store->RecordAttempts(batch, "s")) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(*store->TEST_WriterTotalChanges() - before_record, 2 * (kN + 1) + 1);
  rows = store->GetStats(clock_.Now(), clock_.Now() + minutes(1));
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].destination, "billing");
  EXPECT_EQ((*rows)[1].attempts, kN + 1);
  EXPECT_EQ((*rows)[1].delivered, kN + 1);
  EXPECT_EQ((*rows)[1].attempt_failures, 0);
}

// PRAGMA data_version of a connection other than the writer: it changes when another connection
// commits a change to the database file, and only then.
int64_t DataVersion(sqlite::Connection& db) {
  Result<std::string> v = db.PragmaValue("data_version");
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? std::stoll(*v) : -1;
}

// The data directory belongs to one process, so a claim is kept in memory: it writes nothing to
// the database (no row changed, nothing committed), yet the delivery reads as delivering and is
// not claimed twice.
TEST_F(SqliteStoreTest, ClaimsWriteNothingToDisk) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store->AppendEventSync(MakeEvent(clock_, random_)).ok());
  std::unique_ptr<sqlite::Connection> raw = Raw();
  const int64_t version = DataVersion(*raw);
  const int64_t changes = *store->TEST_WriterTotalChanges();
  std::vector<Delivery> claimed = *store->ClaimDue(clock_.Now(), 3, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 3u);
  EXPECT_EQ(store->ClaimDue(clock_.Now(), 10, seconds(30), "s", "billing")->size(), 2u);
  EXPECT_TRUE(store->ClaimDue(clock_.Now(), 10, seconds(30), "s")->empty());
  EXPECT_EQ(*store->TEST_WriterTotalChanges(), changes);
  EXPECT_EQ(DataVersion(*raw), version);
  EXPECT_EQ(store->GetDeliveries(claimed[0].event_id)->at(0).status, DeliveryStatus::kDelivering);
  EXPECT_EQ(*store->CountDeliveries(DeliveryStatus::kDelivering), 5);
  EXPECT_EQ(*store->CountDue(clock_.Now()), 0);
}

// After a crash nothing of the claims survives: what was in flight is due again at once, with its
// event (hence its webhook-id) unchanged, and only that.
TEST_F(SqliteStoreTest, InFlightDeliveriesAreDueAgainAfterARestart) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  std::vector<Delivery> claimed = AppendAndClaim(*store, 3);
  ASSERT_EQ(claimed.size(), 3u);
  // One of them is delivered before the "crash"; the others are still out.
  ASSERT_TRUE(
      store
          ->RecordAttempt({claimed[0].id, 1, clock_.Now(), 1, 200, std::nullopt, std::nullopt, ""},
                          {DeliveryStatus::kDelivered, clock_.Now()}, "s")
          .ok());
  store.reset();
  store = Open();
  ASSERT_NE(store, nullptr);
  std::vector<Delivery> again = *store->ClaimDue(clock_.Now(), 10, hours(1), "s2");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].id, claimed[1].id);
  EXPECT_EQ(again[0].event_id, claimed[1].event_id);
  EXPECT_EQ(again[1].id, claimed[2].id);
  EXPECT_EQ(again[0].attempts, 0);
}

TEST_F(SqliteStoreTest, BatchIsCappedAtMaxBatch) {
  std::unique_ptr<SqliteStore> store = Open({.max_batch = 4});
  ASSERT_NE(store, nullptr);
  std::latch done(10);
  {
    WriterGate gate(*store, clock_, random_);
    for (int i = 0; i < 10; ++i) {
      store->AppendEvent(MakeEvent(clock_, random_), [&](Result<AppendResult> r) {
        EXPECT_TRUE(r.ok());
        done.count_down();
      });
    }
    gate.Release();
  }
  done.wait();
  SqliteStore::WriterStats s = store->writer_stats();
  EXPECT_EQ(s.largest_batch, 4);
  EXPECT_EQ(s.ops, 12);         // the gate's append and its hold, then 10
  EXPECT_EQ(s.commits, 1 + 3);  // the gate's append (its hold changes nothing), then 4 + 4 + 2
}

TEST_F(SqliteStoreTest, SameBatchDuplicatesAreFound) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  std::mutex mu;
  std::vector<AppendResult> results;
  std::latch done(3);
  auto collect = [&](Result<AppendResult> r) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::lock_guard<std::mutex> lock(mu);
    results.push_back(*r);
    done.count_down();
  };
  int64_t commits_before = 0;
  {
    WriterGate gate(*store, clock_, random_);
    commits_before = store->writer_stats().commits;
    for (int i = 0; i < 3; ++i) {
      NewEvent e = MakeEvent(clock_, random_, "payload " + std::to_string(i));
      e.dedup_key = "evt_same";
      e.dedup_window = minutes(5);
      store->AppendEvent(std::move(e), collect);
    }
    gate.Release();
  }
  done.wait();
  EXPECT_EQ(store->writer_stats().commits - commits_before, 1);  // one batch, one transaction
  ASSERT_EQ(results.size(), 3u);
  EXPECT_FALSE(results[0].duplicate);
  EXPECT_TRUE(results[1].duplicate);
  EXPECT_TRUE(results[2].duplicate);
  EXPECT_EQ(results[1].id, results[0].id);
  EXPECT_EQ(results[2].id, results[0].id);
  EXPECT_EQ((*store->GetEvent(results[0].id))->body, "payload 0");
  EXPECT_EQ(*store->CountDeliveries(DeliveryStatus::kScheduled), 2);  // the gate's and the first
}

TEST_F(SqliteStoreTest, OneFailingOperationDoesNotFailItsBatch) {
  Open().reset();
  {
    // An event with the body "clash" fails on its own insert, before anything else of it.
    std::unique_ptr<sqlite::Connection> raw = Raw();
    ASSERT_TRUE(raw->ExecScript("CREATE TRIGGER clash BEFORE INSERT ON events"
                                " WHEN NEW.body = CAST('clash' AS BLOB)"
                                " BEGIN SELECT RAISE(ABORT, 'clashed'); END",
                                "create trigger")
                    .ok());
  }
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  Result<AppendResult> existing = store->AppendEventSync(MakeEvent(clock_, random_, "existing"));
  ASSERT_TRUE(existing.ok()) << existing.status().ToString();

  std::mutex mu;
  std::vector<Result<AppendResult>> results;
  std::latch done(3);
  auto collect = [&](Result<AppendResult> r) {
    std::lock_guard<std::mutex> lock(mu);
    results.push_back(std::move(r));
    done.count_down();
  };
  NewEvent before = MakeEvent(clock_, random_, "before", {"a", "b"});
  NewEvent clash = MakeEvent(clock_, random_, "clash", {"a", "b"});
  NewEvent after = MakeEvent(clock_, random_, "after", {"a", "b"});
  {
    WriterGate gate(*store, clock_, random_);
    store->AppendEvent(before, collect);
    store->AppendEvent(clash, collect);
    store->AppendEvent(after, collect);
    gate.Release();
  }
  done.wait();
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok());
  ASSERT_FALSE(results[1].ok());
  EXPECT_NE(results[1].status().message().find("clashed"), std::string::npos)
      << results[1].status().ToString();
  ASSERT_TRUE(results[2].ok());
  EXPECT_EQ((*store->GetEvent(existing->id))->body, "existing");
  EXPECT_EQ(store->GetDeliveries(existing->id)->size(), 1u);
  EXPECT_EQ(store->GetDeliveries(results[0]->id)->size(), 2u);
  EXPECT_EQ(store->GetDeliveries(results[2]->id)->size(), 2u);
  EXPECT_EQ(store->ListEvents({}, "", 10)->items.size(), 4u);  // the gate's, and no "clash"
  // The batch ran bare first, then again with savepoints once the clash failed it.
  EXPECT_EQ(store->writer_stats().savepoint_fallbacks, 1);
}

TEST_F(SqliteStoreTest, OperationFailingHalfwayLeavesNothingAndSparesItsBatch) {
  Open().reset();
  {
    // Deliveries to "poison" fail, after their event and earlier deliveries were inserted.
    std::unique_ptr<sqlite::Connection> raw = Raw();
    ASSERT_TRUE(raw->ExecScript("CREATE TRIGGER poison BEFORE INSERT ON deliveries"
                                " WHEN NEW.destination = 'poison'"
                                " BEGIN SELECT RAISE(ABORT, 'poisoned'); END",
                                "create trigger")
                    .ok());
  }
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  std::mutex mu;
  std::vector<Result<AppendResult>> results;
  std::latch done(3);
  auto collect = [&](Result<AppendResult> r) {
    std::lock_guard<std::mutex> lock(mu);
    results.push_back(std::move(r));
    done.count_down();
  };
  NewEvent before = MakeEvent(clock_, random_, "before", {"a", "b"});
  NewEvent half = MakeEvent(clock_, random_, "half", {"a", "poison"});
  NewEvent after = MakeEvent(clock_, random_, "after", {"a", "b"});
  int64_t commits_before = 0;
  {
    WriterGate gate(*store, clock_, random_);
    commits_before = store->writer_stats().commits;
    store->AppendEvent(before, collect);
    store->AppendEvent(half, collect);
    store->AppendEvent(after, collect);
    gate.Release();
  }
  done.wait();
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok()) << results[0].status().ToString();
  ASSERT_FALSE(results[1].ok());
  EXPECT_NE(results[1].status().message().find("poisoned"), std::string::npos)
      << results[1].status().ToString();
  ASSERT_TRUE(results[2].ok()) << results[2].status().ToString();
  // Nothing of the failed event: neither the event nor its first delivery.
  Result<EventPage> all = store->ListEvents({}, "", 10);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->items.size(), 3u);  // the gate's, before, after
  for (const Event& e : all->items) EXPECT_NE(e.body, "half");
  EXPECT_EQ(QueryInt(*Raw(), "SELECT COUNT(*) FROM deliveries"), 1 + 2 + 2);
  EXPECT_EQ(store->GetDeliveries(results[0]->id)->size(), 2u);
  EXPECT_EQ(store->GetDeliveries(results[2]->id)->size(), 2u);
  SqliteStore::WriterStats stats = store->writer_stats();
  EXPECT_EQ(stats.commits - commits_before, 1);  // still one transaction for the three
  EXPECT_EQ(stats.savepoint_fallbacks, 1);
  EXPECT_EQ(stats.failed_commits, 0);

  // Batches without failures run bare.
  ASSERT_TRUE(store->AppendEventSync(MakeEvent(clock_, random_)).ok());
  EXPECT_EQ(store->writer_stats().savepoint_fallbacks, 1);
}

TEST_F(SqliteStoreTest, ReadsDoNotWaitForTheWriter) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  Result<AppendResult> e = store->AppendEventSync(MakeEvent(clock_, random_, "visible"));
  ASSERT_TRUE(e.ok());
  WriterGate gate(*store, clock_, random_);  // the writer is stuck from here on
  NewEvent queued = MakeEvent(clock_, random_, "queued");
  std::latch done(1);
  std::string queued_id;
  store->AppendEvent(queued, [&](Result<AppendResult> r) {
    queued_id = r.ok() ? r->id : "";
    done.count_down();
  });
  EXPECT_EQ((*store->GetEvent(e->id))->body, "visible");
  EXPECT_EQ(store->ListEvents({}, "", 10)->items.size(), 2u);  // not the queued one yet
  EXPECT_EQ(*store->CountDeliveries(DeliveryStatus::kScheduled), 2);
  EXPECT_TRUE(store->NextDueAt()->has_value());
  gate.Release();
  done.wait();
  EXPECT_TRUE(store->GetEvent(queued_id)->has_value());
}

TEST_F(SqliteStoreTest, SynchronousWriteFromAppendCallbackFailsInsteadOfDeadlocking) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  std::latch done(1);
  Status nested;
  store->AppendEvent(MakeEvent(clock_, random_), [&](Result<AppendResult> r) {
    EXPECT_TRUE(r.ok());
    nested = store->PutBreaker("billing", {}).ok() ? Status::Ok() : Status::Internal("refused");
    done.count_down();
  });
  done.wait();
  EXPECT_EQ(nested.code(), Status::Code::kInternal);
  EXPECT_TRUE(store->PutBreaker("billing", {}).ok());  // fine from any other thread
}

TEST_F(SqliteStoreTest, DiskFullFailsTheAppendKeepsEarlierDataAndRecovers) {
  // ~100 KiB bodies take ~26 pages each: a 96-page database holds the schema and a few of them.
  std::unique_ptr<SqliteStore> store = Open({.max_page_count = 96});
  ASSERT_NE(store, nullptr);
  std::vector<std::pair<std::string, NewEvent>> stored;
  Status full;
  for (int i = 0; i < 20; ++i) {
    NewEvent e = MakeEvent(clock_, random_, RandomBytes(random_, 100 * 1024), {"a", "b"});
    Result<AppendResult> r = store->AppendEventSync(e);
    if (!r.ok()) {
      full = r.status();
      // Nothing of the failed event was stored.
      EXPECT_EQ(store->ListEvents({}, "", 100)->items.size(), stored.size());
      EXPECT_EQ(QueryInt(*Raw(), "SELECT COUNT(*) FROM deliveries"),
                static_cast<int64_t>(2 * stored.size()));
      break;
    }
    stored.emplace_back(r->id, std::move(e));
  }
  ASSERT_FALSE(full.ok()) << "the page limit was never reached";
  EXPECT_EQ(full.code(), Status::Code::kResourceExhausted) << full.ToString();
  EXPECT_EQ(full.message().rfind("disk full", 0), 0u) << full.message();
  ASSERT_GE(stored.size(), 1u);

  // Everything committed before is intact.
  for (const auto& [id, e] : stored) {
    Result<std::optional<Event>> got = store->GetEvent(id);
    ASSERT_TRUE(got.ok() && got->has_value());
    EXPECT_TRUE((*got)->body == e.body);
    EXPECT_EQ(store->GetDeliveries(id)->size(), 2u);
  }
  // A small event still fits in the pages that are left.
  Result<AppendResult> small = store->AppendEventSync(MakeEvent(clock_, random_, "tiny"));
  EXPECT_TRUE(small.ok()) << small.status().ToString();

  // Relieve the pressure: big events are stored again.
  Result<int64_t> limit = store->TEST_SetMaxPageCount(0);
  ASSERT_TRUE(limit.ok()) << limit.status().ToString();
  EXPECT_GT(*limit, 96);
  NewEvent big = MakeEvent(clock_, random_, RandomBytes(random_, 100 * 1024));
  Result<AppendResult> r = store->AppendEventSync(big);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE((*store->GetEvent(r->id))->body == big.body);
}

TEST_F(SqliteStoreTest, DiskFullInABatchFailsOnlyTheOperationThatDidNotFit) {
  std::unique_ptr<SqliteStore> store = Open({.max_page_count = 64});
  ASSERT_NE(store, nullptr);
  std::mutex mu;
  std::vector<Result<AppendResult>> results;
  std::latch done(3);
  auto collect = [&](Result<AppendResult> r) {
    std::lock_guard<std::mutex> lock(mu);
    results.push_back(std::move(r));
    done.count_down();
  };
  NewEvent small1 = MakeEvent(clock_, random_, "small one");
  NewEvent huge = MakeEvent(clock_, random_, RandomBytes(random_, 1024 * 1024));
  NewEvent small2 = MakeEvent(clock_, random_, "small two");
  {
    WriterGate gate(*store, clock_, random_);
    store->AppendEvent(small1, collect);
    store->AppendEvent(huge, collect);
    store->AppendEvent(small2, collect);
    gate.Release();
  }
  done.wait();
  ASSERT_EQ(results.size(), 3u);
  ASSERT_TRUE(results[0].ok()) << results[0].status().ToString();
  ASSERT_FALSE(results[1].ok());
  EXPECT_EQ(results[1].status().code(), Status::Code::kResourceExhausted);
  ASSERT_TRUE(results[2].ok()) << results[2].status().ToString();
  EXPECT_EQ((*store->GetEvent(results[0]->id))->body, "small one");
  EXPECT_EQ((*store->GetEvent(results[2]->id))->body, "small two");
  EXPECT_EQ(store->ListEvents({}, "", 10)->items.size(), 3u);  // the gate's and the two small
}

// The plan of `sql` as EXPLAIN QUERY PLAN shows it, one step a line.
std::string QueryPlan(sqlite::Connection& db, const std::string& sql) {
  Result<sqlite::Statement> plan = db.Prepare("EXPLAIN QUERY PLAN " + sql);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  if (!plan.ok()) return "";
  std::string details;
  while (*plan->Step("plan")) details += plan->Text(3) + "\n";
  return details;
}

// Deliveries waiting for a retry (or paused) are found by the partial due index, in due order,
// without a sort of the backlog; new deliveries by a walk of the table from a rowid.
TEST_F(SqliteStoreTest, DueWorkUsesTheWaitingIndexAndNewWorkTheRowidOrder) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  std::unique_ptr<sqlite::Connection> raw = Raw();
  std::string claim =
      QueryPlan(*raw,
                "SELECT id, next_attempt_at FROM deliveries WHERE destination = 'crm'"
                " AND status = 'scheduled' AND status IN ('scheduled', 'paused')"
                " AND next_attempt_at <= 5 ORDER BY next_attempt_at, id");
  EXPECT_NE(claim.find("deliveries_waiting (destination=? AND status=? AND next_attempt_at<?)"),
            std::string::npos)
      << claim;
  EXPECT_EQ(claim.find("TEMP B-TREE"), std::string::npos) << claim;
  std::string count =
      QueryPlan(*raw,
                "SELECT destination, COUNT(*) FROM deliveries WHERE status = 'scheduled'"
                " AND status IN ('scheduled', 'paused') AND next_attempt_at <= 5"
                " GROUP BY destination");
  EXPECT_NE(count.find("deliveries_waiting"), std::string::npos) << count;
  std::string fresh = QueryPlan(*raw,
                                "SELECT id, next_attempt_at, destination FROM deliveries"
                                " WHERE id >= 7 AND destination = 'crm' AND status = 'pending'"
                                " ORDER BY id");
  EXPECT_NE(fresh.find("SEARCH deliveries USING INTEGER PRIMARY KEY (rowid>?)"), std::string::npos)
      << fresh;
  EXPECT_EQ(fresh.find("TEMP B-TREE"), std::string::npos) << fresh;
  std::string pause = QueryPlan(*raw,
                                "UPDATE deliveries SET status = 'paused' WHERE destination = 'crm'"
                                " AND status = 'scheduled' AND status IN ('scheduled', 'paused')");
  EXPECT_NE(pause.find("deliveries_waiting"), std::string::npos) << pause;
  // Across destinations (readiness, the stall metrics): a skip-scan of the index, one probe per
  // destination, then a due range of each; never a walk of all that waits.
  std::string across = QueryPlan(
      *raw,
      "WITH RECURSIVE d(name) AS ("
      " SELECT MIN(destination) FROM deliveries WHERE status IN ('scheduled', 'paused')"
      " UNION ALL SELECT (SELECT MIN(destination) FROM deliveries WHERE destination > d.name"
      "  AND status IN ('scheduled', 'paused')) FROM d WHERE d.name IS NOT NULL)"
      " SELECT name, (SELECT COUNT(*) FROM deliveries WHERE destination = d.name"
      " AND status = 'scheduled' AND status IN ('scheduled', 'paused') AND next_attempt_at <= 5)"
      " FROM d WHERE name IS NOT NULL");
  EXPECT_NE(across.find("deliveries_waiting (destination>?)"), std::string::npos) << across;
  EXPECT_NE(across.find("deliveries_waiting (destination=? AND status=? AND next_attempt_at<?)"),
            std::string::npos)
      << across;
  EXPECT_EQ(across.find("SCAN deliveries"), std::string::npos) << across;
}

// New deliveries are found from an in-memory frontier (no index): claims in small steps across
// interleaved destinations, retries, work that arrives after everything was drained, and a
// restart (which finds the frontier and counts again) never lose or repeat one.
TEST_F(SqliteStoreTest, NewDeliveriesAreFoundFromTheFrontierThroughDrainsAndRestarts) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  std::set<int64_t> seen;
  auto append = [&](int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(
          store->AppendEventSync(MakeEvent(clock_, random_, "{}", {i % 3 ? "a" : "b"})).ok());
    }
  };
  // Claims everything claimable of `dest` in steps of 4; the first of every 5 gets a retry due in
  // a minute, the others are delivered. Returns how many were claimed.
  auto drain = [&](const std::string& dest) {
    size_t total = 0;
    for (;;) {
      std::vector<Delivery> c = *store->ClaimDue(clock_.Now(), 4, seconds(30), "s", dest);
      if (c.empty()) return total;
      std::vector<AttemptRecord> records;
      for (const Delivery& d : c) {
        EXPECT_EQ(d.destination, dest);
        const bool retry = d.id % 5 == 0 && d.attempts == 0;
        EXPECT_TRUE(retry || seen.insert(d.id).second) << "claimed twice: " << d.id;
        records.push_back({{d.id, d.attempts + 1, clock_.Now(), 1, retry ? 500 : 200, std::nullopt,
                            std::nullopt, ""},
                           {retry ? DeliveryStatus::kScheduled : DeliveryStatus::kDelivered,
                            clock_.Now() + minutes(1)}});
      }
      for (const Status& st : store->RecordAttempts(records, "s")) EXPECT_TRUE(st.ok());
      total += c.size();
    }
  };
  append(30);  // 20 to a, 10 to b
  EXPECT_EQ(*store->CountDueByDestination(clock_.Now()),
            (std::map<std::string, int64_t>{{"a", 20}, {"b", 10}}));
  EXPECT_EQ(drain("a"), 20u);
  EXPECT_EQ(*store->CountDue(clock_.Now()), 10);
  append(9);  // after a's frontier went past its last row
  EXPECT_EQ(drain("a"), 6u);
  EXPECT_EQ(drain("b"), 13u);
  EXPECT_EQ(*store->CountDue(clock_.Now()), 0);
  const int64_t retries = *store->CountDeliveries(DeliveryStatus::kScheduled);
  EXPECT_GT(retries, 0);
  append(6);
  store.reset();  // a restart: the frontier and the counts are found again
  store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->CountDueByDestination(clock_.Now()),
            (std::map<std::string, int64_t>{{"a", 4}, {"b", 2}}));
  EXPECT_EQ(*store->CountDeliveries(DeliveryStatus::kScheduled), retries + 6);
  EXPECT_EQ(drain("a") + drain("b"), 6u);
  const int64_t all_retries = *store->CountDeliveries(DeliveryStatus::kScheduled);
  EXPECT_GE(all_retries, retries);
  EXPECT_EQ(*store->CountDue(clock_.Now()), 0);
  clock_.Advance(minutes(1));  // the retries come due, by the waiting index
  EXPECT_EQ(*store->CountDue(clock_.Now()), all_retries);
  EXPECT_EQ(static_cast<int64_t>(drain("a") + drain("b")), all_retries);
  EXPECT_EQ(seen.size(), 45u);
  EXPECT_EQ(*store->CountDeliveries(DeliveryStatus::kDelivered), 45);
  EXPECT_EQ(*store->CountDue(clock_.Now()), 0);
  EXPECT_FALSE(store->NextDueAt()->has_value());
}

// Entries per B-tree (table or index) of the database, from SQLite's dbstat virtual table: the
// cells of every page but overflow pages (a table's interior cells are a few separators).
std::map<std::string, int64_t> BtreeEntries(sqlite::Connection& db) {
  std::map<std::string, int64_t> out;
  Result<sqlite::Statement> q = db.Prepare(
      "SELECT name, SUM(ncell) FROM dbstat WHERE pagetype IN ('leaf', 'internal')"
      " GROUP BY name");
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  if (!q.ok()) return out;
  for (;;) {
    Result<bool> row = q->Step("dbstat");
    EXPECT_TRUE(row.ok()) << row.status().ToString();
    if (!row.ok() || !*row) break;
    out[q->Text(0)] = q->Int(1);
  }
  return out;
}

// The B-trees that gained at least `n` entries from `before` to `after`.
std::set<std::string> GrewBy(const std::map<std::string, int64_t>& before,
                             const std::map<std::string, int64_t>& after, int64_t n) {
  std::set<std::string> out;
  for (const auto& [name, count] : after) {
    auto it = before.find(name);
    if (count - (it == before.end() ? 0 : it->second) >= n) out.insert(name);
  }
  return out;
}

// Issue 13: an ingested event with one route writes at most 3 B-trees (it was 7); the dedup index
// is written only for events that carry a dedup key.
TEST_F(SqliteStoreTest, AnEventWithOneRouteWritesThreeBtrees) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->AppendEventSync(MakeEvent(clock_, random_)).ok());  // the minute's counter
  std::unique_ptr<sqlite::Connection> raw = Raw();
  constexpr int kN = 300;
  std::map<std::string, int64_t> before = BtreeEntries(*raw);
  for (int i = 0; i < kN; ++i) {
    ASSERT_TRUE(store->AppendEventSync(MakeEvent(clock_, random_)).ok());
  }
  std::map<std::string, int64_t> after = BtreeEntries(*raw);
  std::set<std::string> grown = GrewBy(before, after, kN);
  EXPECT_EQ(grown, (std::set<std::string>{"events", "deliveries", "deliveries_event"}));
  for (const auto& [name, count] : after) {
    if (grown.count(name)) continue;
    auto it = before.find(name);
    EXPECT_LE(count - (it == before.end() ? 0 : it->second), 1) << name;  // stats_minute: 1
  }

  // A source that uses dedup adds its index, and only that.
  before = after;
  for (int i = 0; i < kN; ++i) {
    NewEvent e = MakeEvent(clock_, random_);
    e.dedup_key = "key-" + std::to_string(i);
    e.dedup_window = minutes(5);
    ASSERT_TRUE(store->AppendEventSync(std::move(e)).ok());
  }
  after = BtreeEntries(*raw);
  EXPECT_EQ(GrewBy(before, after, kN),
            (std::set<std::string>{"events", "deliveries", "deliveries_event", "events_dedup"}));

  // Claims and their results: the results write the row, the attempt, and (for a retry) the
  // waiting index; still nothing for the claim itself.
  before = after;
  std::vector<Delivery> claimed = *store->ClaimDue(clock_.Now(), 50, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 50u);
  EXPECT_EQ(BtreeEntries(*raw), before);
}

// The event list's status filter probes each event's deliveries by the event index (as before
// the current flag).
TEST_F(SqliteStoreTest, CurrentStatusQueriesUseIndexes) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  std::unique_ptr<sqlite::Connection> raw = Raw();
  std::string list = QueryPlan(
      *raw,
      "SELECT e.id FROM events e WHERE EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id"
      " AND +d.status = 'failed' AND d.current = 1) ORDER BY e.id DESC LIMIT 101");
  EXPECT_NE(list.find("deliveries_event"), std::string::npos) << list;
  EXPECT_EQ(list.find("TEMP B-TREE"), std::string::npos) << list;
}

}  // namespace
}  // namespace hookrelay::store
