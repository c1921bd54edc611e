// Black-box tests of the delivery engine: the real `hookrelay serve` binary delivering to a real
// scriptable HTTP sink on 127.0.0.1, with millisecond policies; the resulting state is read back
// from the store the server wrote.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "common/clock.h"
#include "integration/integration_util.h"
#include "store/store.h"
#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/integration_test.h"
#include "support/process.h"
#include "support/raw_responder.h"
#include "support/sink.h"
#include "support/smtp_server.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using testing::HookrelayServer;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::RawResponder;
using testing::Sink;
using testing::SinkRequest;
using testing::SinkResponse;
using testing::TempDir;

using Destinations = std::vector<std::pair<std::string, testing::TomlFields>>;

// A config with one source "src" routed to each destination (its name, then its fields).
testing::Config Config(const Destinations& destinations) {
  testing::Config config;
  config.Set("delivery.lease_margin", "1s").Set("delivery.poll_interval", "100ms").Source("src");
  for (const auto& d : destinations) {
    testing::TomlFields fields{{"name", d.first}, {"allow_private", true}};
    fields.insert(fields.end(), d.second.begin(), d.second.end());
    config.Add("destinations", std::move(fields));
  }
  for (const auto& d : destinations) config.Route("src", d.first);
  return config;
}

// A policy from its fields written as TOML (`strategy = "ladder", …`): the inline table.
testing::TomlValue Policy(const std::string& toml_fields) {
  return testing::TomlValue::Raw("{ " + toml_fields + " }");
}

// `{ threshold = N, open = [...] }`.
testing::TomlValue Breaker(int threshold, std::initializer_list<testing::TomlValue> open) {
  return testing::TomlInline({{"threshold", threshold}, {"open", testing::TomlArray(open)}});
}

using testing::OpenStoreAt;

class DeliveryTest : public testing::IntegrationTest {
 protected:
  DeliveryTest() { admin_token_ = "test-admin-token-0123"; }
  void Start(const std::string& config, std::vector<std::string> extra = {}) {
    StartServer(config, std::move(extra));
  }

  std::string Ingest(const std::string& body, const testing::HeaderList& headers = {}) {
    HttpConnection conn(server_->port());
    HttpResponse r = conn.Send("POST", "/in/src", headers, body);
    EXPECT_EQ(r.status, 202) << r.body;
    return r.status == 202 ? std::string(json::parse(r.body).at("id").as_string()) : "";
  }

  // Stops the server (in-flight attempts get recorded) and returns the deliveries of `id`.
  std::vector<store::Delivery> StopAndLoad(const std::string& id) {
    EXPECT_EQ(server_->Stop(), 0) << server_->output();
    store_ = OpenStoreAt(data_dir());
    auto d = store_->GetDeliveries(id);
    EXPECT_TRUE(d.ok());
    return d.ok() ? *d : std::vector<store::Delivery>{};
  }
  // Polls /metrics until a line reads `line` (20 s at most).
  bool WaitForMetric(const std::string& line) {
    return test::WaitFor(
        [&] {
          HttpConnection conn(server_->port());
          return conn.Send("GET", "/metrics").body.find(line + "\n") != std::string::npos;
        },
        20s, 20ms);
  }
  // The status of `id`'s delivery to `destination` as the API shows it (what the store
  // committed), "" when there is none.
  std::string StatusOf(const std::string& id, const std::string& destination) {
    HttpConnection api(server_->port());
    HttpResponse r = api.Send("GET", "/api/v1/events/" + id,
                              {{"Authorization", "Bearer test-admin-token-0123"}});
    if (r.status != 200) return "";
    const json::value event = json::parse(r.body);
    std::string status;
    for (const json::value& d : event.at("deliveries").as_array()) {
      if (d.at("destination").as_string() == destination) {
        status = std::string(d.at("status").as_string());  // the latest chain's, last
      }
    }
    return status;
  }
  bool WaitForStatus(const std::string& id, const std::string& destination,
                     const std::string& status) {
    return test::WaitFor([&] { return StatusOf(id, destination) == status; }, 20s, 10ms);
  }
  std::vector<store::Attempt> Attempts(int64_t delivery_id) {
    auto a = store_->GetAttempts(delivery_id);
    EXPECT_TRUE(a.ok());
    return a.ok() ? *a : std::vector<store::Attempt>{};
  }

  std::unique_ptr<store::Store> store_;
};

const std::string kFast =
    R"(strategy = "exponential", jitter = "none", base = "50ms", cap = "200ms", max_attempts = 5, max_duration = "1m", timeout = "2s")";

