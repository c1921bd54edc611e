// Black-box tests of durable ingest: the real `hookrelay serve` binary on 127.0.0.1, real HTTP
// clients, and afterwards the real SQLite store it wrote, read back through the Store API.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <boost/json.hpp>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "common/clock.h"
#include "common/crypto.h"
#include "integration/integration_util.h"
#include "store/store.h"
#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/integration_test.h"
#include "support/process.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using testing::HookrelayServer;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::RawConnection;
using testing::TempDir;

constexpr const char* kConfig = R"(
[server]
header_timeout = "500ms"
body_timeout = "1s"
max_header = "8KiB"

[[sources]]
name = "test"

[[sources]]
name = "small"
max_body = "1KiB"

[[sources]]
name = "gh"
verify = { scheme = "github", secrets = ["It's a Secret to Everybody"] }

[[sources]]
name = "keyed"
dedup = { header = "Idempotency-Key" }

[[sources]]
name = "jsonid"
dedup = { json = "id" }

[[destinations]]
name = "sink"
url = "http://127.0.0.1:9/hooks"
allow_private = true

[[destinations]]
name = "audit"
url = "http://127.0.0.1:9/audit"
allow_private = true
paused = true

[[routes]]
source = "test"
destination = "sink"

[[routes]]
source = "test"
destination = "audit"
)";

// What a test expects to find in the store afterwards.
struct Ledger {
  std::mutex mu;
  std::map<std::string, std::string> bodies;  // id → body
  void Add(const std::string& id, const std::string& body) {
    std::lock_guard lock(mu);
    bodies.emplace(id, body);
  }
};

std::string IdOf(const HttpResponse& r) {
  return std::string(json::parse(r.body).at("id").as_string());
}

using testing::OpenStoreAt;

void ExpectAllStored(const std::string& dir, const Ledger& ledger) {
  auto store = OpenStoreAt(dir);
  ASSERT_NE(store, nullptr);
  size_t missing = 0, different = 0;
  for (const auto& [id, body] : ledger.bodies) {
    auto e = store->GetEvent(id);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    if (!e->has_value()) {
      ++missing;
      continue;
    }
    if ((*e)->body != body) ++different;
  }
  EXPECT_EQ(missing, 0u) << "acknowledged events missing from the store";
  EXPECT_EQ(different, 0u) << "stored bodies differ from what was sent";
}

// A body that varies by (client, i): empty, binary with NULs, or UTF-8 JSON.
std::string BodyFor(int client, int i) {
  if (i % 50 == 0) return "";
  if (i % 7 == 0) {
    std::string b(64 + (client * 31 + i) % 300, '\0');
    for (size_t k = 0; k < b.size(); ++k)
      b[k] = static_cast<char>((client * 131 + i * 17 + k) & 0xff);
    return b;
  }
  return R"({"client":)" + std::to_string(client) + R"(,"i":)" + std::to_string(i) +
         R"(,"text":"héllo wörld ✓ )" + std::string((client + i) % 700, 'x') + "\"}";
}

// Clients that POST to /in/test until stopped (or until the server goes away), recording every
// acknowledged event in `ledger`.
class StreamingClients {
 public:
  StreamingClients(uint16_t port, int clients, Ledger& ledger) {
    for (int c = 0; c < clients; ++c) {
      threads_.emplace_back([this, port, c, &ledger] {
        try {
          HttpConnection conn(port, "127.0.0.1", std::chrono::seconds(5));
          for (int i = 0; !stop_.load(); ++i) {
            std::string body = BodyFor(c, i);
            HttpResponse r = conn.Send("POST", "/in/test", {}, body);
            if (r.status == 202) {
              ledger.Add(IdOf(r), body);
              accepted_++;
            }
            if (!r.keep_alive) break;
          }
        } catch (const std::exception&) {
          // The server stopped or died under us: expected.
        }
      });
    }
  }
  ~StreamingClients() { Join(); }
  bool WaitForAccepted(int n) {
    return test::WaitFor([&] { return accepted_.load() >= n; });
  }
  void Join() {
    stop_ = true;
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::vector<std::thread> threads_;
};

class IngestTest : public testing::IntegrationTest {
 protected:
  IngestTest() { admin_token_ = kToken; }
  void Start(std::vector<std::string> extra_args = {}) {
    StartServer(kConfig, std::move(extra_args));
  }
  uint16_t port() const { return server_->port(); }

