// Issue 30: the Redis Streams destination kind on the real binary, delivering to a private
// redis-server (tests/support/redis_server.h): an entry with every field, Redis stopped mid-load
// and restarted (nothing acknowledged lost, the breaker opening and closing, duplicates with the
// same webhook-id), a permanent error final with Redis's words, a 5 MiB body, and the URL's
// password never shown.

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/http_client.h"
#include "support/integration_test.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::RedisServer;
using testing::StreamEntry;

constexpr char kSigningSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

const testing::TomlValue kFastPolicy = testing::TomlValue::Raw(
    R"({ strategy = "exponential", jitter = "none", base = "50ms", cap = "300ms", )"
    R"(max_attempts = 200, max_duration = "5m", timeout = "2s" })");

class RedisDeliveryTest : public testing::IntegrationTest {
 protected:
  void SetUp() override { ASSERT_TRUE(redis_.ok()) << redis_.error(); }

  // A source "src" (its type from X-Event, bodies up to 6 MiB) routed to the redis destination
  // "orders" on `url`'s stream "webhooks", plus `fields`.
  testing::Config Config(const std::string& url, testing::TomlFields fields = {}) {
    testing::TomlFields all{{"kind", "redis"},
                            {"stream", "webhooks"},
                            {"signing_secret", kSigningSecret},
                            {"policy", kFastPolicy}};
    all.insert(all.end(), fields.begin(), fields.end());
    testing::Config config;
    config.Set("delivery.poll_interval", "100ms")
        .Source("src",
                {{"type", testing::TomlInline({{"header", "X-Event"}})}, {"max_body", "6MiB"}})
        .Destination("orders", url, all)
        .Route("src", "orders");
    return config;
  }

  // POST /in/src; the event's id, or "" when it was not accepted (202).
  std::string Ingest(const std::string& body, testing::HeaderList headers = {}) {
    HttpConnection conn(server_->port());
    HttpResponse r = conn.Send("POST", "/in/src", headers, body);
    if (r.status != 202) return "";
    return std::string(json::parse(r.body).at("id").as_string());
  }

  json::value Get(const std::string& target) {
    HttpResponse r = Api("GET", target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    return r.status == 200 ? json::parse(r.body) : json::value();
  }

  // The delivery of event `id` to "orders" as the API shows it (null when there is none).
  json::value DeliveryOf(const std::string& id) {
    json::value event = Get("/api/v1/events/" + id);
    if (!event.is_object()) return nullptr;
    for (const json::value& d : event.at("deliveries").as_array()) {
      if (d.at("destination") == "orders") return d;
    }
    return nullptr;
  }
  std::string StatusOf(const std::string& id) {
    json::value d = DeliveryOf(id);
    return d.is_object() ? std::string(d.at("status").as_string()) : "";
  }
  std::string BreakerState() {
    json::value d = Get("/api/v1/destinations/orders");
    return d.is_object() ? std::string(d.at("breaker").at("state").as_string()) : "";
  }

  RedisServer redis_;
};

TEST_F(RedisDeliveryTest, AnEventBecomesAnEntryWithEveryField) {
  StartServer(Config(redis_.Url()));
  const std::string body = R"({"id":"ord_1","total":"12.50","text":"héllo"})";
  const std::string id = Ingest(
      body,
      {{"Content-Type", "application/json"}, {"X-Event", "orders.created"}, {"X-Team", "billing"}});
  ASSERT_FALSE(id.empty());
  std::vector<StreamEntry> entries;
  ASSERT_TRUE(test::WaitFor([&] {
    entries = redis_.Entries("webhooks");
    return !entries.empty();
  }));
  ASSERT_EQ(entries.size(), 1u);
  const StreamEntry& e = entries[0];
  EXPECT_EQ(e.Field("body"), body);
  EXPECT_EQ(e.Field("webhook-id"), id);
  EXPECT_FALSE(e.Field("webhook-timestamp").empty());
  EXPECT_EQ(e.Field("webhook-timestamp").find_first_not_of("0123456789"), std::string::npos);
  EXPECT_EQ(e.Field("webhook-signature").rfind("v1,", 0), 0u) << e.Field("webhook-signature");
  EXPECT_EQ(e.Field("source"), "src");
  EXPECT_EQ(e.Field("type"), "orders.created");
  EXPECT_EQ(e.Field("content-type"), "application/json");
  EXPECT_EQ(e.Field("header:x-team"), "billing");
  EXPECT_EQ(e.Field("header:x-event"), "orders.created");

  // The attempt shows the broker's reply (the entry's id) where an HTTP one shows the response.
  ASSERT_TRUE(test::WaitFor([&] { return StatusOf(id) == "delivered"; }));
  json::value d = DeliveryOf(id);
  const json::array& attempts = d.at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].at("response_snippet"), json::value(e.id)) << json::serialize(attempts[0]);
  EXPECT_TRUE(attempts[0].at("status_code").is_null());
  EXPECT_TRUE(attempts[0].at("error").is_null());

  json::value dest = Get("/api/v1/destinations/orders");
  EXPECT_EQ(dest.at("kind"), "redis");
  EXPECT_EQ(dest.at("stream"), "webhooks");
}