TEST_F(DeliveryTest, TwoFailuresThenDeliveredAtAttemptThree) {
  sink_.Enqueue(SinkResponse::Status(500));
  sink_.Enqueue(SinkResponse::Status(500));
  Start(Config({{"d", {{"url", sink_.url("/hooks")}, {"policy", Policy(kFast)}}}}));
  const std::string body = R"({"n":1,"text":"héllo"})";
  const std::string id = Ingest(body, {{"Content-Type", "application/json"}});
  ASSERT_TRUE(sink_.WaitForRequests(3, 10s));
  auto deliveries = StopAndLoad(id);
  ASSERT_EQ(deliveries.size(), 1u);
  EXPECT_EQ(deliveries[0].status, store::DeliveryStatus::kDelivered);
  EXPECT_EQ(deliveries[0].attempts, 3);
  auto attempts = Attempts(deliveries[0].id);
  ASSERT_EQ(attempts.size(), 3u);
  EXPECT_EQ(attempts[0].status_code, 500);
  EXPECT_EQ(attempts[1].status_code, 500);
  EXPECT_EQ(attempts[2].status_code, 200);
  // Every attempt: same body, content type and webhook-id; the standard headers are present.
  auto requests = sink_.Requests();
  ASSERT_EQ(requests.size(), 3u);
  for (const SinkRequest& r : requests) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.path, "/hooks");
    EXPECT_EQ(r.body, body);
    EXPECT_EQ(r.Header("webhook-id"), id);
    EXPECT_TRUE(r.Header("webhook-timestamp").has_value());
    EXPECT_EQ(r.Header("content-type"), "application/json");
    EXPECT_EQ(r.Header("user-agent").value_or("").rfind("hookrelay/", 0), 0u);
  }
}

// Issue 10.3: the relay is transparent by default: the received headers reach the destination
// (but not hop-by-hop ones, Host, credentials meant for hookrelay, or a received webhook-id),
// hookrelay's own and the destination's configured headers win; forward_headers "none" or a
// list narrows it.
TEST_F(DeliveryTest, ReceivedHeadersAreForwardedAsForwardHeadersSays) {
  const testing::TomlValue headers = testing::TomlInline({{"X-Env", "prod"}});
  Start(Config(
      {{"all", {{"url", sink_.url("/all")}, {"headers", headers}, {"policy", Policy(kFast)}}},
       {"none",
        {{"url", sink_.url("/none")},
         {"forward_headers", "none"},
         {"headers", headers},
         {"policy", Policy(kFast)}}},
       {"list",
        {{"url", sink_.url("/list")},
         {"forward_headers", testing::TomlArray({"x-github-event", "X-Absent"})},
         {"headers", headers},
         {"policy", Policy(kFast)}}}}));
  const std::string id =
      Ingest(R"({"action":"opened"})", {{"Content-Type", "application/json"},
                                        {"User-Agent", "GitHub-Hookshot/abc123"},
                                        {"X-GitHub-Event", "pull_request"},
                                        {"X-Hub-Signature-256", "sha256=0123"},
                                        {"Authorization", "Bearer for-hookrelay"},
                                        {"Cookie", "c=1"},
                                        {"Connection", "X-Hop"},
                                        {"X-Hop", "1"},
                                        {"webhook-id", "spoofed"},
                                        {"X-Env", "spoofed"},
                                        {"X-Other", "o"}});
  ASSERT_TRUE(sink_.WaitForRequests(3, 10s));
  std::map<std::string, SinkRequest> by_path;
  for (const SinkRequest& r : sink_.Requests()) by_path[r.path] = r;
  ASSERT_EQ(by_path.size(), 3u);
  auto count = [](const SinkRequest& r, std::string_view name) {
    auto lower = [](std::string_view s) {
      std::string out(s);
      for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return out;
    };
    int n = 0;
    for (const auto& [k, v] : r.headers) n += lower(k) == lower(name);
    return n;
  };
  for (const auto& [path, r] : by_path) {
    SCOPED_TRACE(path);
    EXPECT_EQ(r.Header("webhook-id"), id);
    EXPECT_EQ(count(r, "webhook-id"), 1);
    EXPECT_EQ(r.Header("X-Env"), "prod");
    EXPECT_EQ(count(r, "X-Env"), 1);
    EXPECT_EQ(r.Header("Content-Type"), "application/json");
    EXPECT_FALSE(r.Header("Authorization").has_value());
    EXPECT_FALSE(r.Header("Cookie").has_value());
    EXPECT_FALSE(r.Header("X-Hop").has_value());
    EXPECT_EQ(count(r, "Host"), 1);
    EXPECT_EQ(count(r, "Content-Length"), 1);
  }
  const SinkRequest& all = by_path["/all"];
  EXPECT_EQ(all.Header("X-GitHub-Event"), "pull_request");
  EXPECT_EQ(all.Header("X-Hub-Signature-256"), "sha256=0123");
  EXPECT_EQ(all.Header("X-Other"), "o");
  EXPECT_EQ(all.Header("User-Agent"), "GitHub-Hookshot/abc123");
  const SinkRequest& none = by_path["/none"];
  EXPECT_FALSE(none.Header("X-GitHub-Event").has_value());
  EXPECT_FALSE(none.Header("X-Other").has_value());
  EXPECT_EQ(none.Header("User-Agent").value_or("").rfind("hookrelay/", 0), 0u);
  const SinkRequest& list = by_path["/list"];
  EXPECT_EQ(list.Header("X-GitHub-Event"), "pull_request");
  EXPECT_FALSE(list.Header("X-Hub-Signature-256").has_value());
  EXPECT_FALSE(list.Header("X-Other").has_value());
  EXPECT_EQ(server_->output().find("for-hookrelay"), std::string::npos);
}