  static constexpr const char* kToken = "test-admin-token-0123456789";
};

TEST_F(IngestTest, ManyConcurrentClientsAllStoredByteIdentical) {
  Start();
  constexpr int kClients = 64, kEach = 500;
  Ledger ledger;
  std::atomic<int> not_accepted{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      HttpConnection conn(port());
      for (int i = 0; i < kEach; ++i) {
        std::string body = BodyFor(c, i);
        HttpResponse r =
            conn.Send("POST", "/in/test", {{"Content-Type", "application/json"}}, body);
        if (r.status != 202) {
          not_accepted++;
          continue;
        }
        ledger.Add(IdOf(r), body);
      }
    });
  }
  for (auto& t : threads) t.join();
  // Three 5 MiB bodies (the default limit) on their own connections.
  for (int k = 0; k < 3; ++k) {
    std::string big(5 << 20, static_cast<char>('a' + k));
    big[12345] = '\0';
    HttpConnection conn(port());
    HttpResponse r = conn.Send("POST", "/in/test", {{"Content-Type", "text/plain"}}, big);
    ASSERT_EQ(r.status, 202) << r.body;
    ledger.Add(IdOf(r), big);
  }
  EXPECT_EQ(not_accepted.load(), 0);
  EXPECT_EQ(ledger.bodies.size(), static_cast<size_t>(kClients * kEach + 3))
      << "every 202 carries a distinct id";
  ASSERT_EQ(server_->Stop(), 0) << server_->output();
  ExpectAllStored(data_dir(), ledger);

  // The event keeps its headers (minus hop-by-hop) and gets one delivery per route; the paused
  // destination's delivery waits as paused.
  auto store = OpenStoreAt(data_dir());
  const std::string id = ledger.bodies.begin()->first;
  auto event = store->GetEvent(id);
  ASSERT_TRUE(event.ok() && event->has_value());
  EXPECT_EQ((*event)->source, "test");
  bool has_connection = false;
  for (const auto& h : (*event)->headers) has_connection |= h.name == "Connection";
  EXPECT_FALSE(has_connection);
  auto deliveries = store->GetDeliveries(id);
  ASSERT_TRUE(deliveries.ok());
  ASSERT_EQ(deliveries->size(), 2u);
  std::map<std::string, store::Delivery> by_dest;
  for (const auto& d : *deliveries) by_dest[d.destination] = d;
  ASSERT_EQ(by_dest.count("sink"), 1u);
  ASSERT_EQ(by_dest.count("audit"), 1u);
  // The delivery engine may have tried "sink" meanwhile (nothing listens there); the paused
  // destination's delivery was created paused and has spent no attempt.
  EXPECT_EQ(by_dest["sink"].max_attempts, 6);
  EXPECT_EQ(by_dest["sink"].chain, 0);
  EXPECT_EQ(by_dest["audit"].status, store::DeliveryStatus::kPaused);
  EXPECT_EQ(by_dest["audit"].attempts, 0);
}

TEST_F(IngestTest, KillDashNineLosesNoAcknowledgedEvent) {
  Start();
  Ledger ledger;
  StreamingClients clients(port(), 16, ledger);
  // Let a good number of events through, then crash the server mid-stream.
  ASSERT_TRUE(clients.WaitForAccepted(2000));
  server_->Kill();
  clients.Join();
  ASSERT_GE(ledger.bodies.size(), 2000u);

  // Restart on the same data: it recovers and serves again.
  Start();
  HttpConnection conn(port());
  EXPECT_EQ(conn.Send("GET", "/readyz").status, 200);
  HttpResponse r = conn.Send("POST", "/in/test", {}, "after restart");
  ASSERT_EQ(r.status, 202);
  ledger.Add(IdOf(r), "after restart");
  ASSERT_EQ(server_->Stop(), 0);
  ExpectAllStored(data_dir(), ledger);
}

