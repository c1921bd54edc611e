#include "ingest/ingest_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/json.hpp>
#include <cerrno>
#include <latch>

#include "common/clock.h"
#include "common/crypto.h"
#include "store/sqlite/sqlite_store.h"
#include "support/process.h"

namespace hookrelay::ingest {
namespace {

http::Request MakeRequest(http::HeaderList headers, std::string body) {
  http::Request r;
  r.method = "POST";
  r.headers = std::move(headers);
  r.body = std::move(body);
  return r;
}

model::Catalog TwoDestinations() {
  model::Catalog c;
  model::Source s;
  s.name = "src";
  c.sources["src"] = s;
  model::Destination a;
  a.name = "a";
  a.url = "http://a.example/";
  a.policy = *policy::PresetPolicy("pro");  // replay window 30d
  model::Destination b = a;
  b.name = "b";
  b.paused = true;
  b.policy = *policy::PresetPolicy("scale");  // replay window 90d
  c.destinations["a"] = a;
  c.destinations["b"] = b;
  c.routes = {{"r1", "src", "a"}, {"r2", "src", "b"}};
  return c;
}

TEST(KeptHeadersTest, DropsHopByHopAndFramingKeepsTheRestInOrder) {
  http::HeaderList in = {{"Host", "x"},
                         {"Connection", "keep-alive, X-Hop"},
                         {"X-Hop", "1"},
                         {"Content-Length", "5"},
                         {"Transfer-Encoding", "chunked"},
                         {"Keep-Alive", "timeout=5"},
                         {"Expect", "100-continue"},
                         {"Content-Type", "application/json"},
                         {"X-GitHub-Delivery", "abc"},
                         {"x-custom", "a"},
                         {"X-Custom", "b"}};
  std::vector<store::Header> kept = KeptHeaders(in);
  std::vector<std::string> names;
  for (const auto& h : kept) names.push_back(h.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Host", "Content-Type", "X-GitHub-Delivery",
                                             "x-custom", "X-Custom"}));
  // The moving overload keeps exactly the same fields, values included.
  http::HeaderList moved_from = in;
  EXPECT_EQ(KeptHeaders(std::move(moved_from)), kept);
}

// Issue 11.7: credentials sent to hookrelay itself are stored redacted (they are never
// forwarded either); the name stays, so the event shows that one was sent.
TEST(KeptHeadersTest, CredentialsMeantForHookrelayAreStoredRedacted) {
  http::HeaderList in = {{"Authorization", "Bearer hunter2"},
                         {"cookie", "session=abc"},
                         {"Proxy-Authorization", "Basic eA=="},
                         {"X-Hub-Signature-256", "sha256=00ff"},
                         {"X-GitHub-Event", "push"}};
  std::vector<store::Header> kept = KeptHeaders(in);
  EXPECT_EQ(kept, (std::vector<store::Header>{{"Authorization", "(redacted)"},
                                              {"cookie", "(redacted)"},
                                              {"X-Hub-Signature-256", "sha256=00ff"},
                                              {"X-GitHub-Event", "push"}}));
}

// Issue 11.8: a Standard Webhooks source needs "whsec_" + base64, as destinations do.
TEST(ParseSourceTest, StandardSecretWithoutWhsecPrefixIsRefused) {
  auto parsed = model::ParseSource(boost::json::parse(
      R"({"name": "s", "verify": {"scheme": "standard", "secrets": ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]}})"));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().field(), "verify.secrets[0]");
  EXPECT_NE(parsed.status().message().find("whsec_"), std::string::npos)
      << parsed.status().message();
  parsed = model::ParseSource(boost::json::parse(
      R"({"name": "s", "verify": {"scheme": "standard", "secrets": ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_!!"]}})"));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().field(), "verify.secrets[1]");
  // Other schemes take any non-empty secret.
  EXPECT_TRUE(model::ParseSource(
                  boost::json::parse(
                      R"({"name": "s", "verify": {"scheme": "github", "secrets": ["plain"]}})"))
                  .ok());
}