// Issue 11.9: what went wrong is named: a status line and then silence is a timeout *after
// status 200* (retryable, as timeouts are); response headers past 300 KB are
// response_too_large, not a reset.
TEST_F(DeliveryTest, MisbehavingResponsesAreNamedForWhatTheyDid) {
  sink_.SetDefault("/silent", SinkResponse::HeadThenHang(200));
  SinkResponse big = SinkResponse::Status(200);
  for (int i = 0; i < 8; ++i) {
    big.headers.emplace_back("X-Big-" + std::to_string(i), std::string(50 * 1024, 'h'));
  }
  sink_.SetDefault("/big", std::move(big));
  const testing::TomlValue once = Policy(
      R"(strategy = "exponential", jitter = "none", base = "50ms", cap = "50ms", max_attempts = 1, timeout = "700ms")");
  Start(Config({{"silent", {{"url", sink_.url("/silent")}, {"policy", once}}},
                {"big", {{"url", sink_.url("/big")}, {"policy", once}}}}));
  const std::string id = Ingest("x");
  EXPECT_TRUE(WaitForMetric("hookrelay_deliveries_failed_total 2"));
  auto deliveries = StopAndLoad(id);
  ASSERT_EQ(deliveries.size(), 2u);
  for (const store::Delivery& d : deliveries) {
    SCOPED_TRACE(d.destination);
    EXPECT_EQ(d.status, store::DeliveryStatus::kFailed);
    const std::string reason = d.reason.value_or("");
    auto attempts = Attempts(d.id);
    ASSERT_EQ(attempts.size(), 1u);
    if (d.destination == "silent") {
      EXPECT_NE(reason.find("timeout after status 200"), std::string::npos) << reason;
      EXPECT_EQ(reason.find("did not answer"), std::string::npos) << reason;
      EXPECT_EQ(attempts[0].status_code, 200);
      EXPECT_EQ(attempts[0].error, "timeout");
    } else {
      EXPECT_NE(reason.find("too large"), std::string::npos) << reason;
      EXPECT_EQ(reason.find("closed the connection"), std::string::npos) << reason;
      EXPECT_EQ(attempts[0].error, "response_too_large");
    }
  }
}

// A response trickled so slowly its status line never completes, endless 100 Continue, and
// responses that are not HTTP are each named for what they are.
TEST_F(DeliveryTest, PartialInterimAndMalformedResponsesAreNamed) {
  std::vector<std::string> trickle;
  for (char c : std::string("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")) {
    trickle.emplace_back(1, c);
  }
  RawResponder slow(trickle, 200ms);
  RawResponder interim(std::vector<std::string>(100, "HTTP/1.1 100 Continue\r\n\r\n"), 100ms);
  RawResponder garbage({"garbage status line\r\n\r\n"}, 1ms);
  RawResponder colon({"HTTP/1.1 200 OK\r\nNo colon here\r\nContent-Length: 0\r\n\r\n"}, 1ms);
  const testing::TomlValue once = Policy(
      R"(strategy = "exponential", jitter = "none", base = "50ms", cap = "50ms", max_attempts = 1, timeout = "1500ms")");
  Start(Config({{"slow", {{"url", slow.url()}, {"policy", once}}},
                {"interim", {{"url", interim.url()}, {"policy", once}}},
                {"garbage", {{"url", garbage.url()}, {"policy", once}}},
                {"colon", {{"url", colon.url()}, {"policy", once}}}}));
  const std::string id = Ingest("x");
  EXPECT_TRUE(WaitForMetric("hookrelay_deliveries_failed_total 4"));
  auto deliveries = StopAndLoad(id);
  ASSERT_EQ(deliveries.size(), 4u);
  for (const store::Delivery& d : deliveries) {
    SCOPED_TRACE(d.destination);
    const std::string reason = d.reason.value_or("");
    auto attempts = Attempts(d.id);
    ASSERT_EQ(attempts.size(), 1u);
    if (d.destination == "slow") {
      EXPECT_EQ(attempts[0].error, "timeout");
      EXPECT_FALSE(attempts[0].status_code.has_value());
      EXPECT_NE(reason.find("bytes of the response"), std::string::npos) << reason;
      EXPECT_EQ(reason.find("did not answer"), std::string::npos) << reason;
    } else if (d.destination == "interim") {
      EXPECT_EQ(attempts[0].error, "timeout");
      EXPECT_FALSE(attempts[0].status_code.has_value()) << *attempts[0].status_code;
      EXPECT_NE(reason.find("only interim 1xx responses"), std::string::npos) << reason;
    } else {
      EXPECT_EQ(attempts[0].error, "malformed_response") << reason;
      EXPECT_NE(reason.find("the endpoint sent a malformed HTTP response"), std::string::npos)
          << reason;
    }
  }
}

TEST_F(DeliveryTest, NotFoundFailsAfterOneAttemptWithTheReason) {
  sink_.SetDefault(SinkResponse::Status(404, "no such hook"));
  Start(Config({{"d", {{"url", sink_.url("/gone")}, {"policy", Policy(kFast)}}}}));
  const std::string id = Ingest("{}");
  ASSERT_TRUE(sink_.WaitForRequests(1, 10s));
  // Final once recorded: a (wrong) retry would leave it scheduled instead.
  ASSERT_TRUE(WaitForStatus(id, "d", "failed")) << StatusOf(id, "d");
  auto deliveries = StopAndLoad(id);
  ASSERT_EQ(deliveries.size(), 1u);
  EXPECT_EQ(deliveries[0].status, store::DeliveryStatus::kFailed);
  EXPECT_EQ(deliveries[0].attempts, 1);
  ASSERT_TRUE(deliveries[0].reason.has_value());
  EXPECT_NE(deliveries[0].reason->find("404 Not Found is not retried"), std::string::npos)
      << *deliveries[0].reason;
  EXPECT_EQ(sink_.RequestCount(), 1u);
  auto attempts = Attempts(deliveries[0].id);
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].response_snippet, "no such hook");
}

