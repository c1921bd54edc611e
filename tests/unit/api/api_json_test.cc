#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>

#include "api/audit_json.h"
#include "api/destinations_json.h"
#include "api/events_handler.h"
#include "api/events_json.h"
#include "api/replays_json.h"
#include "api/request_params.h"
#include "api/routes_json.h"
#include "api/sources_json.h"
#include "common/time_format.h"
#include "conformance/store_test_util.h"
#include "store/sqlite/open.h"
#include "support/process.h"
#include "unit/api/api_test_util.h"

namespace hookrelay::api {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using store::DeliveryStatus;

std::set<std::string> Keys(const json::object& o) {
  std::set<std::string> keys;
  for (const auto& kv : o) keys.emplace(kv.key());
  return keys;
}

http::RequestHead Query(std::string query) {
  http::RequestHead h;
  h.method = "GET";
  h.path = "/api/v1/events";
  h.segments = {"api", "v1", "events"};
  h.query = std::move(query);
  return h;
}

// ---- GET /api/v1/events query ----

TEST(EventListQueryTest, DefaultsWhenNothingIsGiven) {
  auto q = ParseEventListQuery(Query(""));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->limit, kDefaultEventLimit);
  EXPECT_EQ(q->cursor, "");
  EXPECT_FALSE(q->filter.status || q->filter.source || q->filter.destination || q->filter.since ||
               q->filter.until);
}

TEST(EventListQueryTest, ParsesEveryParameter) {
  auto q = ParseEventListQuery(
      Query("status=failed&source=github&destination=billing&since=2026-11-30T06:00:00Z"
            "&until=2026-11-30T07:00:00.5%2B01:00&cursor=01JABC&limit=1000"));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->filter.status, DeliveryStatus::kFailed);
  EXPECT_EQ(q->filter.source, "github");
  EXPECT_EQ(q->filter.destination, "billing");
  EXPECT_EQ(q->filter.since, ParseRfc3339("2026-11-30T06:00:00Z"));
  EXPECT_EQ(q->filter.until, ParseRfc3339("2026-11-30T06:00:00.5Z"));
  EXPECT_EQ(q->cursor, "01JABC");
  EXPECT_EQ(q->limit, 1000);
}

TEST(EventListQueryTest, EmptyParametersCountAsAbsent) {
  auto q = ParseEventListQuery(Query("status=&source=&since=&limit="));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_FALSE(q->filter.status.has_value());
  EXPECT_FALSE(q->filter.source.has_value());
  EXPECT_EQ(q->limit, kDefaultEventLimit);
}

TEST(EventListQueryTest, BadValuesNameTheParameter) {
  const std::pair<std::string, std::string> cases[] = {
      {"status=lost", "status"},
      {"since=yesterday", "since"},
      {"until=2026-13-01T00:00:00Z", "until"},
      {"since=2026-11-30T07:00:00Z&until=2026-11-30T06:00:00Z", "until"},
      {"limit=0", "limit"},
      {"limit=1001", "limit"},
      {"limit=-5", "limit"},
      {"limit=ten", "limit"},
      {"limit=10x", "limit"},
      {"limit=99999999999999999999", "limit"},
  };
  for (const auto& [query, field] : cases) {
    auto q = ParseEventListQuery(Query(query));
    ASSERT_FALSE(q.ok()) << query;
    EXPECT_EQ(q.status().code(), Status::Code::kInvalidArgument) << query;
    EXPECT_EQ(q.status().field(), field) << query;
  }
}

// ---- event JSON against a real SQLite store ----

class EventJsonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store::SqliteOptions options;
    options.dir = dir_.path();
    auto s = store::OpenSqliteStore(options, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }

  testing::TempDir dir_;
  FakeClock clock_{*ParseRfc3339("2026-11-30T06:00:00.123Z")};
  SeededRandom random_{7};
  std::unique_ptr<store::Store> store_;
};