TEST_F(RedisDeliveryTest, RedisStoppedMidLoadThenRestartedLosesNothingAcknowledged) {
  StartServer(Config(redis_.Url(),
                     {{"breaker", testing::TomlInline(
                                      {{"threshold", 5}, {"open", testing::TomlArray({"1s"})}})}}));
  constexpr int kEvents = 300;
  std::set<std::string> ids;
  for (int i = 0; i < kEvents; ++i) {
    if (i == kEvents / 3) {
      // A crash (SIGKILL), while deliveries are in flight.
      ASSERT_EQ(redis_.Stop(SIGKILL), "");
    }
    const std::string id =
        Ingest("{\"n\":" + std::to_string(i) + "}", {{"Content-Type", "application/json"}});
    ASSERT_FALSE(id.empty()) << i;
    ids.insert(id);
  }
  // With Redis down, the destination's failures open its breaker.
  ASSERT_TRUE(test::WaitFor([&] { return BreakerState() == "open"; }, 20s, 20ms));

  ASSERT_EQ(redis_.Start(), "");
  // Every event is in the stream, at least once; a duplicate carries the same webhook-id (the
  // receiver's key for dropping it).
  std::vector<StreamEntry> entries;
  ASSERT_TRUE(test::WaitFor(
      [&] {
        entries = redis_.Entries("webhooks");
        std::set<std::string> seen;
        for (const StreamEntry& e : entries) seen.insert(e.Field("webhook-id"));
        return seen == ids;
      },
      60s, 100ms))
      << entries.size() << " entries for " << ids.size() << " events";
  for (const StreamEntry& e : entries) {
    EXPECT_EQ(ids.count(e.Field("webhook-id")), 1u) << e.Field("webhook-id");
  }
  // The breaker closed again, and every delivery is delivered (none failed for good).
  ASSERT_TRUE(test::WaitFor([&] { return BreakerState() == "closed"; }, 20s, 20ms));
  for (const std::string& id : ids) {
    ASSERT_TRUE(test::WaitFor([&] { return StatusOf(id) == "delivered"; }, 20s, 20ms)) << id;
  }
}

TEST_F(RedisDeliveryTest, APermanentErrorIsFinalWithRedissWords) {
  ASSERT_FALSE(redis_.Command({"SET", "webhooks", "not a stream"}).error());
  StartServer(Config(redis_.Url()));
  const std::string id = Ingest("{}", {{"Content-Type", "application/json"}});
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(test::WaitFor([&] { return StatusOf(id) == "failed"; }));
  json::value d = DeliveryOf(id);
  const std::string reason(d.at("reason").as_string());
  EXPECT_NE(reason.find("WRONGTYPE Operation against a key holding the wrong kind of value"),
            std::string::npos)
      << reason;
  const json::array& attempts = d.at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 1u);  // final: not retried
  EXPECT_EQ(attempts[0].at("error"), "broker_refused");
}

TEST_F(RedisDeliveryTest, RefusedCredentialsAreFinalAndThePasswordIsNeverShown) {
  RedisServer locked(RedisServer::Options{.password = "the-right-password"});
  ASSERT_TRUE(locked.ok()) << locked.error();
  const std::string url =
      "redis://:a-wrong-password-42@127.0.0.1:" + std::to_string(locked.port()) + "/0";
  StartServer(Config(url));
  const std::string id = Ingest("{}", {{"Content-Type", "application/json"}});
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(test::WaitFor([&] { return StatusOf(id) == "failed"; }));
  const std::string reason(DeliveryOf(id).at("reason").as_string());
  EXPECT_NE(reason.find("WRONGPASS"), std::string::npos) << reason;

  const HttpResponse dest = Api("GET", "/api/v1/destinations/orders");
  EXPECT_EQ(dest.body.find("a-wrong-password-42"), std::string::npos) << dest.body;
  EXPECT_NE(dest.body.find("redis://***@127.0.0.1"), std::string::npos) << dest.body;
  const HttpResponse event = Api("GET", "/api/v1/events/" + id);
  EXPECT_EQ(event.body.find("a-wrong-password-42"), std::string::npos) << event.body;
  StopServer();
  EXPECT_EQ(server_->output().find("a-wrong-password-42"), std::string::npos);
}

TEST_F(RedisDeliveryTest, AFiveMebibyteBodyIsDeliveredWhole) {
  StartServer(Config(redis_.Url()));
  std::string body(5 * 1024 * 1024, 'x');
  for (size_t i = 0; i < body.size(); i += 1000) body[i] = static_cast<char>('a' + (i / 1000) % 26);
  const std::string id = Ingest(body, {{"Content-Type", "application/octet-stream"}});
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(test::WaitFor([&] { return StatusOf(id) == "delivered"; }, 30s, 20ms));
  std::vector<StreamEntry> entries = redis_.Entries("webhooks");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(entries[0].Field("body") == body) << entries[0].Field("body").size();
  EXPECT_EQ(entries[0].Field("webhook-id"), id);
}

}  // namespace
}  // namespace hookrelay
