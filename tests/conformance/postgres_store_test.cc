// What only the PostgreSQL store has to show, beyond the conformance suite: its migrations under
// an advisory lock and the newer-schema rule, two stores (two nodes) sharing one database, a lost
// connection, and errors that never show the URL's password.
#include "store/postgres/postgres_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <latch>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "conformance/store_test_util.h"
#include "store/event_id.h"
#include "store/open_store.h"
#include "store/postgres/migrations.h"
#include "store/row_codec.h"
#include "support/pg_cluster.h"
#include "support/wait.h"

namespace hookrelay::store {
namespace {

using std::chrono::seconds;
using test::MakeEvent;

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    cluster_ = hookrelay::testing::SharedPgCluster(&error);
    ASSERT_NE(cluster_, nullptr) << error;
    url_ = cluster_->CreateDatabase(&error);
    ASSERT_FALSE(url_.empty()) << error;
    db_ = url_.substr(url_.rfind('/') + 1);
  }

  Result<std::unique_ptr<PostgresStore>> Open(const std::string& url) {
    Result<StoreAddress> address = ParseStoreAddress(url);
    if (!address.ok()) return address.status();
    return PostgresStore::Open({.url = url, .display = address->display}, clock_);
  }

  std::unique_ptr<PostgresStore> OpenOk() {
    Result<std::unique_ptr<PostgresStore>> s = Open(url_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  hookrelay::testing::PgCluster* cluster_ = nullptr;
  std::string url_;
  std::string db_;
  FakeClock clock_;
  SeededRandom random_{7};
};

TEST_F(PostgresStoreTest, MigratesOnceAndRefusesANewerSchemaUntouched) {
  const int latest = static_cast<int>(pg::SchemaMigrations().size());
  const std::string future = std::to_string(latest + 1);
  {
    std::unique_ptr<PostgresStore> s = OpenOk();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->schema_version(), latest);
    EXPECT_EQ(s->migrations_applied(), latest);
  }
  {
    std::unique_ptr<PostgresStore> s = OpenOk();
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->migrations_applied(), 0) << "nothing left to apply";
  }
  // A newer build migrated this database: this build refuses it and writes nothing.
  ASSERT_EQ(cluster_->Exec(
                db_, "INSERT INTO schema_migrations VALUES (" + future + ", 0, 'from the future')"),
            "");
  Result<std::unique_ptr<PostgresStore>> refused = Open(url_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("has schema version " + future +
                                            ", newer than this build supports (" +
                                            std::to_string(latest) + ")"),
            std::string::npos)
      << refused.status().message();
  EXPECT_EQ(cluster_->Exec(db_, "DELETE FROM schema_migrations WHERE version = " + future), "");
  EXPECT_TRUE(Open(url_).ok());
}