TEST_F(EventJsonTest, PageIsNewestFirstWithSummaryFieldsAndCursor) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    auto r =
        store_->AppendEventSync(store::test::MakeEvent(clock_, random_, std::string(10 + i, 'x')));
    ASSERT_TRUE(r.ok());
    ids.push_back(r->id);
    clock_.Advance(1s);
  }
  auto page = store_->ListEvents({}, "", 2);
  ASSERT_TRUE(page.ok());
  json::object o = EventPageToJson(*page);
  EXPECT_EQ(Keys(o), (std::set<std::string>{"items", "next_cursor"}));
  const json::array& items = o.at("items").as_array();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(Keys(items[0].as_object()),
            (std::set<std::string>{"id", "source", "received_at", "size", "type", "routed",
                                   "deliveries"}));
  EXPECT_EQ(json::serialize(items[0].at("deliveries")),
            R"([{"destination":"billing","status":"scheduled","chain":0,"paused_by":null,)"
            R"("breaker_open_until":null}])");
  EXPECT_EQ(items[0].at("id").as_string(), ids[2]);
  EXPECT_EQ(items[0].at("source").as_string(), "stripe");
  EXPECT_EQ(items[0].at("received_at").as_string(), "2026-11-30T06:00:02.123Z");
  EXPECT_EQ(items[0].at("size").as_int64(), 12);
  EXPECT_EQ(items[1].at("id").as_string(), ids[1]);
  ASSERT_TRUE(o.at("next_cursor").is_string());

  auto rest = store_->ListEvents({}, std::string(o.at("next_cursor").as_string()), 2);
  ASSERT_TRUE(rest.ok());
  json::object last = EventPageToJson(*rest);
  ASSERT_EQ(last.at("items").as_array().size(), 1u);
  EXPECT_EQ(last.at("items").as_array()[0].at("id").as_string(), ids[0]);
  EXPECT_TRUE(last.at("next_cursor").is_null());
}

