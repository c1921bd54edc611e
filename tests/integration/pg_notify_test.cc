// Several nodes on one PostgreSQL (issue 15): what one node changes reaches the others at once.
// In process (several PostgresStore, CatalogService and DeliveryEngine instances on one private
// cluster): LISTEN/NOTIFY reports other nodes' changes and not a node's own, reconnects by
// itself; a stale catalog change is refused; an idle engine is woken by work another node
// stored (measured with and without the notification); /readyz's reason. With real `hookrelay
// serve` processes: a destination and route created through node A deliver through node B
// within a second; an event stored through a busy node is delivered by an idle one long before
// the idle one's poll; a bulk replay started on one node is sent by all three.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "catalog/catalog_service.h"
#include "common/clock.h"
#include "common/random.h"
#include "conformance/store_test_util.h"
#include "delivery/engine.h"
#include "delivery/kinds/http/http_sender.h"
#include "model/registry.h"
#include "store/open_store.h"
#include "store/postgres/pg_listener.h"
#include "store/postgres/postgres_store.h"
#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/pg_cluster.h"
#include "support/process.h"
#include "support/sink.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using hookrelay::testing::HookrelayServer;
using hookrelay::testing::HttpConnection;
using hookrelay::testing::HttpResponse;
using hookrelay::testing::PgCluster;
using hookrelay::testing::Sink;
using hookrelay::testing::SinkResponse;
using hookrelay::testing::TempDir;
using store::Store;

using Steady = std::chrono::steady_clock;

double Ms(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Counts the changes a Watch reports, by kind.
struct Watched {
  std::atomic<int> work{0}, catalog{0}, replays{0};
  Store::ChangeCallback Callback() {
    return [this](Store::Change c) {
      switch (c) {
        case Store::Change::kNewWork: ++work; break;
        case Store::Change::kCatalog: ++catalog; break;
        case Store::Change::kReplayJobs: ++replays; break;
      }
    };
  }
};

class PgNotifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    cluster_ = hookrelay::testing::SharedPgCluster(&error);
    ASSERT_NE(cluster_, nullptr) << error;
    url_ = cluster_->CreateDatabase(&error);
    ASSERT_FALSE(url_.empty()) << error;
    db_ = url_.substr(url_.rfind('/') + 1);
  }

  std::unique_ptr<store::PostgresStore> Open(const std::string& url, const Clock& clock) {
    Result<store::StoreAddress> address = store::ParseStoreAddress(url);
    EXPECT_TRUE(address.ok());
    if (!address.ok()) return nullptr;
    auto s = store::PostgresStore::Open({.url = url, .display = address->display}, clock);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::unique_ptr<store::PostgresStore> Open() { return Open(url_, clock_); }

  PgCluster* cluster_ = nullptr;
  std::string url_;
  std::string db_;
  FakeClock clock_;
  SeededRandom random_{11};
};

store::CatalogObject Object(store::CatalogKind kind, const std::string& name,
                            const std::string& spec) {
  store::CatalogObject o;
  o.kind = kind;
  o.name = name;
  o.spec = spec;
  o.origin = "api";
  return o;
}