TEST_F(DeliveryTest, GoneFailsAndPausesTheDestinationKeepingOthersPaused) {
  sink_.Enqueue(SinkResponse::Status(410));
  Start(Config({{"d", {{"url", sink_.url("/h")}, {"policy", Policy(kFast)}}}}));
  const std::string first = Ingest("one");
  ASSERT_TRUE(sink_.WaitForRequests(1, 10s));
  ASSERT_TRUE(WaitForStatus(first, "d", "failed"));  // recorded: the destination is paused now
  const std::string second = Ingest("two");
  // The engine's pause sweep (once a second) shows it as paused; it was never sent.
  ASSERT_TRUE(WaitForStatus(second, "d", "paused")) << StatusOf(second, "d");
  EXPECT_EQ(sink_.RequestCount(), 1u) << "nothing is sent to a paused destination";
  auto d1 = StopAndLoad(first);
  ASSERT_EQ(d1.size(), 1u);
  EXPECT_EQ(d1[0].status, store::DeliveryStatus::kFailed);
  auto d2 = store_->GetDeliveries(second);
  ASSERT_TRUE(d2.ok());
  ASSERT_EQ(d2->size(), 1u);
  EXPECT_EQ((*d2)[0].status, store::DeliveryStatus::kPaused) << "kept, not lost";
  EXPECT_EQ((*d2)[0].attempts, 0);
  EXPECT_NE((*d2)[0].reason.value_or("").find("410"), std::string::npos);
}

TEST_F(DeliveryTest, RetryAfterIsHonoured) {
  sink_.Enqueue(SinkResponse::Status(429).WithHeader("Retry-After", "1"));
  Start(Config({{"d", {{"url", sink_.url("/h")}, {"policy", Policy(kFast)}}}}));
  const std::string id = Ingest("x");
  ASSERT_TRUE(sink_.WaitForRequests(2, 10s));
  auto requests = sink_.Requests();
  const auto gap = requests[1].arrived_steady - requests[0].arrived_steady;
  EXPECT_GE(gap, 1000ms) << "the second attempt must wait for Retry-After (backoff is 50ms)";
  auto deliveries = StopAndLoad(id);
  EXPECT_EQ(deliveries[0].status, store::DeliveryStatus::kDelivered);
  auto attempts = Attempts(deliveries[0].id);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].retry_after, "1");
}

TEST_F(DeliveryTest, TimeoutIsRetried) {
  sink_.Enqueue(SinkResponse::Hang());
  Start(Config(
      {{"d",
        {{"url", sink_.url("/h")},
         {"policy",
          Policy(
              R"(strategy = "exponential", jitter = "none", base = "50ms", cap = "50ms", max_attempts = 3, timeout = "300ms")")}}}}));
  const std::string id = Ingest("x");
  ASSERT_TRUE(sink_.WaitForRequests(2, 10s));
  auto deliveries = StopAndLoad(id);
  EXPECT_EQ(deliveries[0].status, store::DeliveryStatus::kDelivered);
  auto attempts = Attempts(deliveries[0].id);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].error, "timeout");
  EXPECT_FALSE(attempts[0].status_code.has_value());
  EXPECT_GE(attempts[0].duration_ms, 250);
}

TEST_F(DeliveryTest, ConnectionRefusedIsRetriedUntilExhausted) {
  // A port with nothing listening: the sink's own port once the sink is gone would race, so use
  // a port we bind and close.
  uint16_t closed_port;
  {
    Sink temporary;
    closed_port = temporary.port();
  }
  Start(Config(
      {{"d",
        {{"url", "http://127.0.0.1:" + std::to_string(closed_port) + "/h"},
         {"policy",
          Policy(
              R"(strategy = "exponential", jitter = "none", base = "20ms", cap = "20ms", max_attempts = 3)")}}}}));
  const std::string id = Ingest("x");
  std::vector<store::Delivery> deliveries;
  // Wait for the three attempts by watching the metrics (failed deliveries).
  EXPECT_TRUE(WaitForMetric("hookrelay_deliveries_failed_total 1"));
  deliveries = StopAndLoad(id);
  ASSERT_EQ(deliveries.size(), 1u);
  EXPECT_EQ(deliveries[0].status, store::DeliveryStatus::kFailed);
  EXPECT_EQ(deliveries[0].attempts, 3);
  EXPECT_NE(deliveries[0].reason.value_or("").find("gave up after 3 of 3 attempts"),
            std::string::npos)
      << deliveries[0].reason.value_or("");
  for (const auto& a : Attempts(deliveries[0].id)) EXPECT_EQ(a.error, "connection_refused");
}