TEST_F(EventJsonTest, DetailHasTheContractFieldsAfterAFailureAndASuccess) {
  auto appended = store_->AppendEventSync(
      store::test::MakeEvent(clock_, random_, R"({"a":1})", {"billing", "crm"}));
  ASSERT_TRUE(appended.ok());
  const std::string id = appended->id;
  const TimePoint t0 = clock_.Now();

  // billing: attempt 1 gets 500 (retry in 5m), attempt 2 gets 200.
  auto claimed = store_->ClaimDue(t0, 10, 30s, "n", "billing");
  ASSERT_TRUE(claimed.ok());
  ASSERT_EQ(claimed->size(), 1u);
  const int64_t did = (*claimed)[0].id;
  store::Attempt a1{did, 1, t0, 12, 500, std::nullopt, "120", "oops"};
  store::DeliveryUpdate u1{DeliveryStatus::kScheduled, t0 + 5min, t0 + 24h, t0, 5min, std::nullopt};
  ASSERT_TRUE(store_->RecordAttempt(a1, u1, "n").ok());

  // Half-way: scheduled, next_attempt_at shown.
  auto mid = LoadEventDetail(*store_, id);
  ASSERT_TRUE(mid.ok());
  ASSERT_TRUE(mid->has_value());
  const json::object& mid_billing = (**mid).at("deliveries").as_array()[0].as_object();
  EXPECT_EQ(mid_billing.at("status").as_string(), "scheduled");
  EXPECT_EQ(mid_billing.at("attempt").as_int64(), 1);
  EXPECT_EQ(mid_billing.at("next_attempt_at").as_string(), "2026-11-30T06:05:00.123Z");

  clock_.Advance(5min);
  claimed = store_->ClaimDue(clock_.Now(), 10, 30s, "n", "billing");
  ASSERT_TRUE(claimed.ok());
  ASSERT_EQ(claimed->size(), 1u);
  store::Attempt a2{did, 2, clock_.Now(), 3, 200, std::nullopt, std::nullopt, ""};
  store::DeliveryUpdate u2{
      DeliveryStatus::kDelivered, clock_.Now(), t0 + 24h, t0, 0ms, std::nullopt};
  ASSERT_TRUE(store_->RecordAttempt(a2, u2, "n").ok());

  auto detail = LoadEventDetail(*store_, id);
  ASSERT_TRUE(detail.ok()) << detail.status().ToString();
  ASSERT_TRUE(detail->has_value());
  const json::object& o = **detail;
  EXPECT_EQ(Keys(o), (std::set<std::string>{"id", "source", "received_at", "size", "type", "routed",
                                            "headers", "body_base64", "deliveries", "routes"}));
  EXPECT_EQ(o.at("id").as_string(), id);
  EXPECT_EQ(o.at("source").as_string(), "stripe");
  EXPECT_EQ(o.at("received_at").as_string(), "2026-11-30T06:00:00.123Z");
  EXPECT_EQ(o.at("size").as_int64(), 7);
  EXPECT_EQ(o.at("body_base64").as_string(), Base64Encode(R"({"a":1})"));
  EXPECT_EQ(json::serialize(o.at("headers")),
            R"([["Content-Type","application/json"],["X-Request-Id","r-1"]])");

  const json::array& deliveries = o.at("deliveries").as_array();
  ASSERT_EQ(deliveries.size(), 2u);
  const json::object* billing = nullptr;
  const json::object* crm = nullptr;
  for (const json::value& d : deliveries) {
    (d.at("destination").as_string() == "billing" ? billing : crm) = &d.as_object();
  }
  ASSERT_TRUE(billing && crm);
  EXPECT_EQ(Keys(*billing),
            (std::set<std::string>{"destination", "status", "attempt", "max_attempts",
                                   "next_attempt_at", "deadline", "reason", "chain", "order_key",
                                   "paused_by", "breaker_open_until", "held_behind", "attempts"}));
  EXPECT_EQ(billing->at("status").as_string(), "delivered");
  EXPECT_TRUE(billing->at("order_key").is_null());  // unordered
  EXPECT_TRUE(billing->at("held_behind").is_null());
  EXPECT_EQ(billing->at("attempt").as_int64(), 2);
  EXPECT_EQ(billing->at("max_attempts").as_int64(), 5);
  EXPECT_TRUE(billing->at("next_attempt_at").is_null());
  EXPECT_EQ(billing->at("deadline").as_string(), "2026-12-01T06:00:00.123Z");
  EXPECT_TRUE(billing->at("reason").is_null());
  EXPECT_EQ(billing->at("chain").as_int64(), 0);
  const json::array& attempts = billing->at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(Keys(attempts[0].as_object()),
            (std::set<std::string>{"n", "started_at", "duration_ms", "status_code", "error",
                                   "retry_after", "probe", "counted", "response_snippet",
                                   "response_snippet_encoding", "transformed"}));
  EXPECT_FALSE(attempts[0].at("probe").as_bool());
  EXPECT_TRUE(attempts[0].at("counted").as_bool());
  EXPECT_EQ(attempts[0].at("n").as_int64(), 1);
  EXPECT_EQ(attempts[0].at("started_at").as_string(), "2026-11-30T06:00:00.123Z");
  EXPECT_EQ(attempts[0].at("duration_ms").as_int64(), 12);
  EXPECT_EQ(attempts[0].at("status_code").as_int64(), 500);
  EXPECT_TRUE(attempts[0].at("error").is_null());
  EXPECT_EQ(attempts[0].at("retry_after").as_string(), "120");
  EXPECT_EQ(attempts[1].at("n").as_int64(), 2);
  EXPECT_EQ(attempts[1].at("started_at").as_string(), "2026-11-30T06:05:00.123Z");
  EXPECT_EQ(attempts[1].at("status_code").as_int64(), 200);
  EXPECT_TRUE(attempts[1].at("retry_after").is_null());
  EXPECT_EQ(attempts[0].at("response_snippet").as_string(), "oops");
  EXPECT_EQ(attempts[0].at("response_snippet_encoding").as_string(), "utf-8");
  EXPECT_TRUE(attempts[1].at("response_snippet").is_null());  // nothing recorded
  EXPECT_FALSE(attempts[1].as_object().contains("response_snippet_encoding"));

  // crm: untouched, due at once.
  EXPECT_EQ(crm->at("status").as_string(), "scheduled");
  EXPECT_EQ(crm->at("attempt").as_int64(), 0);
  EXPECT_EQ(crm->at("next_attempt_at").as_string(), "2026-11-30T06:00:00.123Z");
  EXPECT_TRUE(crm->at("deadline").is_null());
  EXPECT_TRUE(crm->at("attempts").as_array().empty());
}

