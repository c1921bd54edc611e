// Ordered delivery (docs/delivery.md, "Ordered delivery"), black-box: the real `hookrelay serve`
// binary delivering to a real sink on 127.0.0.1 that records the arrival order and fails some
// attempts; the store the server wrote is read back afterwards.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <map>
#include <string>
#include <vector>

#include "integration/integration_util.h"
#include "store/store.h"
#include "support/config_builder.h"
#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/integration_test.h"
#include "support/pg_cluster.h"
#include "support/sink.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using testing::HookrelayServer;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::Sink;
using testing::SinkRequest;
using testing::SinkResponse;
using testing::TempDir;

// A retry policy for ordered tests: exponential without jitter.
testing::TomlValue Policy(const char* base, const char* cap, int max_attempts,
                          const char* max_duration) {
  return testing::TomlInline({{"strategy", "exponential"},
                              {"jitter", "none"},
                              {"base", base},
                              {"cap", cap},
                              {"max_attempts", max_attempts},
                              {"max_duration", max_duration},
                              {"timeout", "2s"}});
}

const testing::TomlValue kFast = Policy("50ms", "100ms", 4, "1m");

// One source "src" routed to destination "d" (`fields`: how it orders, and its policy when not
// kFast).
testing::Config Config(const Sink& sink, testing::TomlFields fields) {
  bool has_policy = false;
  for (const auto& kv : fields) has_policy = has_policy || kv.first == "policy";
  if (!has_policy) fields.emplace_back("policy", kFast);
  fields.insert(fields.begin(), {"max_concurrency", 16});
  testing::Config config;
  config.Set("delivery.lease_margin", "1s")
      .Set("delivery.poll_interval", "100ms")
      .Source("src")
      .Destination("d", sink.url("/hooks"), std::move(fields))
      .Route("src", "d");
  return config;
}

testing::TomlValue Json(const char* field) { return testing::TomlInline({{"json", field}}); }

class OrderedDeliveryTest : public testing::IntegrationTest {
 protected:
  OrderedDeliveryTest() { admin_token_ = "test-admin-token-0123"; }
  void Start(const std::string& config, std::vector<std::string> args = {}) {
    StartServer(config, std::move(args));
  }
  std::string Ingest(const std::string& body, const testing::HeaderList& headers = {}) {
    HttpConnection conn(server_->port());
    HttpResponse r = conn.Send("POST", "/in/src", headers, body);
    EXPECT_EQ(r.status, 202) << r.body;
    return r.status == 202 ? std::string(json::parse(r.body).at("id").as_string()) : "";
  }
  json::value DestinationJson() {
    HttpConnection api(server_->port());
    HttpResponse r = api.Send("GET", "/api/v1/destinations/d",
                              {{"Authorization", "Bearer test-admin-token-0123"}});
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? json::parse(r.body) : json::value();
  }
  json::value EventJson(const std::string& id) {
    HttpConnection api(server_->port());
    HttpResponse r = api.Send("GET", "/api/v1/events/" + id,
                              {{"Authorization", "Bearer test-admin-token-0123"}});
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? json::parse(r.body) : json::value();
  }
  // The "n" of each request's JSON body, in arrival order; and by "k" when `key` is set.
  std::vector<int64_t> Arrivals(const std::string& key = "") {
    std::vector<int64_t> out;
    for (const SinkRequest& r : sink_.Requests()) {
      const json::object o = json::parse(r.body).as_object();
      if (!key.empty() && o.at("k").as_string() != key) continue;
      out.push_back(o.at("n").as_int64());
    }
    return out;
  }
  static bool NonDecreasing(const std::vector<int64_t>& v) {
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i] < v[i - 1]) return false;
    }
    return true;
  }
  static std::string Body(int n, const std::string& k = "a") {
    return R"({"n":)" + std::to_string(n) + R"(,"k":")" + k + R"("})";
  }
};