TEST_F(IngestTest, SigtermFinishesInFlightAndExitsZero) {
  Start();
  Ledger ledger;
  StreamingClients clients(port(), 8, ledger);
  ASSERT_TRUE(clients.WaitForAccepted(500));
  EXPECT_EQ(server_->Stop(), 0) << server_->output();
  clients.Join();
  EXPECT_NE(server_->output().find("stopped"), std::string::npos) << server_->output();
  ExpectAllStored(data_dir(), ledger);
}

TEST_F(IngestTest, UnknownSourceAndWrongMethod) {
  Start();
  HttpConnection conn(port());
  HttpResponse r = conn.Send("POST", "/in/nope", {}, "{}");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(json::parse(r.body).at("error").at("code").as_string(), "not_found");
  EXPECT_NE(r.body.find("nope"), std::string::npos);
  HttpConnection conn2(port());
  r = conn2.Send("GET", "/in/test");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.Header("Allow"), "POST");
  HttpConnection conn3(port());
  EXPECT_EQ(conn3.Send("GET", "/nowhere").status, 404);
  EXPECT_EQ(conn3.Send("GET", "/healthz").status, 200);
  EXPECT_EQ(conn3.Send("POST", "/in/test", {}, "still fine").status, 202);
}

// A destination paused in the config file shows as paused in /metrics too (the gauge once said
// 0 for it: it read only the operator's pause).
TEST_F(IngestTest, ADestinationPausedInTheConfigIsPausedInMetrics) {
  Start();
  // The engine lists a destination once its scheduler has looked at it (just after start).
  HttpResponse r;
  auto shows = [&](const std::string& line) { return r.body.find(line) != std::string::npos; };
  const std::string audit = "hookrelay_destination_paused{destination=\"audit\"} 1\n";
  const std::string sink = "hookrelay_destination_paused{destination=\"sink\"} 0\n";
  EXPECT_TRUE(test::WaitFor([&] {
    r = HttpConnection(port()).Send("GET", "/metrics");
    return r.status == 200 && shows(audit) && shows(sink);
  })) << r.body;
}

TEST_F(IngestTest, OversizeBodiesAre413AndNothingIsStored) {
  Start();
  {
    HttpConnection conn(port());
    HttpResponse r = conn.Send("POST", "/in/small", {}, std::string(2048, 'x'));
    EXPECT_EQ(r.status, 413);
    EXPECT_NE(r.body.find("1KiB"), std::string::npos) << r.body;
  }
  {
    HttpConnection conn(port());
    EXPECT_EQ(conn.Send("POST", "/in/small", {}, std::string(1024, 'x')).status, 202);
  }
  {
    HttpConnection conn(port());
    EXPECT_EQ(conn.Send("POST", "/in/test", {}, std::string((5 << 20) + 1, 'x')).status, 413);
  }
  HttpConnection conn(port());
  EXPECT_EQ(conn.Send("POST", "/in/test", {}, "ok").status, 202);
  ASSERT_EQ(server_->Stop(), 0);
  auto store = OpenStoreAt(data_dir());
  auto page = store->ListEvents({}, "", 100);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->items.size(), 2u) << "only the two accepted events are stored";
}