TEST_F(EventJsonTest, TransportErrorAndFailureReasonAreShown) {
  auto appended = store_->AppendEventSync(store::test::MakeEvent(clock_, random_));
  ASSERT_TRUE(appended.ok());
  auto claimed = store_->ClaimDue(clock_.Now(), 1, 30s, "n");
  ASSERT_TRUE(claimed.ok() && claimed->size() == 1u);
  store::Attempt a{(*claimed)[0].id, 1,         clock_.Now(), 30000,
                   std::nullopt,     "timeout", std::nullopt, ""};
  store::DeliveryUpdate u{DeliveryStatus::kFailed,
                          clock_.Now(),
                          std::nullopt,
                          clock_.Now(),
                          0ms,
                          "gave up after attempt 1 of 1 (max_attempts)"};
  ASSERT_TRUE(store_->RecordAttempt(a, u, "n").ok());
  auto detail = LoadEventDetail(*store_, appended->id);
  ASSERT_TRUE(detail.ok() && detail->has_value());
  const json::object& d = (**detail).at("deliveries").as_array()[0].as_object();
  EXPECT_EQ(d.at("status").as_string(), "failed");
  EXPECT_TRUE(d.at("next_attempt_at").is_null());
  EXPECT_EQ(d.at("reason").as_string(), "gave up after attempt 1 of 1 (max_attempts)");
  const json::object& at = d.at("attempts").as_array()[0].as_object();
  EXPECT_TRUE(at.at("status_code").is_null());
  EXPECT_EQ(at.at("error").as_string(), "timeout");
}

// Issue 10.5: the recorded response is shown per attempt; bytes that are not UTF-8 as base64.
TEST_F(EventJsonTest, ResponseSnippetIsShownAsTextOrBase64) {
  auto appended = store_->AppendEventSync(store::test::MakeEvent(clock_, random_));
  ASSERT_TRUE(appended.ok());
  auto claimed = store_->ClaimDue(clock_.Now(), 1, 30s, "n");
  ASSERT_TRUE(claimed.ok() && claimed->size() == 1u);
  const std::string binary("\xff\x00\x01oops", 6);
  store::Attempt a{(*claimed)[0].id, 1, clock_.Now(), 5, 500, std::nullopt, std::nullopt, binary};
  store::DeliveryUpdate u{
      DeliveryStatus::kScheduled, clock_.Now() + 1min, std::nullopt, clock_.Now(), 1min, "x"};
  ASSERT_TRUE(store_->RecordAttempt(a, u, "n").ok());
  auto detail = LoadEventDetail(*store_, appended->id);
  ASSERT_TRUE(detail.ok() && detail->has_value());
  const json::object& at =
      (**detail).at("deliveries").as_array()[0].at("attempts").as_array()[0].as_object();
  EXPECT_EQ(at.at("response_snippet").as_string(), Base64Encode(binary));
  EXPECT_EQ(at.at("response_snippet_encoding").as_string(), "base64");

  // Text followed by a byte that can never start a character is not text.
  json::object o;
  AddResponseSnippet(o, "ok\n\xff");
  EXPECT_EQ(o.at("response_snippet_encoding").as_string(), "base64");
  // A character cut in two by the 4 KiB limit is left out of otherwise valid text.
  AddResponseSnippet(o, std::string(4094, 'a') + "\xe2\x82");
  EXPECT_EQ(o.at("response_snippet").as_string(), std::string(4094, 'a'));
  EXPECT_EQ(o.at("response_snippet_encoding").as_string(), "utf-8");
  AddResponseSnippet(o, "h\xc3\xa9llo");
  EXPECT_EQ(o.at("response_snippet").as_string(), "h\xc3\xa9llo");
  EXPECT_EQ(o.at("response_snippet_encoding").as_string(), "utf-8");
}