// The first event fails twice before it is delivered: none of the 19 behind it arrives before it
// does, although 16 requests may be out at once.
TEST_F(OrderedDeliveryTest, WholeDestinationOrderIsKeptThroughRetries) {
  sink_.Enqueue(SinkResponse::Status(500));
  sink_.Enqueue(SinkResponse::Status(503));
  sink_.SetDefault(SinkResponse::Status(200).WithDelay(5ms));
  Start(Config(sink_, {{"ordered", true}}));
  for (int n = 0; n < 20; ++n) Ingest(Body(n));
  ASSERT_TRUE(sink_.WaitForRequests(22, 20s)) << sink_.RequestCount();
  std::vector<int64_t> arrivals = Arrivals();
  std::vector<int64_t> want = {0, 0, 0};
  for (int n = 1; n < 20; ++n) want.push_back(n);
  EXPECT_EQ(arrivals, want);
}

// Per key: each key's events arrive in order while the keys interleave, and a key whose head is
// retrying does not hold up the others.
TEST_F(OrderedDeliveryTest, PerKeyOrderIsKeptWhileKeysInterleave) {
  sink_.Enqueue(SinkResponse::Status(500).WithDelay(20ms));  // the first request: key a's first
  sink_.SetDefault(SinkResponse::Status(200).WithDelay(20ms));
  Start(Config(sink_, {{"order_key", Json("k")}}));
  const std::vector<std::string> keys = {"a", "b", "c"};
  for (int n = 0; n < 10; ++n) {
    for (const std::string& k : keys) Ingest(Body(n, k));
  }
  ASSERT_TRUE(sink_.WaitForRequests(31, 20s)) << sink_.RequestCount();
  for (const std::string& k : keys) {
    std::vector<int64_t> a = Arrivals(k);
    EXPECT_TRUE(NonDecreasing(a)) << k << ": " << ::testing::PrintToString(a);
    EXPECT_EQ(a.back(), 9) << k;
  }
  // Interleaved: b went on while a (held up by its retry) was not done.
  std::vector<std::string> order;
  for (const SinkRequest& r : sink_.Requests()) {
    order.push_back(std::string(json::parse(r.body).at("k").as_string()));
  }
  size_t first_b = std::find(order.begin(), order.end(), "b") - order.begin();
  size_t last_a = std::find(order.rbegin(), order.rend(), "a").base() - order.begin() - 1;
  EXPECT_LT(first_b, last_a) << ::testing::PrintToString(order);
}

// A permanently failing event is skipped once it has failed for good (visibly: failed, with its
// reason), and the events behind it follow in order.
TEST_F(OrderedDeliveryTest, APermanentlyFailingEventIsSkippedAndTheRestFollow) {
  for (int i = 0; i < 4; ++i) sink_.Enqueue(SinkResponse::Status(500));  // max_attempts = 4
  Start(Config(sink_, {{"order_key", testing::TomlInline({{"header", "X-Key"}})}}));
  std::vector<std::string> ids;
  for (int n = 0; n < 5; ++n) ids.push_back(Ingest(Body(n), {{"X-Key", "shop-1"}}));
  ASSERT_TRUE(sink_.WaitForRequests(8, 20s)) << sink_.RequestCount();
  EXPECT_EQ(Arrivals(), (std::vector<int64_t>{0, 0, 0, 0, 1, 2, 3, 4}));
  ASSERT_TRUE(test::WaitFor(
      [&] {
        const json::value e = EventJson(ids[4]);
        return e.is_object() &&
               e.at("deliveries").as_array()[0].at("status").as_string() == "delivered";
      },
      10s, 20ms));
  const json::value failed = EventJson(ids[0]);
  const json::value& d = failed.at("deliveries").as_array()[0];
  EXPECT_EQ(d.at("status").as_string(), "failed");
  EXPECT_EQ(d.at("order_key").as_string(), "shop-1");
}