TEST_F(PostgresStoreTest, NodesStartingAtOnceMigrateOnce) {
  constexpr int kNodes = 4;
  std::latch go(kNodes);
  std::vector<Result<std::unique_ptr<PostgresStore>>> opened;
  for (int i = 0; i < kNodes; ++i) opened.emplace_back(Status::Internal("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kNodes; ++i) {
    threads.emplace_back([&, i] {
      go.arrive_and_wait();
      opened[i] = Open(url_);
    });
  }
  for (std::thread& t : threads) t.join();
  // One node applies every migration; the others find nothing to do.
  const int latest = static_cast<int>(pg::SchemaMigrations().size());
  int applied = 0;
  for (const auto& s : opened) {
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    applied += (*s)->migrations_applied();
    EXPECT_EQ((*s)->schema_version(), latest);
  }
  EXPECT_EQ(applied, latest);
  // All of them give the same store's ids: one event is found through each.
  Result<AppendResult> r = opened[0]->get()->AppendEventSync(MakeEvent(clock_, random_, "x"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const auto& s : opened) {
    Result<std::optional<Event>> e = (*s)->GetEvent(r->id);
    ASSERT_TRUE(e.ok() && e->has_value()) << r->id;
  }
}

// Two stores on one database are two nodes: a claim by one is a lease the other sees and
// respects; concurrent claimers never take the same delivery (FOR UPDATE SKIP LOCKED).
TEST_F(PostgresStoreTest, TwoNodesShareLeasesAndNeverClaimTheSameDelivery) {
  std::unique_ptr<PostgresStore> a = OpenOk();
  std::unique_ptr<PostgresStore> b = OpenOk();
  ASSERT_TRUE(a && b);
  constexpr int kEvents = 300;
  std::set<std::string> ids;
  for (int i = 0; i < kEvents; ++i) {
    PostgresStore* s = i % 2 ? a.get() : b.get();
    Result<AppendResult> r = s->AppendEventSync(MakeEvent(clock_, random_, std::to_string(i)));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ids.insert(r->id);
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kEvents)) << "ids unique across nodes";

  std::mutex mu;
  std::multiset<int64_t> claimed;
  std::vector<std::thread> claimers;
  for (int t = 0; t < 4; ++t) {
    claimers.emplace_back([&, t] {
      PostgresStore* s = t % 2 ? a.get() : b.get();
      const std::string owner = "node-" + std::to_string(t);
      for (;;) {
        Result<std::vector<Delivery>> got = s->ClaimDue(clock_.Now(), 7, seconds(60), owner);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        if (got->empty()) return;
        std::lock_guard<std::mutex> lock(mu);
        for (const Delivery& d : *got) {
          EXPECT_EQ(d.lease_owner, owner);
          claimed.insert(d.id);
        }
      }
    });
  }
  for (std::thread& t : claimers) t.join();
  EXPECT_EQ(claimed.size(), static_cast<size_t>(kEvents));
  EXPECT_EQ(std::set<int64_t>(claimed.begin(), claimed.end()).size(), claimed.size())
      << "a delivery was claimed twice";

  // Node a sees node b's lease on a delivery, cannot report it, and takes it over once it expires.
  const std::string id = *ids.begin();
  Result<std::vector<Delivery>> ds = a->GetDeliveries(id);
  ASSERT_TRUE(ds.ok() && ds->size() == 1u);
  const Delivery d = (*ds)[0];
  EXPECT_EQ(d.status, DeliveryStatus::kDelivering);
  const std::string holder = d.lease_owner;
  Attempt attempt{d.id, 1, clock_.Now(), 3, 200, std::nullopt, std::nullopt, "ok"};
  EXPECT_EQ(
      a->RecordAttempt(attempt, {DeliveryStatus::kDelivered, clock_.Now()}, "someone-else").code(),
      Status::Code::kFailedPrecondition);
  clock_.Advance(seconds(61));
  Result<std::vector<Delivery>> taken = a->ClaimDue(clock_.Now(), kEvents, seconds(60), "late");
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken->size(), static_cast<size_t>(kEvents)) << "every expired lease is taken over";
  EXPECT_EQ(b->RecordAttempt(attempt, {DeliveryStatus::kDelivered, clock_.Now()}, holder).code(),
            Status::Code::kFailedPrecondition)
      << "the node that lost the lease records nothing";
  EXPECT_TRUE(b->RecordAttempt(attempt, {DeliveryStatus::kDelivered, clock_.Now()}, "late").ok());
}