// Issue 11.7: stored header values that look like credentials (a provider's token or signature
// header) are forwarded but not shown.
TEST_F(EventJsonTest, CredentialLikeEventHeadersAreRedacted) {
  store::NewEvent e = store::test::MakeEvent(clock_, random_);
  e.headers = {{"X-Gitlab-Token", "glt-secret"},
               {"Stripe-Signature", "t=1,v1=ab"},
               {"Authorization", "(redacted)"},
               {"X-GitHub-Event", "push"}};
  auto appended = store_->AppendEventSync(e);
  ASSERT_TRUE(appended.ok());
  auto detail = LoadEventDetail(*store_, appended->id);
  ASSERT_TRUE(detail.ok() && detail->has_value());
  EXPECT_EQ(json::serialize((**detail).at("headers")),
            R"j([["X-Gitlab-Token","(redacted)"],["Stripe-Signature","(redacted)"],)j"
            R"j(["Authorization","(redacted)"],["X-GitHub-Event","push"]])j");
}

TEST_F(EventJsonTest, UnknownEventIsNullopt) {
  auto detail = LoadEventDetail(*store_, "01JNOSUCHEVENT0000000000000");
  ASSERT_TRUE(detail.ok());
  EXPECT_FALSE(detail->has_value());
}

// ---- catalog JSON ----

TEST(CatalogJsonTest, DestinationWithoutEngineStateIsClosedAndShowsNoSecret) {
  model::Catalog c = test::MakeCatalog();
  json::object o = DestinationViewToJson(*c.FindDestination("billing"), nullptr, TimePoint{});
  EXPECT_EQ(o.at("name").as_string(), "billing");
  EXPECT_EQ(o.at("signing_secret_set").as_bool(), true);
  EXPECT_FALSE(o.contains("signing_secret"));
  EXPECT_EQ(json::serialize(o.at("breaker")),
            R"({"state":"closed","consecutive_failures":0,"open_until":null,"trips":0})");
  EXPECT_FALSE(o.at("paused").as_bool());
  EXPECT_TRUE(o.at("paused_reason").is_null());
  EXPECT_GE(o.at("allowed_concurrency").as_int64(), 1);
  EXPECT_LE(o.at("allowed_concurrency").as_int64(), 8);
  EXPECT_EQ(o.at("in_flight").as_int64(), 0);
  EXPECT_EQ(json::serialize(o).find(test::kSigningSecret), std::string::npos);
}

// Issue 11.7: header values and URL query values that look like credentials are not shown,
// nor headers the user marks secret.
TEST(CatalogJsonTest, CredentialLikeHeadersAndQueryValuesAreRedacted) {
  auto d = model::ParseDestination(json::parse(R"({"name": "d",
      "url": "https://example.com/hook?token=t0k&team=a&api_key=k3y&sig=s1g",
      "headers": {"X-Pass": "p1", "X-Session": "s2", "X-Credential": "c3", "X-Foo": "f4",
                  "X-Env": "prod"},
      "secret_headers": ["x-foo"]})"));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  json::object o = DestinationViewToJson(*d, nullptr, TimePoint{});
  const std::string text = json::serialize(o);
  for (const char* secret : {"t0k", "k3y", "s1g", "p1", "s2", "c3", "f4"}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in " << text;
  }
  EXPECT_EQ(o.at("url").as_string(),
            "https://example.com/hook?token=(redacted)&team=a&api_key=(redacted)&sig=(redacted)");
  EXPECT_EQ(o.at("headers").at("X-Env").as_string(), "prod");
  EXPECT_EQ(o.at("headers").at("X-Foo").as_string(), model::kRedacted);
}

// ';' separates query parameters too; the fragment and path parameters are redacted the same way.
TEST(CatalogJsonTest, RedactUrlCoversSemicolonsFragmentPathParametersAndUserinfo) {
  EXPECT_EQ(model::RedactUrl("http://127.0.0.1:18601/a?a=1;token=LEAK5"),
            "http://127.0.0.1:18601/a?a=1;token=(redacted)");
  EXPECT_EQ(model::RedactUrl("https://h/x?a=1&%74oken=LEAK;sig=S;b=2#access_token=F&state=s"),
            "https://h/x?a=1&%74oken=(redacted);sig=(redacted);b=2"
            "#access_token=(redacted)&state=s");
  EXPECT_EQ(model::RedactUrl("https://h/x;jsessionid=J/y;a=1;api_key=K"),
            "https://h/x;jsessionid=(redacted)/y;a=1;api_key=(redacted)");
  EXPECT_EQ(model::RedactUrl("https://user:pw@h/x"), "https://***@h/x");
  for (const char* same : {"https://h", "https://h/", "https://h/x?a=1;b=2#frag",
                           "https://h/x?token=", "https://h/x?token=(redacted)", "/rel?q"}) {
    EXPECT_EQ(model::RedactUrl(same), same);
  }
}