TEST_F(IngestTest, OversizeHeadersMalformedAndSlowClients) {
  Start();
  // Headers past max_header (8 KiB) → 431.
  {
    HttpConnection conn(port());
    HttpResponse r = conn.Send("POST", "/in/test", {{"X-Big", std::string(10000, 'h')}}, "{}");
    EXPECT_EQ(r.status, 431);
  }
  // Not HTTP at all → 400.
  EXPECT_NE(testing::SendRaw(port(), "GARBAGE\r\n\r\n").find(" 400 "), std::string::npos);
  EXPECT_NE(testing::SendRaw(port(), "POST /in/test HTTP/1.1\r\nContent-Length: abc\r\n\r\n")
                .find(" 400 "),
            std::string::npos);
  // A client trickling its headers is dropped once header_timeout (500ms) passes.
  {
    RawConnection slow(port());
    ASSERT_TRUE(slow.Write("POST /in/test HTTP/1.1\r\nHost: x\r\n"));
    std::string got = slow.ReadUntilClose(std::chrono::seconds(5));
    EXPECT_TRUE(slow.closed());
    EXPECT_TRUE(got.empty() || got.find(" 408 ") != std::string::npos) << got;
  }
  // A body that never completes is dropped once body_timeout (1s) passes, and not stored.
  {
    RawConnection slow(port());
    ASSERT_TRUE(slow.Write("POST /in/test HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"));
    slow.ReadUntilClose(std::chrono::seconds(5));
    EXPECT_TRUE(slow.closed());
  }
  // The server kept serving through all of it.
  HttpConnection conn(port());
  EXPECT_EQ(conn.Send("POST", "/in/test", {}, "fine").status, 202);
  ASSERT_EQ(server_->Stop(), 0);
  auto store = OpenStoreAt(data_dir());
  EXPECT_EQ(store->ListEvents({}, "", 100)->items.size(), 1u);
}

TEST_F(IngestTest, SignaturesAreVerified) {
  Start();
  HttpConnection conn(port());
  const std::string good =
      "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
  EXPECT_EQ(conn.Send("POST", "/in/gh", {{"X-Hub-Signature-256", good}}, "Hello, World!").status,
            202);
  HttpResponse bad = conn.Send("POST", "/in/gh", {{"X-Hub-Signature-256", good}}, "Hello, World?");
  EXPECT_EQ(bad.status, 401);
  EXPECT_EQ(json::parse(bad.body).at("error").at("code").as_string(), "unauthenticated");
  EXPECT_EQ(bad.body.find("Secret"), std::string::npos) << "never echo the secret";
  HttpResponse missing = conn.Send("POST", "/in/gh", {}, "Hello, World!");
  EXPECT_EQ(missing.status, 401);
  EXPECT_NE(missing.body.find("X-Hub-Signature-256"), std::string::npos);
  EXPECT_EQ(server_->output().find("Secret to Everybody"), std::string::npos);
}

TEST_F(IngestTest, DedupByHeaderAndJsonField) {
  Start();
  HttpConnection conn(port());
  HttpResponse a = conn.Send("POST", "/in/keyed", {{"Idempotency-Key", "k1"}}, "first");
  HttpResponse b = conn.Send("POST", "/in/keyed", {{"Idempotency-Key", "k1"}}, "second try");
  HttpResponse c = conn.Send("POST", "/in/keyed", {{"Idempotency-Key", "k2"}}, "other");
  ASSERT_EQ(a.status, 202);
  ASSERT_EQ(b.status, 202);
  EXPECT_EQ(IdOf(a), IdOf(b));
  EXPECT_TRUE(json::parse(b.body).at("duplicate").as_bool());
  EXPECT_NE(IdOf(a), IdOf(c));
  HttpResponse j1 = conn.Send("POST", "/in/jsonid", {}, R"({"id":"evt_1","n":1})");
  HttpResponse j2 = conn.Send("POST", "/in/jsonid", {}, R"({"n":2,"id":"evt_1"})");
  HttpResponse j3 = conn.Send("POST", "/in/jsonid", {}, R"({"id":"evt_2"})");
  EXPECT_EQ(IdOf(j1), IdOf(j2));
  EXPECT_NE(IdOf(j1), IdOf(j3));
  ASSERT_EQ(server_->Stop(), 0);
  auto store = OpenStoreAt(data_dir());
  auto first = store->GetEvent(IdOf(a));
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_EQ((*first)->body, "first") << "the first arrival is the one kept";
}