// Ordered delivery with two nodes (docs/delivery.md, "Ordered delivery"): claimers on both take
// only the head of each key's queue, one at a time, and in the order received; keys proceed
// independently meanwhile.
TEST_F(PostgresStoreTest, TwoNodesSendOneHeadOfAnOrderedQueueAtATime) {
  std::unique_ptr<PostgresStore> a = OpenOk();
  std::unique_ptr<PostgresStore> b = OpenOk();
  ASSERT_TRUE(a && b);
  constexpr int kKeys = 3;
  constexpr int kPerKey = 30;
  std::map<std::string, std::pair<std::string, int>> seq_of;  // event id -> (key, index in key)
  for (int i = 0; i < kKeys * kPerKey; ++i) {
    NewEvent e = MakeEvent(clock_, random_, std::to_string(i));
    e.deliveries[0].order_key = "key-" + std::to_string(i % kKeys);
    Result<AppendResult> r = (i % 2 ? a : b)->AppendEventSync(std::move(e));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    seq_of[r->id] = {"key-" + std::to_string(i % kKeys), i / kKeys};
  }
  std::mutex mu;  // held while a result is recorded, so a claim's check sees it recorded
  std::map<std::string, int> recorded;  // per key: how many are delivered (the index due next)
  std::map<std::string, int> claimed;   // per key: how many were claimed
  int delivered = 0;
  std::vector<std::thread> claimers;
  for (int t = 0; t < 4; ++t) {
    claimers.emplace_back([&, t] {
      PostgresStore* s = t % 2 ? a.get() : b.get();
      const std::string owner = "node-" + std::to_string(t);
      for (int round = 0; round < 5000; ++round) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (delivered == kKeys * kPerKey) return;
        }
        Result<std::vector<Delivery>> got = s->ClaimDue(clock_.Now(), 10, seconds(60), owner);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        for (const Delivery& d : *got) {
          const auto& [key, index] = seq_of.at(d.event_id);
          std::lock_guard<std::mutex> lock(mu);
          // The one before it is recorded (not just claimed), and it is the next in order.
          EXPECT_EQ(index, recorded[key]) << key << ": claimed before the one ahead was done";
          EXPECT_EQ(claimed[key]++, index) << key << ": out of order or claimed twice";
        }
        for (const Delivery& d : *got) {
          const auto& [key, index] = seq_of.at(d.event_id);
          std::lock_guard<std::mutex> lock(mu);
          Attempt attempt{d.id, 1, clock_.Now(), 1, 200, std::nullopt, std::nullopt, "ok"};
          ASSERT_TRUE(
              s->RecordAttempt(attempt, {DeliveryStatus::kDelivered, clock_.Now()}, owner).ok());
          recorded[key] = index + 1;
          ++delivered;
        }
      }
    });
  }
  for (std::thread& t : claimers) t.join();
  EXPECT_EQ(delivered, kKeys * kPerKey);
  for (int k = 0; k < kKeys; ++k) EXPECT_EQ(recorded["key-" + std::to_string(k)], kPerKey);
}

// A claim reads about `limit` rows, not the whole due backlog, even while the table's statistics
// say it is empty (taken before a burst; autovacuum has not analysed it since): the planner then
// expected a handful of due rows and read every one of them (a bitmap scan) to sort them, on every
// claim (docs/postgres.md, "Claims and leases"). Counted by PostgreSQL's own statistics: the rows
// the claim fetched from the table.
TEST_F(PostgresStoreTest, AClaimReadsItsLimitNotTheWholeBacklogWhateverTheStatistics) {
  std::unique_ptr<PostgresStore> s = OpenOk();
  ASSERT_TRUE(s);
  ASSERT_EQ(cluster_->Exec(db_, "ALTER TABLE deliveries SET (autovacuum_enabled = off)"), "");
  ASSERT_EQ(cluster_->Exec(db_, "ANALYZE deliveries"), "");
  constexpr int kBacklog = 2000;
  for (int i = 0; i < kBacklog; ++i) {
    Result<AppendResult> r = s->AppendEventSync(MakeEvent(clock_, random_, std::to_string(i)));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  // (fetched, inserted, updated) rows of deliveries, as far as the server has counted them.
  auto counts = [&]() -> std::vector<int64_t> {
    std::vector<std::vector<std::string>> rows;
    const std::string err = cluster_->Query(
        db_,
        "SELECT coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0), n_tup_ins, n_tup_upd"
        " FROM pg_stat_user_tables WHERE relname = 'deliveries'",
        &rows);
    if (!err.empty() || rows.size() != 1) return {-1, -1, -1};
    return {std::stoll(rows[0][0]), std::stoll(rows[0][1]), std::stoll(rows[0][2])};
  };
  // Backends report their counts when idle, within seconds: wait until the appends are counted.
  ASSERT_TRUE(hookrelay::test::WaitFor([&] { return counts()[1] == kBacklog; }))
      << "the appends were never counted";
  const int64_t fetched_before = counts()[0];
  Result<std::vector<Delivery>> got = s->ClaimDue(clock_.Now(), 10, seconds(60), "node");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 10u);
  ASSERT_TRUE(hookrelay::test::WaitFor([&] { return counts()[2] >= 10; }))
      << "the claim was never counted";
  const int64_t fetched = counts()[0] - fetched_before;
  EXPECT_LT(fetched, 200) << "a claim of 10 read " << fetched << " rows of a backlog of "
                          << kBacklog;
}