TEST(CatalogJsonTest, DestinationShowsTheEnginesBreakerAndPause) {
  model::Catalog c = test::MakeCatalog();
  delivery::DestinationState s;
  s.breaker.state = policy::BreakerState::kOpen;
  s.breaker.consecutive_failures = 20;
  s.breaker.trips = 2;
  s.breaker.open_until = ParseRfc3339("2026-11-30T06:30:00Z");
  s.allowed_concurrency = 3;
  s.in_flight = 1;
  s.paused = true;
  s.paused_reason = "410 Gone";
  json::object o = DestinationViewToJson(*c.FindDestination("billing"), &s, TimePoint{});
  EXPECT_EQ(json::serialize(o.at("breaker")),
            R"({"state":"open","consecutive_failures":20,"open_until":"2026-11-30T06:30:00.000Z",)"
            R"("trips":2})");
  EXPECT_TRUE(o.at("paused").as_bool());
  EXPECT_EQ(o.at("paused_reason").as_string(), "410 Gone");
  EXPECT_EQ(o.at("allowed_concurrency").as_int64(), 3);
  EXPECT_EQ(o.at("in_flight").as_int64(), 1);
}

// Half-open, the snapshot's open_until is when the probe went out: shown as probe_sent_at (while
// it is out), never as a past "open until".
TEST(CatalogJsonTest, AHalfOpenBreakerShowsWhenItsProbeWent) {
  model::Catalog c = test::MakeCatalog();
  delivery::DestinationState s;
  s.breaker.state = policy::BreakerState::kHalfOpen;
  s.breaker.consecutive_failures = 20;
  s.breaker.trips = 1;
  s.breaker.open_until = ParseRfc3339("2026-11-30T06:30:00Z");
  s.breaker.probe_in_flight = true;
  json::object o = DestinationViewToJson(*c.FindDestination("billing"), &s, TimePoint{});
  EXPECT_EQ(json::serialize(o.at("breaker")),
            R"({"state":"half_open","consecutive_failures":20,"open_until":null,"trips":1,)"
            R"("probe_sent_at":"2026-11-30T06:30:00.000Z"})");
  // The probe given back (nothing to send): none out, no time shown.
  s.breaker.probe_in_flight = false;
  o = DestinationViewToJson(*c.FindDestination("billing"), &s, TimePoint{});
  EXPECT_EQ(json::serialize(o.at("breaker")),
            R"({"state":"half_open","consecutive_failures":20,"open_until":null,"trips":1})");
}

// Right after a PATCH of max_concurrency the engine's state still has the old limit: the view
// shows what the engine will start the new one with, never more than the new maximum.
TEST(CatalogJsonTest, AllowedConcurrencyFollowsAChangedMaximum) {
  model::Catalog c = test::MakeCatalog();
  model::Destination d = *c.FindDestination("billing");
  delivery::DestinationState s;
  s.allowed_concurrency = 16;
  s.max_concurrency = 16;
  d.max_concurrency = 16;
  EXPECT_EQ(DestinationViewToJson(d, &s, TimePoint{}).at("allowed_concurrency").as_int64(), 16);
  d.max_concurrency = 4;
  EXPECT_EQ(DestinationViewToJson(d, &s, TimePoint{}).at("allowed_concurrency").as_int64(), 4);
  s.allowed_concurrency = 2;  // the engine has it now, and halved it after a 503
  s.max_concurrency = 4;
  EXPECT_EQ(DestinationViewToJson(d, &s, TimePoint{}).at("allowed_concurrency").as_int64(), 2);
}

