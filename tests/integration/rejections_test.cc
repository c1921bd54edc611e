// Black-box tests of rejected requests (docs/ingest.md, "Rejected requests"): the real
// `hookrelay serve` binary, a real sink, badly signed requests; what GET
// /api/v1/sources/{name}/rejections and /metrics then show.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/crypto.h"
#include "support/config_builder.h"
#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/integration_test.h"
#include "support/process.h"
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
using testing::TempDir;

const std::string kToken = "rejections-test-admin-token-0123";
const std::string kGithubSecret = "github-secret-never-shown";
const std::string kStripeSecret = "stripe-secret-never-shown";

testing::TomlValue Verify(const char* scheme, const std::string& secret,
                          testing::TomlFields more = {}) {
  testing::TomlFields fields{{"scheme", scheme}, {"secrets", testing::TomlArray({secret})}};
  for (auto& kv : more) fields.push_back(std::move(kv));
  return testing::TomlInline(fields);
}

class RejectionsTest : public testing::IntegrationTest {
 protected:
  void SetUp() override {
    admin_token_ = kToken;
    StartServer(
        testing::Config()
            .Set("delivery.poll_interval", "100ms")
            .Source("gh", {{"verify", Verify("github", kGithubSecret)}})
            .Source("st", {{"verify", Verify("stripe", kStripeSecret, {{"tolerance", "5m"}})}})
            .Source("open")
            .Destination("sink", sink_.url("/hooks"))
            .Route("gh", "sink")
            .Route("st", "sink"));
  }

  HttpResponse Get(const std::string& target, const std::string& token = kToken) {
    HttpConnection conn(server_->port());
    testing::HeaderList headers;
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    HttpResponse r = conn.Send("GET", target, headers);
    EXPECT_EQ(r.body.find(kGithubSecret), std::string::npos) << target;
    EXPECT_EQ(r.body.find(kStripeSecret), std::string::npos) << target;
    EXPECT_EQ(r.body.find(kToken), std::string::npos) << target;
    return r;
  }

  // The rows listed for `source` (all pages).
  std::vector<json::object> Rejections(const std::string& source) {
    std::vector<json::object> all;
    std::string cursor;
    for (;;) {
      HttpResponse r = Get("/api/v1/sources/" + source + "/rejections?limit=1000" +
                           (cursor.empty() ? "" : "&cursor=" + cursor));
      EXPECT_EQ(r.status, 200) << r.body;
      if (r.status != 200) return all;
      json::object page = json::parse(r.body).as_object();
      for (const json::value& v : page.at("items").as_array()) all.push_back(v.as_object());
      if (page.at("next_cursor").is_null()) return all;
      cursor = std::string(page.at("next_cursor").as_string());
    }
  }

  json::object Counts(const std::string& source) {
    HttpResponse r = Get("/api/v1/sources/" + source + "/rejections?limit=1");
    return json::parse(r.body).as_object().at("counts").as_object();
  }

  std::string Metrics() {
    HttpConnection conn(server_->port());
    return conn.Send("GET", "/metrics").body;
  }
};