// Dedup by a JSON field tells values of different types, and numbers of different text, apart.
TEST_F(IngestTest, DedupByJsonFieldComparesTypeAndExactText) {
  Start();
  HttpConnection conn(port());
  const std::pair<std::string, std::string> pairs[] = {
      {R"({"id":true})", R"({"id":"true"})"},
      {R"({"id":1})", R"({"id":"1"})"},
      {R"({"id":1e999})", "{\"id\":" + std::string(400, '9') + "}"},
      {R"({"id":0.1})", R"({"id":0.10000000000000001})"},
  };
  for (const auto& [a, b] : pairs) {
    HttpResponse ra = conn.Send("POST", "/in/jsonid", {}, a);
    HttpResponse rb = conn.Send("POST", "/in/jsonid", {}, b);
    ASSERT_EQ(ra.status, 202) << ra.body;
    ASSERT_EQ(rb.status, 202) << rb.body;
    EXPECT_NE(IdOf(ra), IdOf(rb)) << a << " and " << b << ": " << rb.body;
    EXPECT_FALSE(json::parse(rb.body).as_object().contains("duplicate")) << rb.body;
    // The same value again is a duplicate.
    HttpResponse again = conn.Send("POST", "/in/jsonid", {}, b);
    EXPECT_EQ(IdOf(again), IdOf(rb)) << b;
  }
}

// Any sender may put bytes that are not UTF-8 in a header value. The event is stored and forwarded
// with the bytes as they came, and the API and CLI still answer valid JSON (the bytes shown as
// Latin-1).
TEST_F(IngestTest, HeaderBytesThatAreNotUtf8KeepTheEventReadable) {
  Start();
  const std::string bad[] = {"caf\xff", "a\xc0\xaf", "x\x80y", "e\xe2\x82"};
  std::vector<std::string> ids;
  for (const std::string& value : bad) {
    std::string reply =
        testing::SendRaw(port(), "POST /in/test HTTP/1.1\r\nHost: x\r\nXa: " + value +
                                     "\r\nContent-Length: 1\r\n"
                                     "Connection: close\r\n\r\nA");
    ASSERT_NE(reply.find(" 202 "), std::string::npos) << reply;
    const size_t body = reply.find("\r\n\r\n");
    ASSERT_NE(body, std::string::npos);
    ids.push_back(std::string(json::parse(reply.substr(body + 4)).at("id").as_string()));
  }
  HttpConnection conn(port());
  for (size_t i = 0; i < ids.size(); ++i) {
    HttpResponse r = conn.Send("GET", "/api/v1/events/" + ids[i],
                               {{"Authorization", std::string("Bearer ") + kToken}}, "");
    ASSERT_EQ(r.status, 200) << r.body;
    boost::system::error_code ec;
    json::value v = json::parse(r.body, ec);
    ASSERT_FALSE(ec) << "not valid JSON: " << r.body;
    bool found = false;
    for (const json::value& h : v.at("headers").as_array()) {
      if (h.at(0).as_string() == "Xa") found = true;
    }
    EXPECT_TRUE(found) << r.body;
    testing::RunResult show = testing::RunProgram(
        {HOOKRELAY_BINARY, "events", "show", ids[i]}, {}, std::chrono::seconds(30),
        {{"HOOKRELAY_URL", server_->url()}, {"HOOKRELAY_TOKEN", kToken}});
    EXPECT_EQ(show.exit_code, 0) << show.err;
  }
  HttpResponse list =
      conn.Send("GET", "/api/v1/events", {{"Authorization", std::string("Bearer ") + kToken}}, "");
  boost::system::error_code ec;
  json::parse(list.body, ec);
  EXPECT_FALSE(ec) << list.body;
  ASSERT_EQ(server_->Stop(), 0);
  // Stored as received: the original bytes are what a destination gets.
  auto store = OpenStoreAt(data_dir());
  auto first = store->GetEvent(ids[0]);
  ASSERT_TRUE(first.ok() && first->has_value());
  bool raw = false;
  for (const store::Header& h : (*first)->headers) {
    if (h.name == "Xa") raw = h.value == "caf\xff";
  }
  EXPECT_TRUE(raw);
}