TEST_F(PgNotifyTest, WatchReportsOtherNodesChangesButNotItsOwn) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a && b);
  Watched seen;
  b->Watch(seen.Callback());
  // Every kind once when it starts listening (what was sent before is not known).
  ASSERT_TRUE(test::WaitFor([&] { return seen.work > 0 && seen.catalog > 0 && seen.replays > 0; }));
  seen.work = seen.catalog = seen.replays = 0;

  // b's own new work is not reported to b; notifications arrive in commit order, so once a's
  // later catalog change is seen, b's own append would have been seen too.
  ASSERT_TRUE(b->AppendEventSync(store::test::MakeEvent(clock_, random_, "{}", {"d"})).ok());
  store::CatalogChange change;
  change.put = {Object(store::CatalogKind::kSource, "s", R"({"name":"s"})")};
  ASSERT_TRUE(a->ApplyCatalogChange(change).ok());
  ASSERT_TRUE(test::WaitFor([&] { return seen.catalog == 1; }));
  EXPECT_EQ(seen.work, 0) << "its own append";

  // a's event with a due delivery: reported; measured from the commit's return.
  auto t0 = Steady::now();
  auto appended = a->AppendEventSync(store::test::MakeEvent(clock_, random_, "{}", {"d"}));
  ASSERT_TRUE(appended.ok());
  ASSERT_TRUE(test::WaitFor([&] { return seen.work == 1; }));
  std::cout << "[ measured ] another node's append reported after " << Ms(Steady::now() - t0)
            << " ms\n";
  // A replay, a resume: reported.
  ASSERT_TRUE(a->CreateReplay(appended->id, "d", 3, clock_.Now()).ok());
  ASSERT_TRUE(test::WaitFor([&] { return seen.work == 2; }));
  ASSERT_TRUE(a->PauseDeliveries("d", "test").ok());
  auto resumed = a->ResumeDeliveries("d", clock_.Now());
  ASSERT_TRUE(resumed.ok());
  ASSERT_GT(*resumed, 0);
  ASSERT_TRUE(test::WaitFor([&] { return seen.work == 3; }));
  // An event without a due delivery (nothing routed) wakes nobody.
  ASSERT_TRUE(a->AppendEventSync(store::test::MakeEvent(clock_, random_, "{}", {})).ok());
  // A replay job queued, then cancelled.
  store::ReplayJob job;
  job.id = "01JOB";
  job.created_at = clock_.Now();
  job.filter = "{}";
  job.rate = 10;
  ASSERT_TRUE(a->CreateReplayJob(job).ok());
  ASSERT_TRUE(test::WaitFor([&] { return seen.replays == 1; }));
  ASSERT_TRUE(a->CancelReplayJob(job.id, clock_.Now()).ok());
  ASSERT_TRUE(test::WaitFor([&] { return seen.replays == 2; }));
  EXPECT_EQ(seen.work, 3) << "the event without deliveries woke nobody";
  EXPECT_EQ(seen.catalog, 1);
}

TEST_F(PgNotifyTest, ALostListenConnectionReconnectsByItselfAndReportsEverything) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a && b);
  Watched seen;
  b->Watch(seen.Callback());
  ASSERT_TRUE(test::WaitFor([&] { return seen.catalog == 1; }));
  ASSERT_TRUE(b->CheckReady().ok());
  // An administrator (or a failover) ends every connection of the database.
  ASSERT_EQ(cluster_->Exec("postgres",
                           "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE "
                           "datname = '" +
                               db_ + "' AND pid <> pg_backend_pid()"),
            "");
  // Back, and says so: every kind is reported again (what was sent meanwhile is lost).
  ASSERT_TRUE(test::WaitFor([&] { return seen.catalog == 2 && seen.work == 2; }));
  store::CatalogChange change;
  change.put = {Object(store::CatalogKind::kSource, "s", R"({"name":"s"})")};
  ASSERT_TRUE(a->ApplyCatalogChange(change).ok() || a->ApplyCatalogChange(change).ok());
  ASSERT_TRUE(test::WaitFor([&] { return seen.catalog >= 3; }));
  EXPECT_TRUE(b->CheckReady().ok());
}

TEST(PublicFailureReasonTest, NamesTheKindOfFailureOnly) {
  using store::pg::PublicFailureReason;
  EXPECT_EQ(PublicFailureReason("cannot connect to PostgreSQL at postgres://db:5432/x: connection "
                                "to server at \"10.0.0.5\", port 5432 failed: Connection refused"),
            "PostgreSQL is unreachable (connection refused)");
  EXPECT_EQ(PublicFailureReason("FATAL:  password authentication failed for user \"hr\""),
            "PostgreSQL refused the connection (authentication)");
  EXPECT_EQ(PublicFailureReason("FATAL:  database \"hookrelay\" does not exist"),
            "PostgreSQL refused the connection (no such database)");
  EXPECT_EQ(PublicFailureReason("timeout expired"),
            "PostgreSQL is unreachable (the connection timed out)");
  EXPECT_EQ(PublicFailureReason("FATAL:  the database system is shutting down"),
            "PostgreSQL is restarting, shutting down or recovering");
  EXPECT_EQ(PublicFailureReason("PostgreSQL at postgres://db:5432/x: connection lost"),
            "the connection to PostgreSQL was lost");
  EXPECT_EQ(PublicFailureReason("FATAL:  sorry, too many clients already"),
            "PostgreSQL has no free connection slot");
  EXPECT_EQ(PublicFailureReason("something else at 10.1.2.3"), "PostgreSQL does not answer");
}