// The server ends every connection (a restart, a failover, an administrator): the call that finds
// its connection gone answers kUnavailable; the store connects anew on the next call.
TEST_F(PostgresStoreTest, LostConnectionsAnswerUnavailableAndReconnect) {
  std::unique_ptr<PostgresStore> s = OpenOk();
  ASSERT_NE(s, nullptr);
  Result<AppendResult> first = s->AppendEventSync(MakeEvent(clock_, random_, "before"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(s->GetEvent(first->id).ok());
  ASSERT_EQ(cluster_->Exec(
                "postgres",
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = '" +
                    db_ + "'"),
            "");

  Result<std::optional<Event>> lost = s->GetEvent(first->id);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), Status::Code::kUnavailable) << lost.status().ToString();
  Result<std::optional<Event>> again = s->GetEvent(first->id);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->has_value());

  Result<AppendResult> append = s->AppendEventSync(MakeEvent(clock_, random_, "during"));
  ASSERT_FALSE(append.ok()) << "the writer's connection was ended too";
  EXPECT_EQ(append.status().code(), Status::Code::kUnavailable) << append.status().ToString();
  Result<AppendResult> after = s->AppendEventSync(MakeEvent(clock_, random_, "after"));
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_GT(after->id, first->id);
  Result<std::optional<Event>> stored = s->GetEvent(after->id);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->body, "after");
}

TEST_F(PostgresStoreTest, ConnectErrorsNameTheServerButNeverThePassword) {
  const std::string password = "s3cret-pw";
  // No server on that port.
  const std::string nowhere = "postgres://hookrelay:" + password + "@127.0.0.1:1/hookrelay";
  Result<std::unique_ptr<PostgresStore>> unreachable = Open(nowhere);
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(unreachable.status().message().find("postgres://127.0.0.1:1/hookrelay"),
            std::string::npos)
      << unreachable.status().message();
  EXPECT_EQ(unreachable.status().message().find(password), std::string::npos)
      << unreachable.status().message();
  // A server that answers and refuses (no such database): a retry would not help.
  std::string live = url_;
  live.replace(live.find("postgres@"), 9, "postgres:" + password + "@");
  live = live.substr(0, live.rfind('/')) + "/no_such_database";
  Result<std::unique_ptr<PostgresStore>> refused = Open(live);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kFailedPrecondition)
      << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("no_such_database"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(refused.status().message().find(password), std::string::npos)
      << refused.status().message();
  // A password libpq cannot decode (a bad %-escape): its message quotes the token as written.
  const std::string undecodable = "s3cret%zz-pw";
  Result<std::unique_ptr<PostgresStore>> bad =
      Open("postgres://hookrelay:" + undecodable + "@127.0.0.1:1/hookrelay");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("percent-encoded"), std::string::npos)
      << bad.status().message();
  EXPECT_EQ(bad.status().message().find("s3cret"), std::string::npos) << bad.status().message();
}

// Concurrent appends share transactions (group commit): fewer commits than appends, and every
// append's callback ran only once its batch committed (the event is readable when it runs).
TEST_F(PostgresStoreTest, ConcurrentAppendsAreGroupCommitted) {
  std::unique_ptr<PostgresStore> s = OpenOk();
  ASSERT_NE(s, nullptr);
  constexpr int kAppends = 400;
  std::latch done(kAppends);
  std::mutex mu;
  std::vector<std::string> ids;
  int failures = 0;
  for (int i = 0; i < kAppends; ++i) {
    s->AppendEvent(MakeEvent(clock_, random_, std::to_string(i)), [&](Result<AppendResult> r) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (r.ok()) {
          ids.push_back(r->id);
        } else {
          ++failures;
        }
      }
      done.count_down();
    });
  }
  done.wait();
  EXPECT_EQ(failures, 0);
  ASSERT_EQ(ids.size(), static_cast<size_t>(kAppends));
  const PostgresStore::WriterStats stats = s->writer_stats();
  EXPECT_EQ(stats.appends, kAppends);
  EXPECT_LT(stats.batches, kAppends) << "appends queued together share a commit";
  EXPECT_GT(stats.largest_batch, 1);
  Result<std::vector<std::optional<Event>>> events = s->GetEvents(ids);
  ASSERT_TRUE(events.ok());
  for (const auto& e : *events) EXPECT_TRUE(e.has_value());
}

