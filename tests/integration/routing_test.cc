// Black-box test of routing and transforms (issue 27) on the real `hookrelay serve` binary and a
// real sink: a source fanned out by event type, an event no route took listed and replayed once
// a destination is named, and transforms that rewrite the body (signed over the new body), skip
// a delivery, or fail and are fixed before a replay.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

#include "support/config_builder.h"
#include "support/http_client.h"
#include "support/integration_test.h"
#include "support/sink.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::SinkResponse;

const std::string kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const testing::TomlValue kOneAttempt = testing::TomlInline(
    {{"strategy", "exponential"}, {"base", "50ms"}, {"max_attempts", 1}, {"timeout", "2s"}});

class RoutingTest : public testing::IntegrationTest {
 protected:
  void SetUp() override {
    for (const char* p : {"/billing", "/crm", "/all", "/tx"})
      sink_.SetDefault(p, SinkResponse::Status(200));
    StartServer(testing::Config()
                    .Set("delivery.poll_interval", "100ms")
                    .Set("server.allow_private_destinations", true)
                    .Source("stripe", {{"type", testing::TomlInline({{"json", "type"}})}})
                    .Destination("billing", sink_.url("/billing"), {{"policy", kOneAttempt}})
                    .Destination("crm", sink_.url("/crm"), {{"policy", kOneAttempt}})
                    .Destination("all", sink_.url("/all"), {{"policy", kOneAttempt}})
                    .Destination("tx", sink_.url("/tx"),
                                 {{"policy", kOneAttempt}, {"signing_secret", kSecret}})
                    .Route("stripe", "billing", {{"types", testing::TomlArray({"invoice.*"})}})
                    .Route("stripe", "crm",
                           {{"types", testing::TomlArray({"customer.*"})},
                            {"filter", testing::TomlValue::Raw("{ body = { livemode = true } }")}})
                    .Route("stripe", "all", {{"types", testing::TomlArray({"*"})}}));
  }

  HttpResponse Api(const std::string& method, const std::string& target,
                   const std::string& body = "") {
    HttpConnection conn(server_->port());
    testing::HeaderList headers{{"Authorization", "Bearer " + admin_token_}};
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    return conn.Send(method, target, headers, body);
  }

  std::string Ingest(const std::string& body) {
    HttpConnection conn(server_->port());
    HttpResponse r = conn.Send("POST", "/in/stripe", {{"Content-Type", "application/json"}}, body);
    EXPECT_EQ(r.status, 202) << r.body;
    return r.status == 202 ? std::string(json::parse(r.body).at("id").as_string()) : "";
  }

  size_t CountAt(const std::string& path) {
    size_t n = 0;
    for (const auto& r : sink_.Requests()) n += r.path == path;
    return n;
  }
};

TEST_F(RoutingTest, AStripeSourceFansOutByTypeAndFilter) {
  Ingest(R"({"id":"evt_1","type":"invoice.paid","livemode":true})");
  Ingest(R"({"id":"evt_2","type":"customer.created","livemode":true})");
  Ingest(R"({"id":"evt_3","type":"customer.updated","livemode":false})");
  Ingest(R"({"id":"evt_4","type":"charge.succeeded"})");
  ASSERT_TRUE(sink_.WaitForRequests(6, 10s));
  std::this_thread::sleep_for(300ms);  // nothing more may come: checked below
  EXPECT_EQ(CountAt("/billing"), 1u);
  EXPECT_EQ(CountAt("/crm"), 1u);  // customer.updated is not live
  EXPECT_EQ(CountAt("/all"), 4u);
  for (const auto& r : sink_.Requests()) {
    if (r.path == "/billing") {
      EXPECT_NE(r.body.find("invoice.paid"), std::string::npos);
    }
    if (r.path == "/crm") {
      EXPECT_NE(r.body.find("customer.created"), std::string::npos);
    }
  }
  HttpResponse list = Api("GET", "/api/v1/events?type=customer.*");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(json::parse(list.body).at("items").as_array().size(), 2u);
}