// pg_ctl as the cluster's owner (the postgres user when this process is root).
hookrelay::testing::RunResult PgCtl(const PgCluster& c, std::vector<std::string> args) {
  std::vector<std::string> argv;
  if (geteuid() == 0) argv = {"/usr/sbin/runuser", "-u", "postgres", "--"};
  argv.push_back(c.bin_dir() + "/pg_ctl");
  for (std::string& a : args) argv.push_back(std::move(a));
  return hookrelay::testing::RunProgram(argv, {}, 90s, {{"LC_ALL", "C"}});
}

// Stops a private cluster, and starts it again as PgCluster started it (same port and socket
// directory: the data directory's parent).
void StopCluster(const PgCluster& c) {
  auto r = PgCtl(c, {"stop", "-w", "-t", "60", "-m", "fast", "-D", c.data_dir()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
}
void StartCluster(const PgCluster& c) {
  const std::string dir = std::filesystem::path(c.data_dir()).parent_path().string();
  auto r =
      PgCtl(c, {"start", "-w", "-t", "60", "-D", c.data_dir(), "-l", dir + "/postgres.log", "-o",
                "-p " + std::to_string(c.port()) + " -k " + dir +
                    " -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
}

// /readyz's reason: says what kind of failure, never the server's address, user or password;
// when PostgreSQL is back the store answers again without being reopened.
TEST_F(PgNotifyTest, CheckReadySaysWhyWithoutTheAddressAndRecovers) {
  std::string error;
  std::unique_ptr<PgCluster> own = PgCluster::Start({}, &error);
  ASSERT_NE(own, nullptr) << error;
  std::string url = own->CreateDatabase(&error);
  ASSERT_FALSE(url.empty()) << error;
  // A password in the URL (trust authentication ignores it): it must never show.
  url.replace(url.find("postgres@"), 9, "postgres:pw-s3cret@");
  auto s = Open(url, SystemClock::Instance());
  ASSERT_NE(s, nullptr);
  Watched seen;
  s->Watch(seen.Callback());
  ASSERT_TRUE(test::WaitFor([&] { return seen.catalog == 1; }));
  ASSERT_TRUE(s->CheckReady().ok());

  StopCluster(*own);
  Status down;
  ASSERT_TRUE(test::WaitFor([&] { return !(down = s->CheckReady()).ok(); }));
  EXPECT_EQ(down.code(), Status::Code::kUnavailable);
  const std::string& m = down.message();
  EXPECT_TRUE(m.find("PostgreSQL is unreachable (connection refused)") != std::string::npos ||
              m.find("restarting, shutting down") != std::string::npos ||
              m.find("connection to PostgreSQL was lost") != std::string::npos)
      << m;
  for (const std::string& secret :
       {std::string("127.0.0.1"), std::to_string(own->port()), std::string("pw-s3cret"),
        std::string("postgres://"), std::string("postgres@")}) {
    EXPECT_EQ(m.find(secret), std::string::npos) << secret << " in " << m;
  }
  // Once the listener has retried, the reason is the refused connection.
  ASSERT_TRUE(test::WaitFor(
      [&] { return s->CheckReady().message().find("connection refused") != std::string::npos; }));

  StartCluster(*own);
  ASSERT_TRUE(test::WaitFor([&] { return s->CheckReady().ok(); }));
  ASSERT_TRUE(test::WaitFor([&] { return seen.catalog == 2; })) << "listening again";
  EXPECT_TRUE(s->AppendEventSync(store::test::MakeEvent(clock_, random_, "{}", {"d"})).ok() ||
              s->AppendEventSync(store::test::MakeEvent(clock_, random_, "{}", {"d"})).ok());
}

// Two CatalogServices are two nodes: a destination and a route created through A are installed
// on B within a second, by the notification (B's poll is set to a minute here), then by the poll
// alone.
TEST_F(PgNotifyTest, ACatalogChangeThroughOneNodeIsInstalledOnAnotherWithinASecond) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a && b);
  model::Registry reg_a, reg_b;
  std::atomic<int> b_changes{0};
  catalog::CatalogService cat_a(*a, reg_a, clock_);
  catalog::CatalogService cat_b(*b, reg_b, clock_, [&] { ++b_changes; });
  ASSERT_TRUE(cat_a.Load(std::nullopt).ok());
  ASSERT_TRUE(cat_b.Load(std::nullopt).ok());
  b->Watch([&](Store::Change c) {
    if (c == Store::Change::kCatalog) cat_b.Notify();
  });
  cat_b.Start(60s);
  ASSERT_TRUE(
      cat_a.Create(store::CatalogKind::kSource, json::parse(R"({"name":"src"})"), "t").ok());
  const auto t0 = Steady::now();
  ASSERT_TRUE(cat_a
                  .Create(store::CatalogKind::kDestination,
                          json::parse(R"({"name":"d","url":"https://d.example/h"})"), "t")
                  .ok());
  ASSERT_TRUE(cat_a
                  .Create(store::CatalogKind::kRoute,
                          json::parse(R"({"source":"src","destination":"d"})"), "t")
                  .ok());
  ASSERT_TRUE(test::WaitFor([&] { return reg_b.Get()->DestinationsOf("src").size() == 1; }, 1s));
  std::cout << "[ measured ] catalog change installed on the other node after "
            << Ms(Steady::now() - t0) << " ms (notification)\n";
  EXPECT_GE(b_changes, 1) << "B's engine is woken for the new destination";
  EXPECT_EQ(cat_b.version(), cat_a.version());

  // Paused through A: B sees it paused.
  ASSERT_TRUE(
      cat_a.Update(store::CatalogKind::kDestination, "d", json::parse(R"({"paused":true})"), "t")
          .ok());
  ASSERT_TRUE(test::WaitFor([&] { return reg_b.Get()->FindDestination("d")->paused; }, 1s));

  // Without notifications, the poll (every 200 ms here) finds the new version.
  cat_b.Stop();
  auto c = Open();
  model::Registry reg_c;
  catalog::CatalogService cat_c(*c, reg_c, clock_);
  ASSERT_TRUE(cat_c.Load(std::nullopt).ok());
  cat_c.Start(200ms);
  ASSERT_TRUE(cat_a.Remove(store::CatalogKind::kRoute, "src:d", "t").ok());
  ASSERT_TRUE(test::WaitFor([&] { return reg_c.Get()->routes.empty(); }, 1s));
}

// A node that validated a change against a catalog another node has changed since is refused;
// it reloads, and the retry is checked against what the other node wrote.
TEST_F(PgNotifyTest, AChangeAgainstAStaleCatalogIsRefusedAndTheNodeReloads) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a && b);
  model::Registry reg_a, reg_b;
  catalog::CatalogService cat_a(*a, reg_a, clock_);
  catalog::CatalogService cat_b(*b, reg_b, clock_);
  ASSERT_TRUE(cat_a.Load(std::nullopt).ok());
  ASSERT_TRUE(cat_b.Load(std::nullopt).ok());
  const json::value body = json::parse(R"({"name":"d","url":"https://a.example/h"})");
  ASSERT_TRUE(cat_a.Create(store::CatalogKind::kDestination, body, "a").ok());
  // B has not reloaded (not started): its create of the same name is refused, nothing written.
  auto refused = cat_b.Create(store::CatalogKind::kDestination,
                              json::parse(R"({"name":"d","url":"https://b.example/h"})"), "b");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kUnavailable) << refused.status().ToString();
  ASSERT_NE(reg_b.Get()->FindDestination("d"), nullptr) << "B reloaded";
  EXPECT_EQ(reg_b.Get()->FindDestination("d")->url, "https://a.example/h");
  auto again = cat_b.Create(store::CatalogKind::kDestination,
                            json::parse(R"({"name":"d","url":"https://b.example/h"})"), "b");
  EXPECT_EQ(again.status().code(), Status::Code::kAlreadyExists);
  auto stored = a->ListCatalog();
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_NE((*stored)[0].spec.find("a.example"), std::string::npos);
}

// Node A stores an event (its own engine is absent); node B's engine, idle with a long poll, is
// woken by the notification. Measured: 202-to-sink with the notification (poll 30 s) and without
// it (B polls every second, as serve does by default).
TEST_F(PgNotifyTest, AnIdleEngineIsWokenByWorkAnotherNodeStored) {
  Sink sink;
  const Clock& clock = SystemClock::Instance();
  auto a = Open(url_, clock);
  ASSERT_NE(a, nullptr);
  model::Destination d;
  d.name = "d";
  d.url = sink.url("/hook");
  d.allow_private = true;
  model::Registry registry;
  {
    model::Catalog catalog;
    catalog.destinations.emplace(d.name, d);
    ASSERT_TRUE(registry.Replace(std::move(catalog)).ok());
  }
  delivery::HttpSender::Options sender_options;
  sender_options.allow_private_destinations = true;

  // Returns the delays (ms) of `n` events appended through A, one at a time, until the sink had
  // each, with node B's engine polling every `poll`, watching A's notifications or not.
  auto measure = [&](Duration poll, bool watch, int n) {
    std::vector<double> delays;
    auto b = Open(url_, clock);
    if (!b) return delays;
    delivery::HttpSender sender(sender_options, clock);
    delivery::EngineOptions options;
    options.node_id = watch ? "b-watching" : "b-polling";
    options.poll_interval = poll;
    // A claim that found nothing: the engine is idle until its next poll (or a wake).
    std::atomic<int> empty_claims{0};
    options.on_claim = [&](const std::string&, TimePoint, int got) {
      if (got == 0) ++empty_claims;
    };
    delivery::DeliveryEngine engine(*b, registry, sender, nullptr, clock, SystemRandom::Instance(),
                                    options);
    std::atomic<int> connected{0};
    if (watch) {
      b->Watch([&](Store::Change c) {
        if (c == Store::Change::kNewWork) {
          ++connected;
          engine.Wake();
        }
      });
      EXPECT_TRUE(test::WaitFor([&] { return connected > 0; }));
    }
    engine.Start();
    for (int i = 0; i < n; ++i) {
      const size_t before = sink.RequestCount();
      // B has looked since the last delivery and found nothing: it is idle.
      const int empties = empty_claims;
      EXPECT_TRUE(test::WaitFor([&] { return empty_claims > empties; }, 40s, 1ms));
      const auto t0 = Steady::now();
      auto r = a->AppendEventSync(store::test::MakeEvent(clock, random_, "{}", {"d"}));
      EXPECT_TRUE(r.ok());
      EXPECT_TRUE(test::WaitFor([&] { return sink.RequestCount() > before; }, 40s, 1ms));
      delays.push_back(Ms(Steady::now() - t0));
    }
    engine.Stop(5s);
    return delays;
  };
  auto summary = [](const std::vector<double>& v) {
    std::ostringstream out;
    double sum = 0, max = 0;
    for (double x : v) {
      sum += x;
      max = std::max(max, x);
    }
    out << "mean " << (v.empty() ? 0 : sum / v.size()) << " ms, max " << max << " ms over "
        << v.size();
    return out.str();
  };
  const std::vector<double> notified = measure(30s, true, 10);
  ASSERT_EQ(notified.size(), 10u);
  for (double ms : notified) EXPECT_LT(ms, 5000) << "long before B's 30 s poll";
  const std::vector<double> polled = measure(1s, false, 5);
  std::cout << "[ measured ] 202 on node A to the sink, delivered by node B: with NOTIFY (B polls "
               "every 30 s) "
            << summary(notified) << "; without (B polls every 1 s) " << summary(polled) << "\n";
}

// --- Real `hookrelay serve` processes -----------------------------------------------------------

const std::string kToken = "pg-notify-test-token-0123456789abcdef";

class ServeNodesTest : public PgNotifyTest {
 protected:
  // A node on the test's database: one source `src` from the config file, poll_interval `poll`.
  std::unique_ptr<HookrelayServer> StartNode(const std::string& poll = "30s") {
    const std::string dir = dir_.path() + "/node" + std::to_string(nodes_++);
    HookrelayServer::Options o;
    o.data_dir = dir;
    o.config_toml = "[delivery]\npoll_interval = \"" + poll +
                    "\"\nlease_margin = \"2s\"\n\n[[sources]]\nname = \"src\"\n";
    o.extra_args = {"--store", url_};
    o.env = {{"HOOKRELAY_TOKEN", kToken}};
    auto s = std::make_unique<HookrelayServer>(o);
    EXPECT_TRUE(s->ok()) << s->output();
    return s;
  }
  static HttpResponse Api(const HookrelayServer& node, const std::string& method,
                          const std::string& path, const std::string& body = "") {
    HttpConnection conn(node.port());
    testing::HeaderList headers = {{"Authorization", "Bearer " + kToken}};
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    return conn.Send(method, path, headers, body);
  }
  static HttpResponse Post(const HookrelayServer& node, const std::string& body) {
    HttpConnection conn(node.port());
    return conn.Send("POST", "/in/src", {{"Content-Type", "application/json"}}, body);
  }
  static int64_t Metric(const HookrelayServer& node, const std::string& name) {
    HttpConnection conn(node.port());
    HttpResponse r = conn.Send("GET", "/metrics");
    std::smatch m;
    if (std::regex_search(r.body, m, std::regex("\n" + name + " ([0-9]+)"))) {
      return std::stoll(m[1]);
    }
    return -1;
  }
  std::string Destination(const std::string& name, const std::string& url,
                          const std::string& extra = "") {
    return R"({"name":")" + name + R"(","url":")" + url + R"(","allow_private":true)" + extra + "}";
  }

  TempDir dir_;
  int nodes_ = 0;
  Sink sink_;
};

TEST_F(ServeNodesTest, ADestinationCreatedThroughOneNodeDeliversThroughAnotherWithinASecond) {
  auto a = StartNode();
  auto b = StartNode();
  ASSERT_TRUE(a->ok() && b->ok());
  ASSERT_EQ(Api(*a, "POST", "/api/v1/destinations", Destination("d", sink_.url("/hook"))).status,
            201);
  const auto t0 = Steady::now();
  ASSERT_EQ(Api(*a, "POST", "/api/v1/routes", R"({"source":"src","destination":"d"})").status, 201);
  // B's registry has the route within a second: an event posted to B goes to the sink.
  ASSERT_TRUE(
      test::WaitFor([&] { return Api(*b, "GET", "/api/v1/routes/src:d").status == 200; }, 1s));
  std::cout << "[ measured ] route created through A visible through B's API after "
            << Ms(Steady::now() - t0) << " ms\n";
  ASSERT_EQ(Post(*b, R"({"n":1})").status, 202);
  ASSERT_TRUE(sink_.WaitForRequests(1, 20s)) << b->output();
  EXPECT_EQ(sink_.Requests()[0].body, R"({"n":1})");

  // Changed through B (its URL), seen by A.
  ASSERT_EQ(
      Api(*b, "PATCH", "/api/v1/destinations/d", R"({"url":")" + sink_.url("/moved") + R"("})")
          .status,
      200);
  ASSERT_TRUE(test::WaitFor(
      [&] {
        return Api(*a, "GET", "/api/v1/destinations/d").body.find("/moved") != std::string::npos;
      },
      1s));
  // Paused through A: B says so within a second.
  ASSERT_EQ(Api(*a, "PATCH", "/api/v1/destinations/d", R"({"paused":true})").status, 200);
  ASSERT_TRUE(test::WaitFor(
      [&] {
        return Api(*b, "GET", "/api/v1/destinations/d").body.find(R"("paused":true)") !=
               std::string::npos;
      },
      1s));
  EXPECT_EQ(a->Stop(), 0);
  EXPECT_EQ(b->Stop(), 0);
}

// The node that stored the event is busy (its only slot for the destination is held by a slow
// request); the other node, polling every 30 s, is woken by the notification and delivers it.
TEST_F(ServeNodesTest, AnEventStoredThroughABusyNodeIsDeliveredByAnIdleOneAtOnce) {
  auto a = StartNode("30s");
  auto b = StartNode("30s");
  ASSERT_TRUE(a->ok() && b->ok());
  ASSERT_EQ(Api(*a, "POST", "/api/v1/destinations",
                Destination("d", sink_.url("/hook"), R"(,"max_concurrency":1)"))
                .status,
            201);
  ASSERT_EQ(Api(*a, "POST", "/api/v1/routes", R"({"source":"src","destination":"d"})").status, 201);
  ASSERT_TRUE(test::WaitFor([&] { return Api(*b, "GET", "/api/v1/routes/src:d").status == 200; }));
  // The first request hangs for 15 s at the sink: whichever node sent it is busy.
  sink_.Enqueue(SinkResponse::Status(200).WithDelay(15s));
  ASSERT_EQ(Post(*a, R"({"n":1})").status, 202);
  ASSERT_TRUE(sink_.WaitForRequests(1, 20s));
  // Which node holds it: the delivery's lease owner is that node's id.
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::string id;
    in >> id;
    return id;
  };
  const std::string id_a = read(dir_.path() + "/node0/node-id");
  std::string owner;
  ASSERT_TRUE(test::WaitFor([&] {
    return cluster_->Exec(db_,
                          "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM deliveries WHERE status = "
                          "'delivering' AND lease_owner = '" +
                              id_a + "') THEN RAISE EXCEPTION 'b'; END IF; END $$") == "" ||
           cluster_->Exec(db_,
                          "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM deliveries WHERE status = "
                          "'delivering' AND lease_owner <> '" +
                              id_a + "') THEN RAISE EXCEPTION 'a'; END IF; END $$") == "";
  }));
  const bool a_busy =
      cluster_->Exec(db_,
                     "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM deliveries WHERE status = "
                     "'delivering' AND lease_owner = '" +
                         id_a + "') THEN RAISE EXCEPTION 'b'; END IF; END $$") == "";
  HookrelayServer& busy = a_busy ? *a : *b;
  // Stored through the busy node: only the other one can send it before 15 s.
  const auto t0 = Steady::now();
  ASSERT_EQ(Post(busy, R"({"n":2})").status, 202);
  ASSERT_TRUE(sink_.WaitForRequests(2, 20s));
  const double ms = Ms(Steady::now() - t0);
  std::cout << "[ measured ] event stored through the busy node " << (a_busy ? "A" : "B")
            << " delivered by the idle one after " << ms << " ms (its poll: 30 s)\n";
  EXPECT_LT(ms, 5000) << "woken by the notification, not by its 30 s poll or the 15 s hang";
  EXPECT_EQ(sink_.Requests()[1].body, R"({"n":2})");
  a->Kill();
  b->Kill();
}

// A bulk replay created through node A: the job is walked by the node that claims it, and the
// chains it creates are claimed and sent by all three nodes.
TEST_F(ServeNodesTest, ABulkReplayStartedOnOneNodeIsSentByAllThree) {
  std::vector<std::unique_ptr<HookrelayServer>> nodes;
  for (int i = 0; i < 3; ++i) nodes.push_back(StartNode("30s"));
  for (auto& n : nodes) ASSERT_TRUE(n->ok());
  ASSERT_EQ(
      Api(*nodes[0], "POST", "/api/v1/destinations", Destination("d", sink_.url("/hook"))).status,
      201);
  ASSERT_EQ(
      Api(*nodes[0], "POST", "/api/v1/routes", R"({"source":"src","destination":"d"})").status,
      201);
  for (auto& n : nodes) {
    ASSERT_TRUE(
        test::WaitFor([&] { return Api(*n, "GET", "/api/v1/routes/src:d").status == 200; }));
  }
  constexpr int kEvents = 150;
  for (int i = 0; i < kEvents; ++i) {
    ASSERT_EQ(Post(*nodes[i % 3], "{\"n\":" + std::to_string(i) + "}").status, 202);
  }
  ASSERT_TRUE(sink_.WaitForRequests(kEvents, 30s));
  std::vector<int64_t> before;
  for (auto& n : nodes) {
    ASSERT_TRUE(test::WaitFor([&] {
      return cluster_->Exec(db_,
                            "DO $$ BEGIN IF (SELECT count(*) FROM deliveries WHERE status <> "
                            "'delivered') > 0 THEN RAISE EXCEPTION 'open'; END IF; END $$") == "";
    }));
    before.push_back(Metric(*n, "hookrelay_deliveries_delivered_total"));
  }
  HttpResponse job =
      Api(*nodes[0], "POST", "/api/v1/replays", R"({"status":"delivered","rate":"300/s"})");
  ASSERT_EQ(job.status, 202) << job.body;
  ASSERT_TRUE(sink_.WaitForRequests(2 * kEvents, 30s));
  std::vector<int64_t> sent;
  int64_t total = 0;
  ASSERT_TRUE(test::WaitFor([&] {
    sent.clear();
    total = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      sent.push_back(Metric(*nodes[i], "hookrelay_deliveries_delivered_total") - before[i]);
      total += sent.back();
    }
    return total == kEvents;
  }));
  std::cout << "[ measured ] bulk replay of " << kEvents
            << " events at 300/s, sent by node A/B/C: " << sent[0] << "/" << sent[1] << "/"
            << sent[2] << "\n";
  for (size_t i = 0; i < sent.size(); ++i) EXPECT_GT(sent[i], 0) << "node " << i;
  for (auto& n : nodes) EXPECT_EQ(n->Stop(), 0);
}

// /readyz of a real node: PostgreSQL stopped makes it 503 with a reason that names no address
// or credential (the details are in the log); when PostgreSQL is back, the node is ready and
// stores again without a restart.
TEST_F(ServeNodesTest, ReadyzSaysWhyPostgresIsUnreachableAndRecovers) {
  std::string error;
  std::unique_ptr<PgCluster> own = PgCluster::Start({}, &error);
  ASSERT_NE(own, nullptr) << error;
  url_ = own->CreateDatabase(&error);
  ASSERT_FALSE(url_.empty()) << error;
  url_.replace(url_.find("postgres@"), 9, "postgres:pw-s3cret@");
  auto node = StartNode("1s");
  ASSERT_TRUE(node->ok());
  auto readyz = [&] {
    HttpConnection conn(node->port());
    return conn.Send("GET", "/readyz");
  };
  ASSERT_EQ(readyz().status, 200);
  StopCluster(*own);
  HttpResponse r;
  ASSERT_TRUE(test::WaitFor([&] {
    r = readyz();
    return r.status == 503 && r.body.find("connection refused") != std::string::npos;
  })) << r.status
      << " " << r.body;
  EXPECT_NE(r.body.find("store: PostgreSQL is unreachable (connection refused)"), std::string::npos)
      << r.body;
  for (const std::string& secret : {std::string("127.0.0.1"), std::to_string(own->port()),
                                    std::string("pw-s3cret"), std::string("postgres@")}) {
    EXPECT_EQ(r.body.find(secret), std::string::npos) << secret << " in " << r.body;
  }
  EXPECT_NE(Post(*node, "{}").status, 202);
  // The log has the details (the server, never the password).
  EXPECT_NE(node->output().find("readiness: not ready"), std::string::npos) << node->output();
  EXPECT_EQ(node->output().find("pw-s3cret"), std::string::npos);

  StartCluster(*own);
  ASSERT_TRUE(test::WaitFor([&] { return readyz().status == 200; }));
  ASSERT_TRUE(test::WaitFor([&] { return Post(*node, "{}").status == 202; }));
  EXPECT_EQ(node->Stop(), 0);
}

}  // namespace
}  // namespace hookrelay