// Two nodes append events with the same dedup key at the same moment: the key is stored once,
// and the other append answers as a duplicate of that one event (the appends take the event
// keys' row lock in turn, so the second one's dedup lookup sees the first one's event).
TEST_F(PostgresStoreTest, TwoNodesAppendingOneDedupKeyAtOnceStoreItOnce) {
  std::unique_ptr<PostgresStore> a = OpenOk();
  std::unique_ptr<PostgresStore> b = OpenOk();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // One key at a time, given to both nodes at once: their one-event batches run side by side.
  constexpr int kKeys = 100;
  int stored_twice = 0, answered_apart = 0, failures = 0;
  for (int k = 0; k < kKeys; ++k) {
    const std::string key = "evt_" + std::to_string(k);
    std::latch done(2);
    std::mutex mu;
    std::vector<AppendResult> results;
    for (PostgresStore* node : {a.get(), b.get()}) {
      NewEvent e = MakeEvent(clock_, random_, "{}", {"billing"});
      e.dedup_key = key;
      e.dedup_window = std::chrono::hours(1);
      node->AppendEvent(std::move(e), [&](Result<AppendResult> r) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (r.ok()) {
            results.push_back(*r);
          } else {
            ++failures;
          }
        }
        done.count_down();
      });
    }
    done.wait();
    if (results.size() != 2) continue;
    if (!results[0].duplicate && !results[1].duplicate) ++stored_twice;
    if (results[0].id != results[1].id) ++answered_apart;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(stored_twice, 0) << "keys stored by both nodes";
  EXPECT_EQ(answered_apart, 0) << "duplicates answered with another event's id";
  std::vector<std::vector<std::string>> rows;
  ASSERT_EQ(cluster_->Query(db_, "SELECT count(*) FROM events", &rows), "");
  EXPECT_EQ(rows.at(0).at(0), std::to_string(kKeys));
}

// The group commit's and RecordAttempts' round trips (PgConn::Pipeline, libpq's pipeline mode):
// every statement's rows come back in order, and a failure stops the statements after it, leaves
// the transaction to roll back, and keeps the connection usable.
TEST_F(PostgresStoreTest, PipelineReadsEveryResultAndStopsAtTheFirstFailure) {
  Result<std::unique_ptr<pg::PgConn>> connected = pg::PgConn::Connect(url_, "the test cluster");
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  pg::PgConn& db = **connected;
  auto statement = [](std::string sql, pg::PgParams params = pg::PgParams()) {
    return pg::PgStatement{std::move(sql), std::move(params), "statement"};
  };
  std::vector<pg::PgStatement> ok;
  ok.push_back(statement("BEGIN"));
  ok.push_back(statement("CREATE TABLE p (x integer PRIMARY KEY)"));
  ok.push_back(statement("INSERT INTO p VALUES (1) RETURNING x"));
  pg::PgParams forty_one;
  const std::string placeholder = forty_one.Int(41);
  ok.push_back(statement("SELECT " + placeholder + "::integer + 1", std::move(forty_one)));
  ok.push_back(statement("COMMIT"));
  Result<std::vector<pg::PgResult>> results = db.Pipeline(ok);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), ok.size());
  EXPECT_EQ((*results)[2].Int(0, 0), 1);
  EXPECT_EQ((*results)[3].Int(0, 0), 42);
  EXPECT_FALSE(db.InTransaction());

  std::vector<pg::PgStatement> failing;
  failing.push_back(statement("BEGIN"));
  failing.push_back(statement("INSERT INTO p VALUES (2)"));
  failing.push_back(statement("INSERT INTO p VALUES (1)"));  // a duplicate key
  failing.push_back(statement("INSERT INTO p VALUES (3)"));
  failing.push_back(statement("COMMIT"));
  size_t failed_at = 99;
  Result<std::vector<pg::PgResult>> failed = db.Pipeline(failing, &failed_at);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), Status::Code::kInternal) << failed.status().ToString();
  EXPECT_NE(failed.status().message().find("duplicate key"), std::string::npos)
      << failed.status().ToString();
  EXPECT_EQ(failed_at, 2u);
  EXPECT_FALSE(db.broken());
  EXPECT_TRUE(db.InTransaction()) << "the aborted transaction is the caller's to end";
  db.RollbackIfOpen();
  EXPECT_FALSE(db.InTransaction());
  Result<pg::PgResult> rows = db.Exec("SELECT count(*), max(x) FROM p", "count");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->Int(0, 0), 1) << "2 was rolled back and 3 never ran";
  EXPECT_EQ(rows->Int(0, 1), 1);
}