TEST_F(RejectionsTest, BadSignatureIs401NotForwardedAndListedWithoutSecrets) {
  const std::string body = R"({"action":"opened","n":1})";
  HttpConnection conn(server_->port());
  HttpResponse bad = conn.Send("POST", "/in/gh",
                               {{"Content-Type", "application/json"},
                                {"X-GitHub-Event", "push"},
                                {"X-Hub-Signature-256", "sha256=" + std::string(64, '0')},
                                {"Authorization", "Bearer provider-token-never-shown"},
                                {"Cookie", "session=cookie-never-shown"}},
                               body);
  EXPECT_EQ(bad.status, 401) << bad.body;
  // A good one goes through: the sink sees it, and only it.
  HttpResponse good = conn.Send(
      "POST", "/in/gh",
      {{"X-Hub-Signature-256", "sha256=" + HexEncode(HmacSha256(kGithubSecret, "{}"))}}, "{}");
  EXPECT_EQ(good.status, 202) << good.body;
  ASSERT_TRUE(sink_.WaitForRequests(1, 10s));
  // The bad one was never stored, so no delivery of it can follow: the store holds one event.
  HttpResponse listed = Get("/api/v1/events?source=gh");
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(json::parse(listed.body).at("items").as_array().size(), 1u) << listed.body;
  ASSERT_EQ(sink_.RequestCount(), 1u);
  EXPECT_EQ(sink_.Requests()[0].body, "{}");

  std::vector<json::object> rows;
  ASSERT_TRUE(test::WaitFor([&] { return !(rows = Rejections("gh")).empty(); }, 10s));
  ASSERT_EQ(rows.size(), 1u);
  const json::object& r = rows[0];
  EXPECT_EQ(r.at("reason").as_string(), "signature_mismatch");
  EXPECT_EQ(r.at("size").as_int64(), static_cast<int64_t>(body.size()));
  EXPECT_EQ(r.at("sha256").as_string(), HexEncode(Sha256(body)));
  EXPECT_EQ(r.at("remote_addr").as_string(), "127.0.0.1");
  EXPECT_FALSE(std::string(r.at("received_at").as_string()).empty());
  std::map<std::string, std::string> headers;
  for (const json::value& h : r.at("headers").as_array()) {
    headers[std::string(h.as_array()[0].as_string())] = std::string(h.as_array()[1].as_string());
  }
  EXPECT_EQ(headers["X-GitHub-Event"], "push");
  EXPECT_EQ(headers["Content-Type"], "application/json");
  EXPECT_EQ(headers["X-Hub-Signature-256"], "(redacted)") << "the MAC is not kept";
  EXPECT_EQ(headers["Authorization"], "(redacted)");
  EXPECT_EQ(headers["Cookie"], "(redacted)");
  const std::string text = Get("/api/v1/sources/gh/rejections").body;
  for (const std::string& hidden :
       {std::string("provider-token-never-shown"), std::string("cookie-never-shown"),
        std::string(64, '0'), std::string("opened")}) {
    EXPECT_EQ(text.find(hidden), std::string::npos) << hidden << " in " << text;
  }

  json::object counts = Counts("gh");
  EXPECT_EQ(counts.at("since_start").as_int64(), 1);
  EXPECT_EQ(counts.at("not_recorded").as_int64(), 0);
  EXPECT_EQ(counts.at("by_reason").at("signature_mismatch").as_int64(), 1);
  json::object source = json::parse(Get("/api/v1/sources/gh").body).as_object();
  EXPECT_EQ(source.at("rejections").at("since_start").as_int64(), 1);
  EXPECT_TRUE(Rejections("st").empty());

  const std::string metrics = Metrics();
  EXPECT_NE(metrics.find("hookrelay_ingest_rejections_total{source=\"gh\",reason="
                         "\"signature_mismatch\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("hookrelay_ingest_rejections_total{source=\"gh\",reason="
                         "\"timestamp_outside_tolerance\"} 0\n"),
            std::string::npos);

  EXPECT_EQ(Get("/api/v1/sources/nope/rejections").status, 404);
  EXPECT_EQ(Get("/api/v1/sources/gh/rejections", "").status, 401);
  EXPECT_EQ(Get("/api/v1/sources/gh/rejections", "wrong-token").status, 401);
  EXPECT_EQ(Get("/api/v1/sources/gh/rejections?cursor=abc").status, 400);
  EXPECT_EQ(Get("/api/v1/sources/gh/rejections?limit=0").status, 400);
  EXPECT_EQ(Get("/api/v1/sources/gh/rejections?what=1").status, 400);
  // A source that verifies nothing never rejects: an empty list, not a 404.
  EXPECT_EQ(Get("/api/v1/sources/open/rejections").status, 200);
}

TEST_F(RejectionsTest, ExpiredAndMissingSignaturesHaveTheirOwnReasons) {
  const std::string body = R"({"id":"evt_1"})";
  const int64_t old = ToUnixMillis(SystemClock::Instance().Now()) / 1000 - 3600;
  const std::string payload = std::to_string(old) + "." + body;
  HttpConnection conn(server_->port());
  HttpResponse expired =
      conn.Send("POST", "/in/st",
                {{"Stripe-Signature", "t=" + std::to_string(old) +
                                          ",v1=" + HexEncode(HmacSha256(kStripeSecret, payload))}},
                body);
  EXPECT_EQ(expired.status, 401) << expired.body;
  HttpResponse missing = conn.Send("POST", "/in/st", {}, body);
  EXPECT_EQ(missing.status, 401) << missing.body;
  HttpResponse malformed = conn.Send("POST", "/in/st", {{"Stripe-Signature", "v1=abc"}}, body);
  EXPECT_EQ(malformed.status, 401) << malformed.body;

  std::vector<json::object> rows;
  ASSERT_TRUE(test::WaitFor([&] { return (rows = Rejections("st")).size() == 3; }, 10s));
  EXPECT_EQ(rows[0].at("reason").as_string(), "malformed_signature");
  EXPECT_EQ(rows[1].at("reason").as_string(), "missing_signature");
  EXPECT_EQ(rows[2].at("reason").as_string(), "timestamp_outside_tolerance");
  EXPECT_NE(std::string(rows[2].at("message").as_string()).find("old"), std::string::npos)
      << rows[2].at("message");
  const std::string metrics = Metrics();
  EXPECT_NE(metrics.find("hookrelay_ingest_rejections_total{source=\"st\",reason="
                         "\"timestamp_outside_tolerance\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_EQ(sink_.RequestCount(), 0u);
}

// A flood of bad requests: every one is answered 401 and counted exactly, but the rows written are
// bounded by the per-source rate (20 a second), so the store does not grow with the flood.
TEST_F(RejectionsTest, FloodKeepsRowsBoundedAndTheCountExact) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 1000;
  std::atomic<int> not_401{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      HttpConnection conn(server_->port());
      for (int i = 0; i < kPerThread; ++i) {
        HttpResponse r = conn.Send("POST", "/in/gh", {{"X-Hub-Signature-256", "sha256=junk"}},
                                   "junk " + std::to_string(t) + "/" + std::to_string(i));
        if (r.status != 401) not_401.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(not_401.load(), 0);
  constexpr int64_t kTotal = int64_t{kThreads} * kPerThread;

  // The count is exact at once (counted before the 401 is sent).
  json::object counts = Counts("gh");
  EXPECT_EQ(counts.at("since_start").as_int64(), kTotal);
  EXPECT_EQ(counts.at("by_reason").at("signature_mismatch").as_int64(), kTotal);
  const int64_t not_recorded = counts.at("not_recorded").as_int64();
  EXPECT_GT(not_recorded, 0) << "the flood was sampled";
  // Rows written = counted - not recorded, once the writer has flushed.
  std::vector<json::object> rows;
  ASSERT_TRUE(test::WaitFor(
      [&] {
        return static_cast<int64_t>((rows = Rejections("gh")).size()) == kTotal - not_recorded;
      },
      10s))
      << rows.size() << " rows, " << not_recorded << " not recorded";
  // At most 20 rows per Unix second of receive time (what the recorder limits), and so at most
  // 20 a second over the seconds the flood touched (its span, rounded up, plus the one it began
  // in: a whole-second count of the span undercounts them).
  std::map<std::string, int> per_second;
  for (const json::object& row : rows) {
    ++per_second[std::string(row.at("received_at").as_string()).substr(0, 19)];
  }
  for (const auto& [second, n] : per_second) EXPECT_LE(n, 20) << "rows received in " << second;
  EXPECT_LE(static_cast<int64_t>(per_second.size()), seconds + 2) << seconds << "s";
  const std::string metrics = Metrics();
  EXPECT_NE(metrics.find("hookrelay_ingest_rejections_total{source=\"gh\",reason="
                         "\"signature_mismatch\"} " +
                         std::to_string(kTotal) + "\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("hookrelay_ingest_rejections_not_recorded_total{source=\"gh\"} " +
                         std::to_string(not_recorded) + "\n"),
            std::string::npos);
  // Good ingest still works right after.
  HttpConnection conn(server_->port());
  EXPECT_EQ(
      conn.Send("POST", "/in/gh",
                {{"X-Hub-Signature-256", "sha256=" + HexEncode(HmacSha256(kGithubSecret, "{}"))}},
                "{}")
          .status,
      202);
}

}  // namespace
}  // namespace hookrelay