TEST_F(RoutingTest, AnUnroutedEventIsListedWithItsReasonsAndReplayedToADestination) {
  ASSERT_EQ(Api("DELETE", "/api/v1/routes/stripe:all").status, 409);  // the file owns it
  const std::string id = Ingest(R"({"id":"evt_5"})");                 // no type: only typed routes
  HttpResponse list = Api("GET", "/api/v1/events?routed=false");
  ASSERT_EQ(list.status, 200) << list.body;
  json::array items = json::parse(list.body).at("items").as_array();
  ASSERT_EQ(items.size(), 1u) << list.body;
  EXPECT_EQ(items[0].at("id").as_string(), id);
  EXPECT_TRUE(items[0].at("type").is_null());
  HttpResponse detail = Api("GET", "/api/v1/events/" + id + "?body=false");
  json::array routes = json::parse(detail.body).at("routes").as_array();
  ASSERT_EQ(routes.size(), 3u) << detail.body;
  EXPECT_EQ(routes[0].at("reason").as_string(),
            "the event has no type; the route wants [invoice.*]");
  // The routes are fixed by naming where it goes.
  HttpResponse replay = Api("POST", "/api/v1/events/" + id + "/replay", R"({"destination":"tx"})");
  ASSERT_EQ(replay.status, 202) << replay.body;
  ASSERT_TRUE(test::WaitFor([&] { return CountAt("/tx") == 1; }, 10s));
}

TEST_F(RoutingTest, TransformsRewriteSkipAndFailThenTheFixedOneIsReplayed) {
  // A transform on the route to tx that renames two fields and adds a header.
  const std::string rename = R"(function transform(request) {
  const { id, type, ...rest } = request.json;
  request.json = { event_id: id, event_type: type, ...rest };
  request.headers['x-relayed-by'] = 'hookrelay';
  return request;
})";
  json::object route{{"source", "stripe"},
                     {"destination", "tx"},
                     {"types", json::array{"*"}},
                     {"transform", rename}};
  ASSERT_EQ(Api("POST", "/api/v1/routes", json::serialize(route)).status, 201);
  Ingest(R"({"id":"evt_6","type":"order.created","amount":5})");
  ASSERT_TRUE(test::WaitFor([&] { return CountAt("/tx") == 1; }, 10s));
  for (const auto& r : sink_.Requests()) {
    if (r.path != "/tx") continue;
    EXPECT_EQ(r.body, R"({"event_id":"evt_6","event_type":"order.created","amount":5})");
    EXPECT_EQ(r.Header("x-relayed-by"), "hookrelay");
    std::string why;
    EXPECT_TRUE(testing::VerifyStandardSignature(r, kSecret, &why)) << why;
  }
  // The attempt says what the transform made it send.
  HttpResponse first = Api("GET", "/api/v1/events?destination=tx");
  ASSERT_EQ(first.status, 200) << first.body;
  const std::string first_id(
      json::parse(first.body).at("items").as_array()[0].at("id").as_string());
  json::value sent = json::parse(Api("GET", "/api/v1/events/" + first_id + "?body=false").body);
  json::value transformed;
  for (const json::value& d : sent.at("deliveries").as_array()) {
    if (d.at("destination").as_string() == "tx") {
      transformed = d.at("attempts").as_array()[0].at("transformed");
    }
  }
  ASSERT_TRUE(transformed.is_object()) << json::serialize(sent);
  EXPECT_EQ(
      transformed.at("body_size").as_int64(),
      std::string_view(R"({"event_id":"evt_6","event_type":"order.created","amount":5})").size());
  EXPECT_EQ(transformed.at("headers_changed"), json::array{"x-relayed-by"});
  // A script that cannot run is refused when it is saved, naming where.
  HttpResponse bad = Api("PATCH", "/api/v1/routes/stripe:tx",
                         R"({"transform": "function transform(r) {\n  return r.;\n}"})");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(bad.body.find("SyntaxError"), std::string::npos) << bad.body;
  EXPECT_NE(bad.body.find("(line 2)"), std::string::npos) << bad.body;
  // null skips the delivery: final, with the reason.
  ASSERT_EQ(Api("PATCH", "/api/v1/routes/stripe:tx",
                R"({"transform": "function transform(r) { return null; }"})")
                .status,
            200);
  const std::string skipped = Ingest(R"({"id":"evt_7","type":"order.created"})");
  ASSERT_TRUE(test::WaitFor(
      [&] {
        return Api("GET", "/api/v1/events/" + skipped + "?body=false")
                   .body.find("skipped: transform returned null") != std::string::npos;
      },
      10s));
  // A transform that throws fails the delivery with where; fixed, the event is replayed.
  ASSERT_EQ(Api("PATCH", "/api/v1/routes/stripe:tx",
                R"({"transform": "function transform(r) {\n  return r.json.missing.x;\n}"})")
                .status,
            200);
  const std::string broken = Ingest(R"({"id":"evt_8","type":"order.created"})");
  ASSERT_TRUE(test::WaitFor(
      [&] {
        return Api("GET", "/api/v1/events/" + broken + "?body=false")
                   .body.find("transform: TypeError: r.json.missing is undefined (line 2)") !=
               std::string::npos;
      },
      10s))
      << Api("GET", "/api/v1/events/" + broken + "?body=false").body;
  json::object fixed{{"transform", rename}};
  ASSERT_EQ(Api("PATCH", "/api/v1/routes/stripe:tx", json::serialize(fixed)).status, 200);
  ASSERT_EQ(Api("POST", "/api/v1/events/" + broken + "/replay", R"({"destination":"tx"})").status,
            202);
  ASSERT_TRUE(test::WaitFor([&] { return CountAt("/tx") == 2; }, 10s));
  // The dry-run endpoint says the same without sending anything.
  HttpResponse t =
      Api("POST", "/api/v1/transforms/test", R"({"event":")" + broken + R"(","destination":"tx"})");
  ASSERT_EQ(t.status, 200) << t.body;
  EXPECT_NE(t.body.find(R"(\"event_id\":\"evt_8\")"), std::string::npos) << t.body;
}