// Retention by time partitions (docs/postgres.md): the names of the day partitions of a table.
std::set<std::string> Partitions(const std::string& url, const std::string& parent) {
  Result<std::unique_ptr<pg::PgConn>> c = pg::PgConn::Connect(url, "test");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  if (!c.ok()) return {};
  pg::PgParams p;
  Result<pg::PgResult> r = (*c)->Exec(
      "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
      " WHERE i.inhparent = " +
          p.Text(parent) + "::regclass",
      p, "list partitions");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::set<std::string> out;
  if (r.ok()) {
    for (int i = 0; i < r->rows(); ++i) out.insert(r->Text(i, 0));
  }
  return out;
}

// Midnight UTC of the FakeClock's day plus `days`.
TimePoint DayStart(TimePoint t, int days) {
  constexpr int64_t kDay = 86'400'000;
  return FromUnixMillis((ToUnixMillis(t) / kDay + days) * kDay);
}

TEST_F(PostgresStoreTest, RetentionDropsWholeDaysButKeepsADayWithAnOpenDelivery) {
  // The FakeClock starts on 2023-11-14 at 22:13 UTC.
  const TimePoint day0 = DayStart(clock_.Now(), 0);
  std::unique_ptr<PostgresStore> s = OpenOk();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(Partitions(url_, "events"),
            (std::set<std::string>{"events_p20231114", "events_p20231115"}))
      << "today's and tomorrow's are made at open";

  auto append = [&]() {
    Result<AppendResult> r = s->AppendEventSync(MakeEvent(clock_, random_, "{}"));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->id : std::string();
  };
  // Day 0: `done` is delivered, `open` fails once and waits for its retry.
  const std::string done = append();
  const std::string open = append();
  std::vector<Delivery> claimed = *s->ClaimDue(clock_.Now(), 10, seconds(30), "n");
  ASSERT_EQ(claimed.size(), 2u);
  int64_t done_delivery = 0, open_delivery = 0;
  for (const Delivery& d : claimed) {
    const bool ok = d.event_id == done;
    (ok ? done_delivery : open_delivery) = d.id;
    ASSERT_TRUE(s->RecordAttempt(
                     {d.id, 1, clock_.Now(), 1, ok ? 200 : 500, std::nullopt, std::nullopt, "r"},
                     {ok ? DeliveryStatus::kDelivered : DeliveryStatus::kScheduled,
                      day0 + std::chrono::days(2)},
                     "n")
                    .ok());
  }
  // Day 1: one event, delivered.
  clock_.Set(day0 + std::chrono::days(1) + std::chrono::hours(3));
  const std::string day1 = append();
  claimed = *s->ClaimDue(clock_.Now(), 10, seconds(30), "n");
  ASSERT_EQ(claimed.size(), 1u);
  const int64_t day1_delivery = claimed[0].id;
  ASSERT_TRUE(
      s->RecordAttempt({day1_delivery, 1, clock_.Now(), 1, 200, std::nullopt, std::nullopt, "r"},
                       {DeliveryStatus::kDelivered, clock_.Now()}, "n")
          .ok());
  // Day 2: no partition was made ahead for it (no retention pass ran): the append makes it.
  clock_.Set(day0 + std::chrono::days(2) + std::chrono::hours(1));
  const std::string day2 = append();
  ASSERT_TRUE(s->GetEvent(day2)->has_value());
  EXPECT_EQ(Partitions(url_, "events"),
            (std::set<std::string>{"events_p20231114", "events_p20231115", "events_p20231116"}));
  EXPECT_EQ(
      Partitions(url_, "attempts"),
      (std::set<std::string>{"attempts_p20231114", "attempts_p20231115", "attempts_p20231116"}));

  // Everything before day 2 is past the cutoff. Day 1 goes whole; day 0 stays for its open
  // delivery, and its finished event goes row by row.
  const TimePoint cutoff = day0 + std::chrono::days(2);
  Result<int64_t> purged = s->PurgeEventsBefore(cutoff, 100);
  ASSERT_TRUE(purged.ok()) << purged.status().ToString();
  EXPECT_EQ(*purged, 2);
  EXPECT_EQ(Partitions(url_, "events"),
            (std::set<std::string>{"events_p20231114", "events_p20231116", "events_p20231117"}))
      << "day 1 dropped, day 0 kept, tomorrow made ahead";
  EXPECT_EQ(
      Partitions(url_, "attempts"),
      (std::set<std::string>{"attempts_p20231114", "attempts_p20231116", "attempts_p20231117"}));
  EXPECT_FALSE(s->GetEvent(day1)->has_value());
  EXPECT_TRUE(s->GetDeliveries(day1)->empty());
  EXPECT_TRUE(s->GetAttempts(day1_delivery)->empty());
  EXPECT_FALSE(s->GetEvent(done)->has_value());
  EXPECT_TRUE(s->GetAttempts(done_delivery)->empty());
  ASSERT_TRUE(s->GetEvent(open)->has_value());
  EXPECT_EQ(s->GetDeliveries(open)->size(), 1u);
  EXPECT_EQ(s->GetAttempts(open_delivery)->size(), 1u);
  EXPECT_EQ(*s->PurgeEventsBefore(cutoff, 100), 0) << "nothing more until the delivery ends";
  EXPECT_TRUE(Partitions(url_, "events").count("events_p20231114"));

  // The open delivery ends: its day goes whole at the next pass.
  claimed =
      *s->ClaimDue(day0 + std::chrono::days(2) + std::chrono::minutes(30), 10, seconds(30), "n");
  ASSERT_EQ(claimed.size(), 1u);
  ASSERT_EQ(claimed[0].id, open_delivery);
  ASSERT_TRUE(
      s->RecordAttempt({open_delivery, 2, clock_.Now(), 1, 200, std::nullopt, std::nullopt, "r"},
                       {DeliveryStatus::kDelivered, clock_.Now()}, "n")
          .ok());
  EXPECT_EQ(*s->PurgeEventsBefore(cutoff, 100), 1);
  EXPECT_EQ(Partitions(url_, "events"),
            (std::set<std::string>{"events_p20231116", "events_p20231117"}));
  EXPECT_EQ(Partitions(url_, "attempts"),
            (std::set<std::string>{"attempts_p20231116", "attempts_p20231117"}));
  EXPECT_FALSE(s->GetEvent(open)->has_value());
  EXPECT_TRUE(s->GetAttempts(open_delivery)->empty());
  // Day 2's event is untouched, and appends go on.
  EXPECT_TRUE(s->GetEvent(day2)->has_value());
  EXPECT_EQ(s->GetDeliveries(day2)->size(), 1u);
  EXPECT_FALSE(append().empty());
}