// A restart while the head is retrying: after it, the head is still first, the rest follow.
TEST_F(OrderedDeliveryTest, ARestartMidSequenceKeepsTheOrder) {
  sink_.SetDefault(SinkResponse::Status(500));
  const std::string config =
      Config(sink_, {{"ordered", true}, {"policy", Policy("50ms", "100ms", 100, "1h")}});
  Start(config);
  std::vector<std::string> ids;
  for (int n = 0; n < 8; ++n) ids.push_back(Ingest(Body(n)));
  ASSERT_TRUE(sink_.WaitForRequests(3, 20s));
  // While it is stuck, the event detail says what the others wait for.
  const json::value held = EventJson(ids[3]);
  const json::value& hd = held.at("deliveries").as_array()[0];
  ASSERT_TRUE(hd.at("held_behind").is_object()) << json::serialize(held);
  EXPECT_EQ(hd.at("held_behind").at("event").as_string(), ids[0]);
  EXPECT_EQ(server_->Stop(), 0) << server_->output();
  sink_.SetDefault(SinkResponse::Status(200));
  const size_t before = sink_.RequestCount();
  Start(config);
  ASSERT_TRUE(sink_.WaitForRequests(before + 8, 20s)) << sink_.RequestCount();
  std::vector<int64_t> arrivals = Arrivals();
  EXPECT_TRUE(NonDecreasing(arrivals)) << ::testing::PrintToString(arrivals);
  std::vector<int64_t> after(arrivals.begin() + static_cast<ptrdiff_t>(before), arrivals.end());
  EXPECT_EQ(after, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(server_->Stop(), 0) << server_->output();
}

// The destination's detail lists the queues held behind a retrying head, longest waiting first,
// with the head (its event, attempt, reason), how many wait and since when; a queue of one event
// holds nothing and is not listed; once the endpoint recovers the list is empty.
TEST_F(OrderedDeliveryTest, TheDestinationListsTheQueuesHeldBehindTheirHead) {
  sink_.SetDefault(SinkResponse::Status(503));
  Start(Config(sink_, {{"order_key", testing::TomlInline({{"header", "X-Key"}})},
                       {"policy", Policy("200ms", "200ms", 100, "1h")}}));
  std::map<std::string, std::vector<std::string>> ids;
  for (const std::string k : {"a", "a", "a", "b", "b", "c"}) {
    ids[k].push_back(Ingest(Body(static_cast<int>(ids[k].size()), k), {{"X-Key", k}}));
  }
  json::value view;
  ASSERT_TRUE(test::WaitFor(
      [&] {
        view = DestinationJson();
        if (!view.is_object()) return false;
        const json::array& q = view.at("held").at("queues").as_array();
        return q.size() == 2 && q[0].at("head").at("attempt").as_int64() >= 1 &&
               q[1].at("head").at("attempt").as_int64() >= 1;
      },
      20s, 20ms))
      << json::serialize(view);
  const json::object& held = view.at("held").as_object();
  EXPECT_EQ(held.at("total").as_int64(), 2);
  const json::object& a = held.at("queues").as_array()[0].as_object();
  EXPECT_EQ(a.at("order_key").as_string(), "a");
  EXPECT_EQ(a.at("waiting").as_int64(), 2);
  EXPECT_EQ(a.at("head").at("event").as_string(), ids["a"][0]);
  EXPECT_NE(a.at("head").at("reason").as_string().find("503"), std::string::npos)
      << json::serialize(a);
  const json::object& b = held.at("queues").as_array()[1].as_object();
  EXPECT_EQ(b.at("order_key").as_string(), "b");
  EXPECT_EQ(b.at("waiting").as_int64(), 1);
  EXPECT_EQ(b.at("head").at("event").as_string(), ids["b"][0]);
  // Since when: a's second event, received before b's second.
  EXPECT_LE(std::string(a.at("waiting_since").as_string()),
            std::string(b.at("waiting_since").as_string()));
  EXPECT_EQ(DestinationJson().at("held").at("queues").as_array().size(), 2u);

  sink_.SetDefault(SinkResponse::Status(200));
  ASSERT_TRUE(test::WaitFor(
      [&] {
        view = DestinationJson();
        return view.is_object() && view.at("held").at("total").as_int64() == 0 &&
               view.at("held").at("queues").as_array().empty();
      },
      20s, 20ms))
      << json::serialize(view);
}

// A key is whatever the webhook carries: bytes that are not UTF-8, a NUL, control characters, or
// 5,000 characters, which PostgreSQL's text column and B-tree index refuse. Such a key is stored
// as "sha256:" and its hash (the same value, the same queue), on PostgreSQL as on SQLite: every
// event is accepted, kept in order per key, and shown with its key. A 5,000-character dedup key
// is kept as its hash too, and still finds its duplicate.
TEST_F(OrderedDeliveryTest, KeysNoIndexCanHoldAreStoredAsTheirHashOnPostgres) {
  std::string error;
  testing::PgCluster* cluster = testing::SharedPgCluster(&error);
  ASSERT_NE(cluster, nullptr) << error;
  const std::string url = cluster->CreateDatabase(&error);
  ASSERT_FALSE(url.empty()) << error;
  sink_.SetDefault(SinkResponse::Status(200));
  // And a source whose dedup key (a header) may be as long.
  Start(Config(sink_, {{"order_key", Json("k")}})
            .Source("dd", {{"dedup", testing::TomlInline({{"header", "X-Id"}})}})
            .Route("dd", "d"),
        {"--store", url});
  std::string long_key;  // 5,000 characters that do not compress (an index entry holds ~2,700)
  for (uint32_t x = 12345; long_key.size() < 5000;) {
    x = x * 1103515245u + 12345u;
    long_key += "abcdefghijklmnopqrstuvwxyz0123456789"[(x >> 16) % 36];
  }
  const std::vector<std::string> bodies = {R"({"n":0,"k":"a\u0000b"})",
                                           R"({"n":1,"k":")" + long_key + R"("})",
                                           R"({"n":2,"k":"\u001b[2J"})",
                                           R"({"n":3,"k":"a\u0000b"})",
                                           R"({"n":4,"k":")" + long_key + R"("})",
                                           R"({"n":5,"k":"caf\u00e9"})"};
  std::vector<std::string> ids;
  for (const std::string& b : bodies) ids.push_back(Ingest(b));
  ASSERT_TRUE(sink_.WaitForRequests(bodies.size(), 20s)) << server_->output();
  auto key_of = [&](const std::string& id) {
    const json::value e = EventJson(id);
    const json::value& k = e.at("deliveries").as_array()[0].at("order_key");
    return k.is_string() ? std::string(k.as_string()) : std::string("(null)");
  };
  const std::string nul_key = key_of(ids[0]);
  EXPECT_EQ(nul_key.rfind("sha256:", 0), 0u) << nul_key;
  EXPECT_EQ(nul_key.size(), 7u + 64u) << nul_key;
  EXPECT_EQ(key_of(ids[3]), nul_key);  // the same value, the same queue
  EXPECT_EQ(key_of(ids[1]).rfind("sha256:", 0), 0u);
  EXPECT_EQ(key_of(ids[4]), key_of(ids[1]));
  EXPECT_NE(key_of(ids[1]), nul_key);
  EXPECT_EQ(key_of(ids[2]).rfind("sha256:", 0), 0u);
  EXPECT_EQ(key_of(ids[5]), "caf\u00e9");  // printable UTF-8 stays as it is
  // The long dedup key: stored, and the second request is its duplicate.
  HttpConnection conn(server_->port());
  HttpResponse first = conn.Send("POST", "/in/dd", {{"X-Id", long_key}}, "{}");
  EXPECT_EQ(first.status, 202) << first.body;
  HttpResponse again = conn.Send("POST", "/in/dd", {{"X-Id", long_key}}, "{}");
  EXPECT_EQ(again.status, 202) << again.body;
  EXPECT_NE(again.body.find("\"duplicate\":true"), std::string::npos) << again.body;
  HttpResponse other = conn.Send("POST", "/in/dd", {{"X-Id", long_key + "2"}}, "{}");
  EXPECT_EQ(other.body.find("duplicate"), std::string::npos) << other.body;
  EXPECT_EQ(server_->Stop(), 0) << server_->output();
}

}  // namespace
}  // namespace hookrelay