TEST(BuildEventTest, TakesTheBodyAndFieldsAsReceived) {
  model::Catalog c = TwoDestinations();
  c.sources["src"].dedup = {model::DedupRule::Kind::kJson, "a"};
  const std::string body = R"({"a":"k1"})";
  http::Request r = MakeRequest({{"Content-Type", "application/json"}, {"X-Sig", "s1"}}, body);
  store::NewEvent e = BuildEvent(c, c.sources["src"], r, TimePoint{});
  EXPECT_EQ(e.body, body);
  EXPECT_EQ(e.content_type, "application/json");
  EXPECT_EQ(e.dedup_key, "k1");
  ASSERT_EQ(e.headers.size(), 2u);
  EXPECT_EQ(e.headers[1].name, "X-Sig");
  EXPECT_EQ(e.headers[1].value, "s1");
  // Moved in (as ingest does), the same event: the dedup key is read before the body moves.
  store::NewEvent moved = BuildEvent(c, c.sources["src"], std::move(r), TimePoint{});
  EXPECT_EQ(moved.body, body);
  EXPECT_EQ(moved.headers, e.headers);
  EXPECT_EQ(moved.content_type, "application/json");
  EXPECT_EQ(moved.dedup_key, "k1");
}

model::Destination OrderedDestination(const std::string& order_key_json) {
  auto d = model::ParseDestination(boost::json::parse(
      R"({"name": "d", "url": "http://d.example/", "order_key": )" + order_key_json + "}"));
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : model::Destination{};
}

TEST(OrderKeyTest, ParsedWithPreciseErrors) {
  auto parse = [](const std::string& fields) {
    return model::ParseDestination(
        boost::json::parse(R"({"name": "d", "url": "http://d.example/", )" + fields + "}"));
  };
  auto whole = parse(R"("ordered": true)");
  ASSERT_TRUE(whole.ok());
  EXPECT_TRUE(whole->ordered);
  EXPECT_EQ(whole->order_key.kind, model::OrderKey::Kind::kNone);
  EXPECT_EQ(boost::json::serialize(model::DestinationToJson(*whole).at("order_key")), "null");
  auto keyed = parse(R"("order_key": {"json": "data.object.customer"})");
  ASSERT_TRUE(keyed.ok());
  EXPECT_TRUE(keyed->ordered);  // an order key orders the destination per key
  EXPECT_EQ(keyed->order_key,
            (model::OrderKey{model::OrderKey::Kind::kJson, "data.object.customer"}));
  EXPECT_EQ(boost::json::serialize(model::DestinationToJson(*keyed).at("order_key")),
            R"({"json":"data.object.customer"})");
  // Round trip: the order_key DestinationToJson shows parses back to the same key.
  auto again = model::ParseDestination(
      boost::json::object{{"name", "d"},
                          {"url", "http://d.example/"},
                          {"order_key", model::OrderKeyToJson(keyed->order_key)}});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->order_key, keyed->order_key);
  EXPECT_TRUE(parse(R"("ordered": true, "order_key": {"header": "X-Shop-Domain"})").ok());

  struct Bad {
    std::string fields, field, message;
  };
  for (const Bad& b : std::vector<Bad>{
           {R"("ordered": "yes")", "ordered", ""},
           {R"("order_key": "X-Shop")", "order_key", "must be {\"header\""},
           {R"("order_key": {})", "order_key", "must be"},
           {R"("order_key": {"header": "a", "json": "b"})", "order_key", "must be"},
           {R"("order_key": {"xml": "a"})", "order_key.xml", "unknown order key"},
           {R"("order_key": {"header": ""})", "order_key.header", "must not be empty"},
           {R"("order_key": {"header": "X Key"})", "order_key.header", "not a valid HTTP header"},
           {R"("order_key": {"header": 5})", "order_key.header", ""},
           {R"("order_key": {"json": "a..b"})", "order_key.json", "dotted path"},
           {R"("order_key": {"json": ".a"})", "order_key.json", "dotted path"},
           {R"("order_key": {"json": "a."})", "order_key.json", "dotted path"},
           {R"("order_key": {"json": ")" + std::string(300, 'a') + R"("})", "order_key.json",
            "longer than 256"},
           {R"("ordered": false, "order_key": {"header": "X"})", "order_key",
            "cannot be set with \"ordered\": false"},
       }) {
    auto d = parse(b.fields);
    ASSERT_FALSE(d.ok()) << b.fields;
    EXPECT_EQ(d.status().field(), b.field) << b.fields << ": " << d.status().ToString();
    EXPECT_NE(d.status().message().find(b.message), std::string::npos)
        << b.fields << ": " << d.status().ToString();
  }
}

TEST(OrderKeyTest, ComputedFromTheHeaderOrTheJsonPath) {
  std::optional<boost::json::value> parsed;
  model::Destination unordered;
  EXPECT_FALSE(OrderKeyOf(unordered, MakeRequest({}, "{}"), "{}", parsed).has_value());
  model::Destination whole = unordered;
  whole.ordered = true;
  EXPECT_EQ(OrderKeyOf(whole, MakeRequest({}, "x"), "x", parsed), "");

  model::Destination header = OrderedDestination(R"({"header": "X-Shop-Domain"})");
  EXPECT_EQ(OrderKeyOf(header, MakeRequest({{"x-shop-domain", "a.myshopify.com"}}, ""), "", parsed),
            "a.myshopify.com");
  // Without the key (missing or empty header): unordered.
  EXPECT_FALSE(OrderKeyOf(header, MakeRequest({}, ""), "", parsed).has_value());
  EXPECT_FALSE(
      OrderKeyOf(header, MakeRequest({{"X-Shop-Domain", ""}}, ""), "", parsed).has_value());

  model::Destination path = OrderedDestination(R"({"json": "data.object.customer"})");
  auto key = [&](std::string body) {
    std::optional<boost::json::value> fresh;
    return OrderKeyOf(path, MakeRequest({}, body), body, fresh);
  };
  EXPECT_EQ(key(R"({"data": {"object": {"customer": "cus_1"}}})"), "cus_1");
  EXPECT_EQ(key(R"({"data": {"object": {"customer": 42}}})"), "42");
  EXPECT_EQ(key(R"({"data": {"object": {"customer": true}}})"), "true");
  for (std::string body :
       {R"({"data": {"object": {}}})", R"({"data": {"object": {"customer": null}}})",
        R"({"data": {"object": {"customer": ""}}})",
        R"({"data": {"object": {"customer": {"id": 1}}}})", R"({"data": [1, 2]})", R"([1])",
        "not json", "", R"({"data": {"object": {"customer": "x"})"}) {
    EXPECT_FALSE(key(body).has_value()) << body;
  }
  // A fan-out parses the body once: the parse is kept for the next destination.
  std::optional<boost::json::value> shared;
  const std::string body = R"({"data": {"object": {"customer": "c"}}})";
  EXPECT_EQ(OrderKeyOf(path, MakeRequest({}, body), body, shared), "c");
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(OrderKeyOf(path, MakeRequest({}, ""), "", shared), "c");
}

// A key PostgreSQL could not store or index, or a terminal could not show, is kept as its hash:
// the same value the same queue, different values different queues.
TEST(OrderKeyTest, KeysThatCannotBeStoredAsTheyAreAreHashed) {
  EXPECT_EQ(StoredOrderKey("cus_42"), "cus_42");
  EXPECT_EQ(StoredOrderKey("caf\u00e9 \u00fcber"), "caf\u00e9 \u00fcber");  // UTF-8 stays
  const std::string at_limit(kMaxPlainOrderKey, 'k');
  EXPECT_EQ(StoredOrderKey(at_limit), at_limit);
  for (const std::string& odd :
       {at_limit + "k", std::string("a\0b", 3), std::string("\xff\xfe"), std::string("a\x1b[2J"),
        std::string("tab\there"), std::string("del\x7f")}) {
    const std::string key = StoredOrderKey(odd);
    EXPECT_EQ(key, "sha256:" + HexEncode(Sha256(odd))) << odd;
    EXPECT_EQ(key.size(), 71u);
    EXPECT_EQ(StoredOrderKey(odd), key);  // the same value, the same queue
  }
  EXPECT_NE(StoredOrderKey(std::string("a\0b", 3)), StoredOrderKey(std::string("a\0c", 3)));
  // Through OrderKeyOf: a header with obs-text, a JSON string with a NUL.
  std::optional<boost::json::value> parsed;
  model::Destination header = OrderedDestination(R"({"header": "X-Key"})");
  EXPECT_EQ(OrderKeyOf(header, MakeRequest({{"X-Key", "\xff"}}, ""), "", parsed),
            "sha256:" + HexEncode(Sha256("\xff")));
  model::Destination path = OrderedDestination(R"({"json": "k"})");
  const std::string body = R"({"k": "a\u0000b"})";
  EXPECT_EQ(OrderKeyOf(path, MakeRequest({}, body), body, parsed),
            "sha256:" + HexEncode(Sha256(std::string("a\0b", 3))));
}

TEST(DedupKeyTest, HeaderAndJsonField) {
  model::DedupRule header{model::DedupRule::Kind::kHeader, "X-GitHub-Delivery"};
  EXPECT_EQ(DedupKey(header, MakeRequest({{"x-github-delivery", "d1"}}, ""), ""), "d1");
  EXPECT_FALSE(DedupKey(header, MakeRequest({}, ""), "").has_value());
  EXPECT_FALSE(DedupKey(header, MakeRequest({{"X-GitHub-Delivery", ""}}, ""), "").has_value());

  model::DedupRule field{model::DedupRule::Kind::kJson, "id"};
  http::Request r = MakeRequest({}, "");
  EXPECT_EQ(DedupKey(field, r, R"({"id":"evt_1"})"), "evt_1");
  EXPECT_EQ(DedupKey(field, r, R"({"id":42})"),
            "\xFF"
            "number:42");
  EXPECT_FALSE(DedupKey(field, r, R"({"other":1})").has_value());
  EXPECT_FALSE(DedupKey(field, r, "not json").has_value());
  EXPECT_FALSE(DedupKey(field, r, R"([{"id":1}])").has_value());
  EXPECT_FALSE(DedupKey(field, r, R"({"id":{"nested":1}})").has_value());
  EXPECT_FALSE(DedupKey(model::DedupRule{}, r, R"({"id":1})").has_value());
}

// A key longer than 1 KiB is kept as its hash (PostgreSQL's index holds ~2,700 bytes an entry):
// the same value the same key, and never equal to a string a provider sends.
TEST(DedupKeyTest, LongKeysAreHashed) {
  model::DedupRule header{model::DedupRule::Kind::kHeader, "X-Id"};
  const std::string at_limit(kMaxPlainDedupKey, 'd');
  EXPECT_EQ(DedupKey(header, MakeRequest({{"X-Id", at_limit}}, ""), ""), at_limit);
  const std::string longer = at_limit + "d";
  EXPECT_EQ(DedupKey(header, MakeRequest({{"X-Id", longer}}, ""), ""),
            "\xFF"
            "sha256:" +
                HexEncode(Sha256(longer)));
  model::DedupRule field{model::DedupRule::Kind::kJson, "id"};
  const std::string body = R"({"id":")" + longer + R"("})";
  EXPECT_EQ(DedupKey(field, MakeRequest({}, ""), body),
            DedupKey(header, MakeRequest({{"X-Id", longer}}, ""), ""));
}

// Different JSON values are different keys: by type, and numbers by their exact text. A string
// keeps the form keys always had (a provider's retry across an upgrade still matches).
TEST(DedupKeyTest, JsonFieldKeysDifferByTypeAndExactText) {
  model::DedupRule field{model::DedupRule::Kind::kJson, "id"};
  http::Request r = MakeRequest({}, "");
  auto key = [&](const std::string& body) { return DedupKey(field, r, body); };
  const std::pair<std::string, std::string> different[] = {
      {R"({"id":true})", R"({"id":"true"})"},
      {R"({"id":1})", R"({"id":"1"})"},
      {R"({"id":1})", R"({"id":1.0})"},
      {R"({"id":1e999})", "{\"id\":" + std::string(400, '9') + "}"},
      {R"({"id":0.1})", R"({"id":0.10000000000000001})"},
      {R"({"id":false})", R"({"id":true})"},
      {R"({"id":18446744073709551616})", R"({"id":18446744073709551617})"},
  };
  for (const auto& [a, b] : different) {
    ASSERT_TRUE(key(a).has_value()) << a;
    ASSERT_TRUE(key(b).has_value()) << b;
    EXPECT_NE(*key(a), *key(b)) << a << " vs " << b;
  }
  EXPECT_EQ(key(R"({"id":"evt_1"})"), "evt_1");
  EXPECT_EQ(key(R"({"n":{"id":"inner"},"id":"outer","x":[{"id":2}]})"), "outer");
  EXPECT_EQ(key(R"({"id":"a\u00e9\"b"})"), "a\u00e9\"b");
  EXPECT_EQ(key(R"( {"id": -1.5e3} )"),
            "\xFF"
            "number:-1.5e3");
  EXPECT_EQ(key(R"({"id":true})"),
            "\xFF"
            "bool:true");
  EXPECT_EQ(key(R"({"id":1,"id":"last"})"), "last");
  for (const char* none : {R"({"id":null})", R"({"id":""})", R"({"id":[1]})", R"({"id":1} x)",
                           R"({"id":1)", R"("id")", "{}"}) {
    EXPECT_FALSE(key(none).has_value()) << none;
  }
}

TEST(BuildEventTest, OneDeliveryPerRoutePausedStaysPaused) {
  model::Catalog c = TwoDestinations();
  c.sources["src"].dedup = {model::DedupRule::Kind::kHeader, "Idempotency-Key"};
  http::Request r = MakeRequest(
      {{"Content-Type", "application/json"}, {"Idempotency-Key", "k"}, {"Connection", "close"}},
      std::string("\0{}", 3));
  const TimePoint now = FromUnixMillis(1'700'000'000'000);
  store::NewEvent e = BuildEvent(c, c.sources["src"], r, now);
  EXPECT_EQ(e.source, "src");
  EXPECT_EQ(e.received_at, now);
  EXPECT_EQ(e.body, std::string("\0{}", 3));
  EXPECT_EQ(e.content_type, "application/json");
  EXPECT_EQ(e.headers.size(), 2u);
  EXPECT_EQ(e.dedup_key, "k");
  EXPECT_EQ(e.dedup_window, std::chrono::hours(24 * 90)) << "the longest replay window";
  ASSERT_EQ(e.deliveries.size(), 2u);
  EXPECT_EQ(e.deliveries[0].destination, "a");
  EXPECT_EQ(e.deliveries[0].max_attempts, 5);
  EXPECT_EQ(e.deliveries[0].next_attempt_at, now);
  EXPECT_EQ(e.deliveries[0].status, store::DeliveryStatus::kScheduled);
  EXPECT_EQ(e.deliveries[1].destination, "b");
  EXPECT_EQ(e.deliveries[1].max_attempts, 10);
  EXPECT_EQ(e.deliveries[1].status, store::DeliveryStatus::kPaused);
}

TEST(BuildEventTest, SourceWithoutRoutesStillStoresTheEvent) {
  model::Catalog c = TwoDestinations();
  c.routes.clear();
  store::NewEvent e = BuildEvent(c, c.sources["src"], MakeRequest({}, "x"), TimePoint{});
  EXPECT_TRUE(e.deliveries.empty());
  EXPECT_FALSE(e.dedup_key.has_value());
  EXPECT_EQ(DedupWindow(c, "src"), std::chrono::hours(24 * 30));
}

// The delivery engine is woken once per batch of new events the store commits together, not once
// per event (at full ingest rate the per-event wake-ups cost about a tenth of the CPU), and still
// after every new event's 202.
TEST(IngestServiceTest, WakesTheEngineOncePerBatch) {
  hookrelay::testing::TempDir dir;
  FakeClock clock;
  Result<std::unique_ptr<store::SqliteStore>> opened =
      store::SqliteStore::Open({.dir = dir.path()}, clock);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  store::SqliteStore& store = **opened;
  model::Registry registry(TwoDestinations());
  IngestService ingest(registry, store, clock);
  std::atomic<int> wakes{0};
  ingest.SetOnStored([&] { ++wakes; });
  constexpr int kN = 5;
  std::latch answered(kN);
  {
    // Hold the store's writer so that the requests below are committed as one batch.
    std::latch entered(1), release(1);
    store.TEST_RunOnWriter([&] {
      entered.count_down();
      release.wait();
    });
    entered.wait();
    for (int i = 0; i < kN; ++i) {
      ingest.Handle(MakeRequest({{"Content-Type", "application/json"}}, "{}"), "src",
                    [&](http::Response r) {
                      EXPECT_EQ(r.status, 202) << r.body;
                      answered.count_down();
                    });
    }
    release.count_down();
    answered.wait();
  }
  opened->reset();  // the writer has finished every completion
  EXPECT_EQ(wakes.load(), 1);
}

// The store acknowledges an event only once its log is synced: when the sync fails, the sender
// gets 503 (retry later), never 202.
TEST(IngestServiceTest, AFailedSyncOfTheStoreAnswers503) {
  hookrelay::testing::TempDir dir;
  FakeClock clock;
  store::SqliteOptions options;
  options.dir = dir.path();
  options.wal_sync = [](int) {
    errno = EIO;
    return -1;
  };
  Result<std::unique_ptr<store::SqliteStore>> opened = store::SqliteStore::Open(options, clock);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  model::Registry registry(TwoDestinations());
  IngestService ingest(registry, **opened, clock);
  std::atomic<int> wakes{0};
  ingest.SetOnStored([&] { ++wakes; });
  std::latch answered(1);
  http::Response response;
  ingest.Handle(MakeRequest({{"Content-Type", "application/json"}}, "{}"), "src",
                [&](http::Response r) {
                  response = std::move(r);
                  answered.count_down();
                });
  answered.wait();
  EXPECT_EQ(response.status, 503) << response.body;
  // Retry later, without the store's internals (the log's path and errno are in the log only).
  EXPECT_NE(response.body.find("the event was not stored (the store is unavailable), retry later"),
            std::string::npos)
      << response.body;
  EXPECT_EQ(response.body.find("hookrelay.db"), std::string::npos) << response.body;
  opened->reset();
  EXPECT_EQ(ingest.stats().store_failures.load(), 1);
  EXPECT_EQ(ingest.stats().accepted.load(), 0);
  EXPECT_EQ(wakes.load(), 0);
}

}  // namespace
}  // namespace hookrelay::ingest