// A full disk, made real by SQLite's max_page_count: 503 (never 202), the server keeps serving,
// and everything acknowledged before is intact.
TEST_F(IngestTest, FullDiskAnswers503AndLosesNothing) {
  Start({"--sqlite-max-page-count", "80"});
  Ledger ledger;
  HttpConnection conn(port());
  HttpResponse r;
  int accepted = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string body(1000, static_cast<char>('a' + i % 26));
    r = conn.Send("POST", "/in/test", {}, body);
    if (r.status != 202) break;
    ledger.Add(IdOf(r), body);
    ++accepted;
  }
  ASSERT_EQ(r.status, 503) << "the store should fill up well before 2000 events";
  EXPECT_GT(accepted, 0);
  auto err = json::parse(r.body).at("error");
  EXPECT_EQ(err.at("code").as_string(), "resource_exhausted") << r.body;
  // The sender is told to retry, without the store's internals (its path).
  EXPECT_EQ(err.at("message").as_string(),
            "the event was not stored (the store is full), retry later");
  EXPECT_EQ(r.body.find(data_dir()), std::string::npos) << r.body;
  EXPECT_FALSE(r.Header("Retry-After").empty());
  // Still serving: health, and further ingest keeps answering 503 rather than crashing.
  HttpConnection other(port());
  EXPECT_EQ(other.Send("GET", "/healthz").status, 200);
  EXPECT_EQ(other.Send("POST", "/in/test", {}, std::string(1000, 'z')).status, 503);
  ASSERT_EQ(server_->Stop(), 0) << server_->output();
  ExpectAllStored(data_dir(), ledger);
}

TEST(ServeTest, BadConfigExitsTwoNamingFileLineAndField) {
  TempDir dir;
  const std::string path = dir.path() + "/bad.toml";
  testing::WriteFile(path,
                     "[[destinations]]\nname = \"a\"\nurl = \"http://x\"\n"
                     "policy = { base = \"1m\", cap = \"30s\" }\n");
  auto r = testing::RunProgram({HOOKRELAY_BINARY, "serve", "--config", path, "--data",
                                dir.path() + "/d", "--listen", "127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(path + ":4: destinations[0].policy.cap"), std::string::npos) << r.err;
}

TEST(ServeTest, AddressInUseExitsOne) {
  TempDir dir;
  HookrelayServer first({"", dir.path() + "/a", {}, {}});
  ASSERT_TRUE(first.ok());
  auto r = testing::RunProgram({HOOKRELAY_BINARY, "serve", "--data", dir.path() + "/b", "--listen",
                                "127.0.0.1:" + std::to_string(first.port())});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot listen"), std::string::npos) << r.err;
}

TEST(ServeTest, AdminTokenPrintedOnceAndStoredHashed) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  std::string token;
  {
    HookrelayServer s({"", data, {}, {}});
    ASSERT_TRUE(s.ok()) << s.output();
    const std::string out = s.output();
    const std::string marker = "only its hash is stored): ";
    size_t at = out.find(marker);
    ASSERT_NE(at, std::string::npos) << out;
    token = out.substr(at + marker.size(), out.find('\n', at) - at - marker.size());
    EXPECT_GE(token.size(), 32u);
    EXPECT_EQ(s.Stop(), 0);
  }
  const std::string stored = testing::ReadFile(data + "/admin-token.sha256");
  EXPECT_EQ(stored.find(token), std::string::npos) << "the token itself is never stored";
  EXPECT_NE(stored.find(HexEncode(Sha256(token))), std::string::npos);
  HookrelayServer again({"", data, {}, {}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.output().find(token), std::string::npos) << "shown once only";
}

}  // namespace
}  // namespace hookrelay