TEST_F(DeliveryTest, PastTheDeadlineFails) {
  sink_.SetDefault(SinkResponse::Status(503));
  Start(Config(
      {{"d",
        {{"url", sink_.url("/h")},
         {"policy",
          Policy(
              R"(strategy = "exponential", jitter = "none", base = "200ms", cap = "200ms", max_attempts = 50, max_duration = "500ms")")}}}}));
  const std::string id = Ingest("x");
  ASSERT_TRUE(sink_.WaitForRequests(3, 10s));
  ASSERT_TRUE(WaitForStatus(id, "d", "failed")) << StatusOf(id, "d");
  auto deliveries = StopAndLoad(id);
  EXPECT_EQ(deliveries[0].status, store::DeliveryStatus::kFailed);
  EXPECT_LE(deliveries[0].attempts, 4);
  EXPECT_NE(deliveries[0].reason.value_or("").find("deadline"), std::string::npos)
      << deliveries[0].reason.value_or("");
  EXPECT_TRUE(deliveries[0].deadline.has_value());
}

TEST_F(DeliveryTest, SignatureVerifiesWithTheStandardWebhooksScheme) {
  const std::string secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  Start(Config(
      {{"d", {{"url", sink_.url("/h")}, {"signing_secret", secret}, {"policy", Policy(kFast)}}}}));
  Ingest(R"({"signed":true})");
  ASSERT_TRUE(sink_.WaitForRequests(1, 10s));
  SinkRequest r = sink_.Requests()[0];
  std::string why;
  EXPECT_TRUE(testing::VerifyStandardSignature(r, secret, &why)) << why;
  r.body += " ";
  EXPECT_FALSE(testing::VerifyStandardSignature(r, secret, &why));
  EXPECT_EQ(server_->output().find("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), std::string::npos);
}

// A destination at a literal loopback address without allow_private is refused when the config
// is loaded (issue 11.10); with --allow-private-destinations the server starts and delivers. (A
// name that only resolves to such an address is refused at connect time: sender_test.)
TEST_F(DeliveryTest, PrivateDestinationRefusedUnlessAllowed) {
  // Without allow_private (Config() would add it).
  const std::string toml =
      Config({})
          .Add("destinations", {{"name", "d"}, {"url", sink_.url("/h")}, {"policy", Policy(kFast)}})
          .Route("src", "d");
  server_ = std::make_unique<HookrelayServer>(HookrelayServer::Options{
      toml, data_dir(), {}, {{"HOOKRELAY_ADMIN_TOKEN", "test-admin-token-0123"}}});
  EXPECT_FALSE(server_->ok());
  EXPECT_NE(server_->output().find("127.0.0.1"), std::string::npos) << server_->output();
  // The config file's switch, in the config file's words.
  EXPECT_NE(server_->output().find("allow_private = true"), std::string::npos) << server_->output();
  server_.reset();
  Start(toml, {"--allow-private-destinations"});
  Ingest("x");
  EXPECT_TRUE(sink_.WaitForRequests(1, 10s));
}

// Breaker: threshold 5, open 500ms. While open, the sink sees no request; then one probe; the
// opening is emailed through a real SMTP server, naming the destination and the reason.
TEST_F(DeliveryTest, BreakerOpensPausesProbesAndAlertsByEmail) {
  testing::SmtpServer smtp;
  ASSERT_TRUE(smtp.Ready());
  for (int i = 0; i < 5; ++i) sink_.Enqueue(SinkResponse::Status(503));
  Start(
      Config(
          {{"billing",
            {{"url", sink_.url("/h")},
             {"policy",
              Policy(
                  R"(strategy = "exponential", jitter = "none", base = "10ms", cap = "10ms", max_attempts = 50, max_duration = "1m")")},
             {"breaker", Breaker(5, {"500ms", "1s"})}}}})
          .Set("alerts.smtp_url", smtp.url())
          .Set("alerts.from", "hookrelay@example.com")
          .Set("alerts.to", testing::TomlArray({"ops@example.com"}))
          .Set("alerts.window", "200ms"));
  const std::string id = Ingest("x");
  ASSERT_TRUE(sink_.WaitForRequests(6, 15s));
  auto requests = sink_.Requests();
  // Requests 1–5 failed and opened the breaker; request 6 is the probe, after the open period.
  const auto open_period = requests[5].arrived_steady - requests[4].arrived_steady;
  EXPECT_GE(open_period, 480ms) << "no request may reach the sink while the breaker is open";
  // The probe succeeded (the sink's default is 200): closed and delivered.
  std::string opened;
  ASSERT_TRUE(test::WaitFor([&] { return !(opened = smtp.Find("billing")).empty(); }))
      << "the breaker alert should arrive by email";
  EXPECT_NE(opened.find("503"), std::string::npos) << opened;
  // The message lands just before libcurl reads the server's 250.
  EXPECT_TRUE(test::WaitFor([&] {
    const std::string metrics = HttpConnection(server_->port()).Send("GET", "/metrics").body;
    return metrics.find("hookrelay_alerts_sent_total 0\n") == std::string::npos &&
           metrics.find("hookrelay_alerts_sent_total ") != std::string::npos &&
           metrics.find("hookrelay_alerts_failed_total 0\n") != std::string::npos;
  })) << "the sent alert shows in /metrics";
  auto deliveries = StopAndLoad(id);
  EXPECT_EQ(deliveries[0].status, store::DeliveryStatus::kDelivered);
  EXPECT_EQ(deliveries[0].attempts, 6) << "no attempts are spent while the breaker is open";
  auto breaker = store_->GetBreaker("billing");
  ASSERT_TRUE(breaker.ok() && breaker->has_value());
  EXPECT_EQ((*breaker)->state, policy::BreakerState::kClosed);
  EXPECT_EQ((*breaker)->trips, 1);
}

// The failure that opens the breaker stops the next request at once: with one request at a time
// and 30 events waiting, exactly `threshold` requests reach a failing sink (the breaker learns
// each outcome when the response arrives, not once its record is committed).
TEST_F(DeliveryTest, NoRequestLeavesAfterTheFailureThatOpensTheBreaker) {
  for (int i = 0; i < 40; ++i) sink_.Enqueue(SinkResponse::Status(503));
  Start(Config(
      {{"billing",
        {{"url", sink_.url("/h")},
         {"max_concurrency", 1},
         {"policy",
          Policy(
              R"(strategy = "exponential", jitter = "none", base = "10ms", cap = "10ms", max_attempts = 50, max_duration = "1m")")},
         {"breaker", Breaker(5, {"1m"})}}}}));
  for (int i = 0; i < 30; ++i) Ingest("event " + std::to_string(i));
  ASSERT_TRUE(sink_.WaitForRequests(5, 10s));
  // Open (for a minute), and nothing out: whatever left before it opened has arrived by now.
  ASSERT_TRUE(WaitForMetric("hookrelay_breakers_open 1"));
  ASSERT_TRUE(WaitForMetric("hookrelay_attempts_in_flight 0"));
  EXPECT_EQ(sink_.RequestCount(), 5u) << "no request may leave once the 5th failure opened it";
}

// A destination created and then changed through the API: the engine applies the new breaker
// at once (threshold 3 instead of 50), keeping the state counted so far.
TEST_F(DeliveryTest, BreakerChangedThroughTheApiAppliesAtOnce) {
  for (int i = 0; i < 20; ++i) sink_.Enqueue(SinkResponse::Status(503));
  Start(Config({}));
  HttpConnection api(server_->port());
  const testing::HeaderList auth{{"Authorization", "Bearer test-admin-token-0123"},
                                 {"Content-Type", "application/json"}};
  HttpResponse r = api.Send(
      "POST", "/api/v1/destinations", auth,
      R"({"name": "d", "allow_private": true, "max_concurrency": 1, "url": ")" + sink_.url("/h") +
          R"(", "policy": {"strategy": "exponential", "jitter": "none", "base": "10ms",
             "cap": "10ms", "max_attempts": 50, "max_duration": "1m"},
             "breaker": {"threshold": 50, "open": ["1m"]}})");
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_EQ(
      api.Send("POST", "/api/v1/routes", auth, R"({"source": "src", "destination": "d"})").status,
      201);
  // The engine has seen d (threshold 50) before the change.
  ASSERT_TRUE(WaitForMetric("hookrelay_destination_allowed_concurrency{destination=\"d\"} 1"));
  r = api.Send("PATCH", "/api/v1/destinations/d", auth,
               R"({"breaker": {"threshold": 3, "open": ["1m"]}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("breaker").at("state").as_string(), "closed");
  Ingest("x");
  ASSERT_TRUE(sink_.WaitForRequests(3, 10s));
  // With the old threshold it would not open, and the retries (every 10 ms) would go on.
  ASSERT_TRUE(WaitForMetric("hookrelay_breakers_open 1"));
  ASSERT_TRUE(WaitForMetric("hookrelay_attempts_in_flight 0"));
  EXPECT_EQ(sink_.RequestCount(), 3u) << "the breaker opens after 3 failures, not 50";
  r = api.Send("GET", "/api/v1/destinations/d",
               {{"Authorization", "Bearer test-admin-token-0123"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("breaker").at("state").as_string(), "open") << r.body;
}

// A backlog that is due but cannot be sent (a 1/s rate limit) shows in the oldest-due metric and,
// past the stall threshold, raises an alert (here to an alert webhook on the sink).
TEST_F(DeliveryTest, StalledBacklogRaisesAnAlert) {
  Start(
      Config({{"d", {{"url", sink_.url("/h")}, {"rate_limit", "1/s"}, {"policy", Policy(kFast)}}}})
          .Set("delivery.stall_threshold", "500ms")
          .Set("alerts.webhook_url", sink_.url("/alerts"))
          .Set("alerts.window", "1m"));
  for (int i = 0; i < 10; ++i) Ingest("event " + std::to_string(i));
  std::optional<SinkRequest> alert;
  ASSERT_TRUE(test::WaitFor([&] {
    for (const SinkRequest& r : sink_.Requests()) {
      if (r.path == "/alerts") alert = r;
    }
    return alert.has_value();
  })) << "no stall alert arrived";
  json::value doc = json::parse(alert->body);
  EXPECT_EQ(doc.at("kind").as_string(), "stalled");
  HttpConnection conn(server_->port());
  const std::string metrics = conn.Send("GET", "/metrics").body;
  const std::string name = "\nhookrelay_due_backlog_oldest_age_seconds ";
  size_t at = metrics.find(name);
  ASSERT_NE(at, std::string::npos);
  EXPECT_GT(std::stod(metrics.substr(at + name.size())), 0.5) << metrics.substr(at, 60);
  const std::string backlog = "\nhookrelay_due_backlog ";
  at = metrics.find(backlog);
  ASSERT_NE(at, std::string::npos);
  EXPECT_GE(std::stoi(metrics.substr(at + backlog.size())), 1) << "the rate limit holds work back";
  // The rate limit held: about one request per second reached the endpoint.
  size_t sent = 0;
  for (const SinkRequest& r : sink_.Requests()) sent += r.path == "/h";
  EXPECT_LE(sent, 4u);
}

// kill -9 while 2,000 deliveries are out to a slow sink: after a restart every event reaches the
// sink at least once, and duplicates carry the same webhook-id.
TEST_F(DeliveryTest, CrashWithDeliveriesInFlightLosesNone) {
  sink_.SetDefault(SinkResponse::Status(200).WithDelay(1500ms));
  auto dest = [&](const std::string& path) {
    return testing::TomlFields{
        {"url", sink_.url(path)},
        {"max_concurrency", 1024},
        {"policy",
         Policy(
             R"(strategy = "exponential", jitter = "none", base = "100ms", cap = "100ms", max_attempts = 5, timeout = "3s")")}};
  };
  const std::string config = Config({{"a", dest("/a")}, {"b", dest("/b")}});
  Start(config);
  std::set<std::string> ids;
  {
    HttpConnection conn(server_->port());
    for (int i = 0; i < 1000; ++i) {
      HttpResponse r = conn.Send("POST", "/in/src", {}, "event " + std::to_string(i));
      ASSERT_EQ(r.status, 202);
      ids.insert(std::string(json::parse(r.body).at("id").as_string()));
    }
  }
  // 1,000 events to two destinations: 2,000 deliveries. Crash once most are out.
  ASSERT_TRUE(sink_.WaitForRequests(1500, 30s)) << sink_.RequestCount();
  server_->Kill();
  const size_t before_restart = sink_.RequestCount();
  Start(config);
  // Leases (timeout 3s + margin 1s) expire and the work is taken over.
  std::map<std::string, std::set<std::string>> seen;  // webhook-id → paths it arrived on
  auto complete = [&] {
    seen.clear();
    for (const SinkRequest& r : sink_.Requests()) {
      seen[r.Header("webhook-id").value_or("")].insert(r.path);
    }
    if (seen.size() != ids.size()) return false;
    for (const auto& [id, paths] : seen) {
      if (paths.size() != 2) return false;
    }
    return true;
  };
  EXPECT_TRUE(test::WaitFor(complete, 60s, 50ms))
      << "every event reaches both destinations at least once";
  for (const auto& id : ids) {
    EXPECT_EQ(seen[id].size(), 2u) << id;
  }
  EXPECT_GT(sink_.RequestCount(), before_restart) << "the restarted server took over the work";
  // Duplicates (sent before the crash, again after) carry the same webhook-id by construction:
  // every request's webhook-id is one of the ingested ids.
  for (const SinkRequest& r : sink_.Requests()) {
    EXPECT_TRUE(ids.count(r.Header("webhook-id").value_or("")))
        << r.Header("webhook-id").value_or("");
  }
  server_->Stop();
}

// Issue 13: kill -9 with some deliveries in flight (the sink holds them unanswered) and others
// answered and recorded. After a restart on the same directory exactly the in-flight ones are
// sent again, each once, promptly (within 10 s: no durable claim lease to wait out), with the
// webhook-id of their first arrival; the answered ones are not sent again.
TEST_F(DeliveryTest, RestartAfterKill9ResendsExactlyTheInFlightDeliveriesWithTheirWebhookIds) {
  constexpr int kEvents = 5;
  sink_.SetDefault("/answered", SinkResponse::Status(200));
  sink_.SetDefault("/held", SinkResponse::Hang());
  // A long timeout: the held attempts are still in flight when the server dies.
  const testing::TomlValue policy = Policy(
      R"(strategy = "exponential", jitter = "none", base = "100ms", cap = "100ms", max_attempts = 5, timeout = "20s")");
  const std::string config =
      Config({{"answered", {{"url", sink_.url("/answered")}, {"policy", policy}}},
              {"held", {{"url", sink_.url("/held")}, {"policy", policy}}}});
  Start(config);
  std::map<std::string, std::string> body_of;  // event id → body
  for (int i = 0; i < kEvents; ++i) {
    const std::string body = "event " + std::to_string(i);
    body_of[Ingest(body)] = body;
  }
  ASSERT_TRUE(sink_.WaitForRequests(2 * kEvents, 10s)) << sink_.RequestCount();
  // The answered deliveries are recorded (the API reads what the store committed).
  auto delivered_to = [&](const std::string& id, const std::string& destination) {
    HttpConnection api(server_->port());
    HttpResponse r = api.Send("GET", "/api/v1/events/" + id,
                              {{"Authorization", "Bearer test-admin-token-0123"}});
    if (r.status != 200) return false;
    const json::value event = json::parse(r.body);
    for (const json::value& d : event.at("deliveries").as_array()) {
      if (d.at("destination").as_string() == destination &&
          d.at("status").as_string() == "delivered") {
        return true;
      }
    }
    return false;
  };
  for (const auto& entry : body_of) {
    const std::string& id = entry.first;  // a named copy: clang 14 cannot capture a binding
    ASSERT_TRUE(test::WaitFor([&] { return delivered_to(id, "answered"); })) << id;
  }
  // Each event's first arrival at each path, by body: its webhook-id.
  std::map<std::pair<std::string, std::string>, std::string> first_id;  // (path, body) → id
  for (const SinkRequest& r : sink_.Requests()) {
    first_id.emplace(std::make_pair(r.path, r.body), r.Header("webhook-id").value_or("(none)"));
  }
  ASSERT_EQ(first_id.size(), 2u * kEvents);
  for (const auto& [id, body] : body_of) {
    EXPECT_EQ(first_id[std::make_pair(std::string("/held"), body)], id);
    EXPECT_EQ(first_id[std::make_pair(std::string("/answered"), body)], id);
  }
  const size_t before_kill = sink_.RequestCount();
  server_->Kill();
  const auto restarted = std::chrono::steady_clock::now();
  Start(config);

  // What arrives after the restart: every held delivery; then the engine has nothing due and
  // exactly the held ones out, so nothing else is (or will be) sent again.
  auto resent = [&] {
    std::vector<SinkRequest> all = sink_.Requests();
    return std::vector<SinkRequest>(all.begin() + static_cast<std::ptrdiff_t>(before_kill),
                                    all.end());
  };
  auto held_again = [&] {
    std::set<std::string> bodies;
    for (const SinkRequest& r : resent()) {
      if (r.path == "/held") bodies.insert(r.body);
    }
    return bodies.size();
  };
  EXPECT_TRUE(test::WaitFor([&] { return held_again() >= static_cast<size_t>(kEvents); }));
  EXPECT_TRUE(WaitForMetric("hookrelay_attempts_in_flight " + std::to_string(kEvents)));
  EXPECT_TRUE(WaitForMetric("hookrelay_due_backlog 0"));
  std::string what;                       // everything sent again, for the failure messages
  std::map<std::string, int> held_count;  // body → arrivals at /held after the restart
  for (const SinkRequest& r : resent()) {
    const auto after =
        std::chrono::duration_cast<std::chrono::milliseconds>(r.arrived_steady - restarted);
    what += "\n  " + r.path + " \"" + r.body + "\" webhook-id " +
            r.Header("webhook-id").value_or("(none)") + " +" + std::to_string(after.count()) +
            "ms after the restart";
    if (r.path == "/held") ++held_count[r.body];
  }
  if (what.empty()) what = " nothing";
  for (const SinkRequest& r : resent()) {
    EXPECT_EQ(r.path, "/held") << "an answered delivery was sent again; sent again:" << what;
    EXPECT_EQ(r.Header("webhook-id").value_or("(none)"), first_id[std::make_pair(r.path, r.body)])
        << "a delivery sent again with another webhook-id; sent again:" << what;
    // Not after the claim's lease (20 s timeout + 1 s margin) expired: sent again because the
    // restart released it.
    EXPECT_LT(r.arrived_steady - restarted, 21s) << "not promptly; sent again:" << what;
  }
  for (const auto& [id, body] : body_of) {
    EXPECT_EQ(held_count[body], 1) << "in-flight delivery of \"" << body << "\" (" << id
                                   << ") to /held; sent again within 10 s:" << what;
  }
  server_->Kill();
}

// Fairness as behaviour, not timing: a destination whose endpoint accepts requests and never
// answers (timeout far beyond the test) holds its own slots only. Every event goes to both; the
// healthy destination gets all of them while the hanging one has no more than its
// max_concurrency requests out and none finished. (How much a failing neighbour costs in time is
// a benchmark figure, not a test bound.)
TEST_F(DeliveryTest, FailingDestinationDoesNotSlowAHealthyOne) {
  constexpr int kEvents = 1000;
  constexpr int kHangingConcurrency = 4;
  sink_.SetDefault("/fast", SinkResponse::Status(200).WithDelay(5ms));
  sink_.SetDefault("/slow", SinkResponse::Hang());
  const testing::TomlValue policy = Policy(
      R"(strategy = "exponential", jitter = "none", base = "50ms", cap = "50ms", max_attempts = 100, timeout = "10m")");
  Start(Config({{"fast", {{"url", sink_.url("/fast")}, {"policy", policy}}},
                {"other",
                 {{"url", sink_.url("/slow")},
                  {"max_concurrency", kHangingConcurrency},
                  {"policy", policy}}}}));
  {
    HttpConnection conn(server_->port());
    for (int i = 0; i < kEvents; ++i) ASSERT_EQ(conn.Send("POST", "/in/src", {}, "x").status, 202);
  }
  auto count = [&](const std::string& path) {
    size_t n = 0;
    for (const SinkRequest& r : sink_.Requests()) n += r.path == path;
    return n;
  };
  ASSERT_TRUE(test::WaitFor([&] { return count("/fast") >= static_cast<size_t>(kEvents); }))
      << count("/fast") << " of " << kEvents << " delivered beside a hanging destination";
  EXPECT_EQ(count("/fast"), static_cast<size_t>(kEvents));
  EXPECT_GE(count("/slow"), 1u);
  EXPECT_LE(count("/slow"), static_cast<size_t>(kHangingConcurrency))
      << "the hanging destination took more than its own slots";
  server_->Kill();
}

}  // namespace
}  // namespace hookrelay