// Each destination's transform runs in a realm of its own (kept between its calls, with the
// standard classes frozen): one destination's script changing Object.prototype and
// Array.prototype.push reaches neither its own later calls nor another destination's.
TEST_F(RoutingTest, ATransformsPollutionReachesNoLaterCallAndNoOtherDestination) {
  sink_.SetDefault("/probe", SinkResponse::Status(200));
  json::object probe_destination{{"name", "probe"}, {"url", sink_.url("/probe")}};
  ASSERT_EQ(Api("POST", "/api/v1/destinations", json::serialize(probe_destination)).status, 201);
  const std::string polluter = R"(function transform(r) {
  r.headers['x-before'] = typeof ({}).polluted + ' ' + [].push(1);
  Object.prototype.polluted = 'yes';
  Array.prototype.push = function () { return 'hijacked'; };
  return r;
})";
  const std::string probe = R"(function transform(r) {
  r.headers['x-seen'] = typeof ({}).polluted + ' ' + [].push(1);
  return r;
})";
  for (const auto& [destination, script] :
       {std::pair<std::string, std::string>{"tx", polluter}, {"probe", probe}}) {
    json::object route{{"source", "stripe"},
                       {"destination", destination},
                       {"types", json::array{"order.*"}},
                       {"transform", script}};
    ASSERT_EQ(Api("POST", "/api/v1/routes", json::serialize(route)).status, 201) << destination;
  }
  for (int i = 0; i < 6; ++i) Ingest(R"({"type":"order.created","n":)" + std::to_string(i) + "}");
  ASSERT_TRUE(test::WaitFor([&] { return CountAt("/tx") == 6 && CountAt("/probe") == 6; }, 10s));
  for (const auto& r : sink_.Requests()) {
    if (r.path == "/tx") {
      EXPECT_EQ(r.Header("x-before"), "undefined 1");
    } else if (r.path == "/probe") {
      EXPECT_EQ(r.Header("x-seen"), "undefined 1");
    }
  }
}

}  // namespace
}  // namespace hookrelay