// A database at schema version 1, with events on two days, their deliveries and attempts, is
// converted by the partitioning migration: every row is there afterwards, in day partitions.
TEST_F(PostgresStoreTest, AVersionOneDatabaseIsConvertedWithItsRows) {
  const TimePoint t0 = clock_.Now();               // 2023-11-14 22:13 UTC
  const TimePoint t1 = t0 + std::chrono::days(3);  // 2023-11-17
  const int64_t k0 = EventKeyFloor(t0), k1 = EventKeyFloor(t1);
  uint64_t bits = 0;
  {
    Result<std::unique_ptr<pg::PgConn>> c = pg::PgConn::Connect(url_, "test");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    pg::PgConn& db = **c;
    Result<pg::MigrationResult> m =
        pg::ApplyMigrations(db, pg::SchemaMigrations().first(1), t0, "test");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    ASSERT_EQ(m->version, 1);
    for (const auto& [key, at] : {std::pair{k0, t0}, std::pair{k1, t1}}) {
      pg::PgParams p;
      const std::string sql = "INSERT INTO events VALUES (" + p.Int(key) + ", 'stripe', " +
                              p.Time(at) + ", " + p.Bytes("application/json") + ", 2, NULL, " +
                              p.Bytes(EncodeHeaders({{"Content-Type", "application/json"}})) +
                              ", " + p.Bytes("{}") + ")";
      ASSERT_TRUE(db.Exec(sql, p, "insert a version-1 event").ok());
      pg::PgParams q;
      const std::string d =
          "WITH d AS (INSERT INTO deliveries (event_id, destination, status, attempts,"
          " max_attempts, next_attempt_at, created_at, updated_at) VALUES (" +
          q.Int(key) + ", 'billing', 'delivered', 1, 5, " + q.Time(at) + ", " + q.Time(at) + ", " +
          q.Time(at) + ") RETURNING id) INSERT INTO attempts SELECT id, 1, " + q.Time(at) +
          ", 3, 200, NULL, NULL, " + q.Bytes("ok") + " FROM d";
      ASSERT_TRUE(db.Exec(d, q, "insert a version-1 delivery").ok());
    }
    pg::PgParams p;
    ASSERT_TRUE(
        db.Exec("UPDATE store_meta SET value = " + p.Int(k1) + " WHERE key = 'last_event_key'", p,
                "last key")
            .ok());
    Result<pg::PgResult> r =
        db.Exec("SELECT value FROM store_meta WHERE key = 'event_id_bits'", "bits");
    ASSERT_TRUE(r.ok());
    bits = static_cast<uint64_t>(r->Int(0, 0));
  }
  std::unique_ptr<PostgresStore> s = OpenOk();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->schema_version(), static_cast<int>(pg::SchemaMigrations().size()));
  EXPECT_EQ(s->migrations_applied(), s->schema_version() - 1);
  EXPECT_EQ(Partitions(url_, "events"),
            (std::set<std::string>{"events_p20231114", "events_p20231115", "events_p20231117"}))
      << "the days of the rows, and tomorrow's made at open";
  for (const int64_t key : {k0, k1}) {
    const std::string id = EventIdFromKey(key, bits);
    Result<std::optional<Event>> e = s->GetEvent(id);
    ASSERT_TRUE(e.ok() && e->has_value()) << id;
    EXPECT_EQ((*e)->body, "{}");
    std::vector<Delivery> ds = *s->GetDeliveries(id);
    ASSERT_EQ(ds.size(), 1u);
    EXPECT_EQ(ds[0].status, DeliveryStatus::kDelivered);
    std::vector<Attempt> as = *s->GetAttempts(ds[0].id);
    ASSERT_EQ(as.size(), 1u);
    EXPECT_EQ(as[0].response_snippet, "ok");
  }
  // Converted days are dropped like any other: day 0 once past the cutoff.
  Result<int64_t> purged = s->PurgeEventsBefore(DayStart(t0, 1), 100);
  ASSERT_TRUE(purged.ok()) << purged.status().ToString();
  EXPECT_EQ(*purged, 1);
  EXPECT_FALSE(s->GetEvent(EventIdFromKey(k0, bits))->has_value());
  EXPECT_TRUE(s->GetEvent(EventIdFromKey(k1, bits))->has_value());
  EXPECT_FALSE(Partitions(url_, "events").count("events_p20231114"));
  // New appends take keys after the converted ones.
  clock_.Set(t1 + seconds(1));
  Result<AppendResult> r = s->AppendEventSync(MakeEvent(clock_, random_, "new"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(*EventKeyFromId(r->id, bits), k1);
}

// A database of the schema before API tokens, with an audit entry, gains the api_tokens table at
// the next open, its rows kept.
TEST_F(PostgresStoreTest, ADatabaseFromBeforeTokensGainsTheirTableAndKeepsItsRows) {
  const std::span<const pg::Migration> all = pg::SchemaMigrations();
  const auto tokens = std::find_if(all.begin(), all.end(), [](const pg::Migration& m) {
    return std::string(m.sql).find("CREATE TABLE api_tokens") != std::string::npos;
  });
  ASSERT_NE(tokens, all.end());
  const size_t before = static_cast<size_t>(tokens - all.begin());
  {
    Result<std::unique_ptr<pg::PgConn>> c = pg::PgConn::Connect(url_, "test");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Result<pg::MigrationResult> m =
        pg::ApplyMigrations(**c, all.first(before), clock_.Now(), "test");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    ASSERT_EQ(m->version, tokens->version - 1);
    ASSERT_TRUE((*c)->Exec("INSERT INTO audit (at, actor, action, target, count, detail)"
                           " VALUES (1700000000000, 'token:ab12cd34', 'pause', 'crm', 1, '')",
                           "an audit entry")
                    .ok());
  }
  std::unique_ptr<PostgresStore> s = OpenOk();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->schema_version(), all.back().version);
  EXPECT_EQ(s->migrations_applied(), static_cast<int>(all.size() - before));
  Result<AuditPage> audit = s->ListAudit("", 10);
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  ASSERT_EQ(audit->items.size(), 1u);
  EXPECT_EQ(audit->items[0].target, "crm");
  ApiToken t{.name = "bootstrap", .role = "admin", .created_at = clock_.Now()};
  ASSERT_TRUE(s->CreateToken(t).ok());
  Result<std::vector<ApiToken>> listed = s->ListTokens();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(*listed, std::vector<ApiToken>{t});
}

}  // namespace
}  // namespace hookrelay::store