TEST(CatalogJsonTest, ListsAreItemsWithNullCursor) {
  model::Catalog c = test::MakeCatalog();
  std::map<std::string, delivery::DestinationState> states;
  states["crm"].allowed_concurrency = 5;
  json::object d = DestinationListToJson(c, states, TimePoint{});
  ASSERT_EQ(d.at("items").as_array().size(), 2u);
  EXPECT_TRUE(d.at("next_cursor").is_null());
  EXPECT_EQ(d.at("items").as_array()[0].at("name").as_string(), "billing");
  const json::value& crm = d.at("items").as_array()[1];
  EXPECT_EQ(crm.at("name").as_string(), "crm");
  EXPECT_TRUE(crm.at("paused").as_bool());  // paused in the configuration
  EXPECT_EQ(crm.at("allowed_concurrency").as_int64(), 5);

  json::object s = SourceListToJson(c, TimePoint{});
  ASSERT_EQ(s.at("items").as_array().size(), 2u);
  EXPECT_TRUE(s.at("next_cursor").is_null());
  EXPECT_EQ(s.at("items").as_array()[0].at("name").as_string(), "github");
  const std::string text = json::serialize(s);
  EXPECT_EQ(text.find(test::kVerifySecret), std::string::npos) << text;

  json::object r = RouteListToJson(c);
  EXPECT_EQ(json::serialize(r),
            R"({"items":[{"id":"github:billing","source":"github","destination":"billing",)"
            R"("types":[],"filter":null,"transform":null},{"id":"github:crm","source":"github",)"
            R"("destination":"crm","types":[],"filter":null,"transform":null}],)"
            R"("next_cursor":null})");
}

TEST(ControlBodyTest, ParsesOptionalBodies) {
  EXPECT_EQ(*ParsePauseBody("", "default"), "default");
  EXPECT_EQ(*ParsePauseBody(" \n", "default"), "default");
  EXPECT_EQ(*ParsePauseBody(R"({"reason": "deploy"})", "default"), "deploy");
  EXPECT_EQ(ParsePauseBody(R"({"reason": ""})", "d").status().field(), "reason");
  EXPECT_EQ(ParsePauseBody(R"({"reasn": "x"})", "d").status().field(), "reasn");
  EXPECT_EQ(ParsePauseBody("{", "d").status().field(), "body");
  EXPECT_EQ(ParsePauseBody("\"x\"", "d").status().field(), "body");
  EXPECT_TRUE(ParseEmptyBody("").ok());
  EXPECT_TRUE(ParseEmptyBody("{}").ok());
  EXPECT_FALSE(ParseEmptyBody(R"({"a": 1})").ok());
  EXPECT_FALSE(ParseReplayBody("").value().has_value());
  EXPECT_EQ(ParseReplayBody(R"({"destination": "billing"})").value(), "billing");
  EXPECT_EQ(ParseReplayBody(R"({"destination": 1})").status().field(), "destination");
  EXPECT_EQ(ParseReplayBody(R"({"dest": "x"})").status().code(), Status::Code::kInvalidArgument);
}

TEST(AuditJsonTest, ShowsEveryFieldAndParsesDetail) {
  store::AuditEntry e;
  e.id = 7;
  e.at = TimePoint(Duration(1'700'000'000'123));
  e.actor = "token:ab12cd34";
  e.action = "replay";
  e.target = "01J";
  e.count = 2;
  e.detail = R"({"destinations":["a","b"]})";
  boost::json::object o = AuditEntryToJson(e);
  EXPECT_EQ(o.at("id").as_int64(), 7);
  EXPECT_EQ(o.at("at").as_string(), FormatRfc3339(e.at));
  EXPECT_EQ(o.at("actor").as_string(), "token:ab12cd34");
  EXPECT_EQ(o.at("action").as_string(), "replay");
  EXPECT_EQ(o.at("target").as_string(), "01J");
  EXPECT_EQ(o.at("count").as_int64(), 2);
  EXPECT_EQ(o.at("detail").at("destinations").as_array().size(), 2u);
  e.detail.clear();
  EXPECT_TRUE(AuditEntryToJson(e).at("detail").is_null());
  store::AuditPage page{{e}, ""};
  EXPECT_TRUE(AuditPageToJson(page).at("next_cursor").is_null());
}

// ---- GET /api/v1/simulate query ----

TEST(SimulateQueryTest, PoliciesRepeatInOrderAndOtherParametersOnce) {
  auto q = ParseSimulateQuery(
      Query("events=300&policy=pro&policy_json=%7B%22jitter%22%3A%22full%22%7D&policy=free&seed=7"
            "&fail_window=1s&recover_at=2m&capacity=20%2Fs&destination=billing"));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->input.events, "300");
  EXPECT_EQ(q->input.seed, "7");
  EXPECT_EQ(q->input.fail_window, "1s");
  EXPECT_EQ(q->input.recover_at, "2m");
  EXPECT_EQ(q->input.capacity, "20/s");
  EXPECT_EQ(q->destination, "billing");
  ASSERT_EQ(q->input.policies.size(), 3u);
  EXPECT_EQ(q->input.policies[0].text, "pro");
  EXPECT_EQ(q->input.policies[1].kind, policy::PolicyArgument::Kind::kJson);
  EXPECT_EQ(q->input.policies[1].text, R"({"jitter":"full"})");
  EXPECT_EQ(q->input.policies[2].text, "free");

  auto empty = ParseSimulateQuery(Query(""));
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->input.events || empty->destination);
  EXPECT_TRUE(empty->input.policies.empty());
}

TEST(SimulateQueryTest, MistakesNameTheParameter) {
  for (const auto& [query, field] : std::vector<std::pair<std::string, std::string>>{
           {"events=1&events=2", "events"},
           {"evnets=1", "evnets"},
           {"destination=", "destination"},
           {"seed=%zz", "seed"},
           {"=5", "query"},
       }) {
    auto q = ParseSimulateQuery(Query(query));
    ASSERT_FALSE(q.ok()) << query;
    EXPECT_EQ(q.status().code(), Status::Code::kInvalidArgument) << query;
    EXPECT_EQ(q.status().field(), field) << query << ": " << q.status().message();
  }
  // An empty value is given, not absent: the scenario's parser refuses it.
  auto q = ParseSimulateQuery(Query("events="));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->input.events, "");
}

// Issue 32.3: what holds a destination's paused deliveries, by precedence: the catalog's pause,
// the stored pause (the operator's, or the engine's after 410 Gone), the breaker (with when it
// half-opens while open); nothing for a closed breaker and no pause. Only a paused delivery
// gets a cause.
TEST(PauseCauseTest, NamesWhatHoldsTheDeliveriesBack) {
  const TimePoint t = FromUnixMillis(1'800'000'000'000);
  store::DestinationControl none;
  EXPECT_EQ(PauseCauseOf(false, none).by, nullptr);
  store::DestinationControl open;
  open.breaker.state = policy::BreakerState::kOpen;
  open.breaker.open_until = t;
  PauseCause c = PauseCauseOf(false, open);
  ASSERT_NE(c.by, nullptr);
  EXPECT_STREQ(c.by, "breaker");
  EXPECT_EQ(c.breaker_open_until, t);
  store::DestinationControl half = open;
  half.breaker.state = policy::BreakerState::kHalfOpen;
  c = PauseCauseOf(false, half);
  EXPECT_STREQ(c.by, "breaker");
  EXPECT_EQ(c.breaker_open_until, std::nullopt);
  store::DestinationControl paused = open;
  paused.pause = store::DestinationPause{"paused via the API", t};
  EXPECT_STREQ(PauseCauseOf(false, paused).by, "operator");
  EXPECT_EQ(PauseCauseOf(false, paused).breaker_open_until, std::nullopt);
  paused.pause->reason = std::string(store::kGonePauseReason);
  EXPECT_STREQ(PauseCauseOf(false, paused).by, "gone");
  EXPECT_STREQ(PauseCauseOf(true, paused).by, "config");

  PauseCauses causes{{"a", PauseCauseOf(false, open)}};
  json::object d;
  AddPauseCause(d, "a", store::DeliveryStatus::kPaused, &causes);
  EXPECT_EQ(d.at("paused_by"), "breaker");
  EXPECT_EQ(d.at("breaker_open_until"), json::string(FormatRfc3339(t)));
  AddPauseCause(d, "a", store::DeliveryStatus::kScheduled, &causes);
  EXPECT_TRUE(d.at("paused_by").is_null());
  EXPECT_TRUE(d.at("breaker_open_until").is_null());
}

}  // namespace
}  // namespace hookrelay::api
