// Every configured secret stays out of the log and out of every API answer (issue 14): a full
// scenario against the real `hookrelay serve` binary — signed sources of every scheme, destinations
// with signing secrets and credential headers, alerts by email (STARTTLS, AUTH with a password)
// through the real SMTP test server and to a webhook whose URL carries a token, the admin token —
// driving ingest (good and bad signatures), deliveries, failures, a pause, alerts (one failing),
// replays and catalog changes through the API (a destination with a client key and a basic
// credential, patched to a bearer token), then calling every GET endpoint. Every line the
// server logged (debug level, text and json) and every answer is searched for every secret, and
// for its base64 and hex forms where the secret is a key.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/crypto.h"
#include "support/config_builder.h"
#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/process.h"
#include "support/sink.h"
#include "support/smtp_server.h"
#include "support/tls_responder.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::HeaderList;
using testing::HookrelayServer;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::Sink;
using testing::SinkResponse;
using testing::SmtpServer;
using testing::TempDir;

std::string StripPadding(std::string s) {
  while (!s.empty() && s.back() == '=') s.pop_back();
  return s;
}

// Every secret of the scenario, by what it is, with the forms it must not appear in either.
class SecretList {
 public:
  // A secret used as it is (a password, a token, a key given as text).
  void AddText(const std::string& what, const std::string& secret) {
    Add(what, secret);
    Add(what + " (base64)", StripPadding(Base64Encode(secret)));
    Add(what + " (hex)", HexEncode(secret));
  }
  // A "whsec_" + base64 key: the whole string, its base64 part, the key bytes in hex and base64.
  void AddWhsec(const std::string& what, const std::string& secret) {
    Add(what, secret);
    const std::string b64 = secret.substr(6);
    Add(what + " (base64 part)", StripPadding(b64));
    auto key = Base64Decode(b64);
    ASSERT_TRUE(key.has_value()) << secret;
    Add(what + " (key, hex)", HexEncode(*key));
    Add(what + " (key, base64url)", Base64Url(*key));
  }
  // A part of a URL (a token in a path or query).
  void AddUrlPart(const std::string& what, const std::string& secret) { Add(what, secret); }

  // The secrets (with what they are) found in `text`.
  std::vector<std::string> FoundIn(const std::string& text) const {
    std::vector<std::string> found;
    for (const auto& [what, secret] : secrets_) {
      if (text.find(secret) != std::string::npos) found.push_back(what);
    }
    return found;
  }

 private:
  void Add(const std::string& what, const std::string& secret) {
    ASSERT_GE(secret.size(), 16u) << what << ": too short to search for without false matches";
    secrets_.emplace(what, secret);
  }
  static std::string Base64Url(const std::string& bytes) {
    std::string s = StripPadding(Base64Encode(bytes));
    for (char& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
    return s;
  }
  std::map<std::string, std::string> secrets_;
};

std::string NewWhsec() { return "whsec_" + Base64Encode(*HexDecode(RandomHexToken(24))); }

class LogSecretsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    smtp_ = std::make_unique<SmtpServer>(
        SmtpServer::Options{.starttls = true, .username = "alerts", .password = smtp_password_});
    ASSERT_TRUE(smtp_->Ready());
    secrets_.AddText("source gh secret (github)", gh_secret_);
    secrets_.AddText("source st secret (stripe)", st_secret_);
    secrets_.AddText("source sh secret (shopify)", sh_secret_);
    secrets_.AddWhsec("source sw secret (standard)", sw_secret_);
    secrets_.AddText("source hm secret (hmac sha512)", hm_secret_);
    secrets_.AddText("API source secret", api_source_secret_);
    secrets_.AddText("API source rotated secret", api_source_secret2_);
    secrets_.AddWhsec("destination ok signing secret", ok_signing_);
    secrets_.AddWhsec("destination failing signing secret", failing_signing_);
    secrets_.AddWhsec("API destination signing secret", api_signing_);
    secrets_.AddText("destination Authorization header", dest_auth_);
    secrets_.AddText("destination secret header X-Api-Key", dest_key_);
    secrets_.AddUrlPart("destination URL query token", url_token_);
    secrets_.AddText("SMTP password", smtp_password_);
    secrets_.AddUrlPart("alert webhook URL path token", webhook_path_token_);
    secrets_.AddUrlPart("alert webhook URL query token", webhook_query_token_);
    secrets_.AddText("admin token", admin_token_);
    secrets_.AddText("API destination basic password", api_basic_password_);
    secrets_.AddText("API destination basic header value",
                     Base64Encode("relay:" + api_basic_password_));
    secrets_.AddText("API destination bearer token (after a PATCH)", api_bearer_);
    std::istringstream key(pems_.client_key_pem());
    for (std::string line; std::getline(key, line);) {
      if (line.rfind("-----", 0) != 0 && line.size() >= 16) {
        secrets_.AddUrlPart("API destination client key (PEM line)", line);
      }
    }
  }

  std::string Config() const {
    using testing::TomlArray;
    using testing::TomlInline;
    const testing::TomlValue fast = TomlInline({{"strategy", "exponential"},
                                                {"jitter", "none"},
                                                {"base", "20ms"},
                                                {"cap", "50ms"},
                                                {"max_attempts", 3},
                                                {"max_duration", "1m"},
                                                {"timeout", "2s"}});
    auto verify = [](const char* scheme, const std::string& secret) {
      return TomlInline({{"scheme", scheme}, {"secrets", TomlArray({secret})}});
    };
    testing::Config c;
    c.Set("delivery.poll_interval", "100ms")
        .Set("delivery.stall_threshold", "1h")
        .Set("alerts.smtp_url", smtp_->url())
        .Set("alerts.from", "hookrelay@example.com")
        .Set("alerts.to", TomlArray({"ops@example.com"}))
        .Set("alerts.username", "alerts")
        .Set("alerts.password", smtp_password_)
        .Set("alerts.starttls", true)
        .Set("alerts.ca_file", smtp_->ca_file())
        .Set("alerts.webhook_url", WebhookUrl())
        .Set("alerts.window", "200ms")
        .Source("gh", {{"verify", verify("github", gh_secret_)}})
        .Source("st", {{"verify", verify("stripe", st_secret_)}})
        .Source("sh", {{"verify", verify("shopify", sh_secret_)}})
        .Source("sw", {{"verify", verify("standard", sw_secret_)}})
        .Source("hm", {{"verify", TomlInline({{"scheme", "hmac"},
                                              {"header", "X-Sig"},
                                              {"algorithm", "sha512"},
                                              {"encoding", "base64"},
                                              {"secrets", TomlArray({hm_secret_})}})}})
        .Destination("ok", sink_.url("/ok"),
                     {{"signing_secret", ok_signing_},
                      {"headers", TomlInline({{"Authorization", "Bearer " + dest_auth_},
                                              {"X-Api-Key", dest_key_}})},
                      {"secret_headers", TomlArray({"X-Api-Key"})},
                      {"policy", fast}})
        // Its third (last) attempt both gives up and opens the breaker: a failed half-open probe
        // would not count toward max_attempts (issue 32.2), so a breaker that opened earlier
        // would keep the delivery waiting instead of failing it.
        .Destination("failing", sink_.url("/fail") + "?api_token=" + url_token_,
                     {{"signing_secret", failing_signing_},
                      {"headers", TomlInline({{"X-Api-Key", dest_key_}})},
                      {"policy", fast},
                      {"breaker", TomlInline({{"threshold", 3}, {"open", TomlArray({"200ms"})}})}})
        .Destination("gone", sink_.url("/gone"), {{"pause_on_gone", true}, {"policy", fast}});
    for (const char* source : {"gh", "st", "sh", "sw", "hm"}) c.Route(source, "ok");
    c.Route("gh", "failing").Route("st", "gone");
    return c;
  }

  std::string WebhookUrl() const {
    return sink_.url("/alerts/" + webhook_path_token_) + "?token=" + webhook_query_token_;
  }

  void Start() {
    server_ = std::make_unique<HookrelayServer>(
        HookrelayServer::Options{Config(),
                                 dir_.path() + "/data",
                                 {"--log-level", "debug", "--log-format", GetParam()},
                                 {{"HOOKRELAY_TOKEN", admin_token_}}});
    ASSERT_TRUE(server_->ok()) << server_->output();
  }

  // An API call with the admin token; the answer (status, headers, body) is kept to be searched.
  HttpResponse Api(const std::string& method, const std::string& target,
                   const std::string& body = "") {
    HttpConnection conn(server_->port());
    HeaderList headers{{"Authorization", "Bearer " + admin_token_}};
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    HttpResponse r = conn.Send(method, target, headers, body);
    Keep(method + " " + target, r);
    return r;
  }
  json::value ApiJson(const std::string& target) {
    HttpResponse r = Api("GET", target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    json::error_code ec;
    json::value v = json::parse(r.body, ec);
    EXPECT_FALSE(ec) << target << ": " << r.body;
    return v;
  }

  HttpResponse Ingest(const std::string& source, const HeaderList& headers,
                      const std::string& body) {
    HttpConnection conn(server_->port());
    HttpResponse r = conn.Send("POST", "/in/" + source, headers, body);
    Keep("POST /in/" + source, r);
    return r;
  }

  void Keep(const std::string& what, const HttpResponse& r) {
    std::string text = std::to_string(r.status) + "\n";
    for (const auto& [name, value] : r.headers) text += name + ": " + value + "\n";
    answers_.emplace_back(what, text + "\n" + r.body);
  }

  // Signed requests of every scheme (202) and one wrong signature each (401).
  std::vector<std::string> IngestSignedEverywhere() {
    std::vector<std::string> ids;
    auto accepted = [&](const std::string& source, const HttpResponse& r) {
      EXPECT_EQ(r.status, 202) << source << ": " << r.body;
      if (r.status == 202) ids.emplace_back(json::parse(r.body).at("id").as_string());
    };
    const std::string body = R"({"id":"evt_1","amount":42})";
    const std::string now = std::to_string(
        std::chrono::duration_cast<seconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
    accepted("gh",
             Ingest("gh",
                    {{"X-Hub-Signature-256", "sha256=" + HexEncode(HmacSha256(gh_secret_, body))},
                     {"X-GitHub-Delivery", "d-1"}},
                    body));
    accepted("st",
             Ingest("st",
                    {{"Stripe-Signature",
                      "t=" + now + ",v1=" + HexEncode(HmacSha256(st_secret_, now + "." + body))}},
                    body));
    accepted("sh", Ingest("sh",
                          {{"X-Shopify-Hmac-Sha256", Base64Encode(HmacSha256(sh_secret_, body))},
                           {"X-Shopify-Webhook-Id", "s-1"}},
                          body));
    const std::string sw_key = *Base64Decode(sw_secret_.substr(6));
    accepted("sw", Ingest("sw",
                          {{"webhook-id", "msg_1"},
                           {"webhook-timestamp", now},
                           {"webhook-signature",
                            "v1," + Base64Encode(HmacSha256(sw_key, "msg_1." + now + "." + body))}},
                          body));
    accepted("hm", Ingest("hm", {{"X-Sig", Base64Encode(HmacSha512(hm_secret_, body))}}, body));
    // Wrong signatures: refused, and the answer names no secret.
    const std::string other = HexEncode(HmacSha256("not the secret", body));
    EXPECT_EQ(Ingest("gh", {{"X-Hub-Signature-256", "sha256=" + other}}, body).status, 401);
    EXPECT_EQ(Ingest("st", {{"Stripe-Signature", "t=" + now + ",v1=" + other}}, body).status, 401);
    EXPECT_EQ(Ingest("sh", {{"X-Shopify-Hmac-Sha256", other}}, body).status, 401);
    EXPECT_EQ(Ingest("sw",
                     {{"webhook-id", "msg_2"},
                      {"webhook-timestamp", now},
                      {"webhook-signature", "v1," + other}},
                     body)
                  .status,
              401);
    EXPECT_EQ(Ingest("hm", {{"X-Sig", other}}, body).status, 401);
    EXPECT_EQ(Ingest("gh", {}, body).status, 401);
    return ids;
  }

  int64_t Metric(const std::string& line_prefix) {
    HttpConnection conn(server_->port());
    const std::string text = "\n" + conn.Send("GET", "/metrics").body;
    size_t at = text.find("\n" + line_prefix);  // a sample line, not its # HELP
    if (at == std::string::npos) return -1;
    return std::stoll(text.substr(at + 1 + line_prefix.size()));
  }

  // Every GET of the management API (and the server's other GET endpoints), for every object.
  void GetEverything(const std::vector<std::string>& event_ids, const std::string& replay_id) {
    HttpConnection conn(server_->port());
    for (const char* open : {"/", "/api/v1", "/healthz", "/readyz", "/metrics", "/ui/"}) {
      Keep(std::string("GET ") + open, conn.Send("GET", open));
    }
    ApiJson("/api/v1/openapi.json");
    ApiJson("/api/v1/stats");
    ApiJson("/api/v1/audit");
    ApiJson("/api/v1/events");
    ApiJson("/api/v1/events?status=failed");
    for (const std::string& id : event_ids) ApiJson("/api/v1/events/" + id);
    ApiJson("/api/v1/replays");
    if (!replay_id.empty()) ApiJson("/api/v1/replays/" + replay_id);
    json::value sources = ApiJson("/api/v1/sources");
    for (const json::value& s : sources.at("items").as_array()) {
      ApiJson("/api/v1/sources/" + std::string(s.at("name").as_string()));
      ApiJson("/api/v1/sources/" + std::string(s.at("name").as_string()) + "/rejections");
    }
    json::value destinations = ApiJson("/api/v1/destinations");
    for (const json::value& d : destinations.at("items").as_array()) {
      const std::string name(d.at("name").as_string());
      ApiJson("/api/v1/destinations/" + name);
      ApiJson("/api/v1/destinations/" + name + "/schedule");
    }
    json::value routes = ApiJson("/api/v1/routes");
    for (const json::value& r : routes.at("items").as_array()) {
      ApiJson("/api/v1/routes/" + std::string(r.at("id").as_string()));
    }
  }

  TempDir dir_;
  Sink sink_;
  std::unique_ptr<SmtpServer> smtp_;
  std::unique_ptr<HookrelayServer> server_;
  SecretList secrets_;
  std::vector<std::pair<std::string, std::string>> answers_;  // what was asked → the answer

  const std::string gh_secret_ = "gh-" + RandomHexToken(16);
  const std::string st_secret_ = "whsec_stripe" + RandomHexToken(16);
  const std::string sh_secret_ = "shpss_" + RandomHexToken(16);
  const std::string sw_secret_ = NewWhsec();
  const std::string hm_secret_ = "hm-" + RandomHexToken(16);
  const std::string api_source_secret_ = "api-src-" + RandomHexToken(16);
  const std::string api_source_secret2_ = "api-src2-" + RandomHexToken(16);
  const std::string ok_signing_ = NewWhsec();
  const std::string failing_signing_ = NewWhsec();
  const std::string api_signing_ = NewWhsec();
  const std::string dest_auth_ = "dest-auth-" + RandomHexToken(16);
  const std::string dest_key_ = "dest-key-" + RandomHexToken(16);
  const std::string url_token_ = "url-token-" + RandomHexToken(16);
  const std::string smtp_password_ = "smtp-pw-" + RandomHexToken(16);
  const std::string webhook_path_token_ = "hookpath" + RandomHexToken(12);
  const std::string webhook_query_token_ = "hookquery" + RandomHexToken(12);
  const std::string admin_token_ = "admin-" + RandomHexToken(20);
  const std::string api_basic_password_ = "basic-pw-" + RandomHexToken(16);
  const std::string api_bearer_ = "bearer-" + RandomHexToken(16);
  testing::TlsResponder pems_{testing::TlsResponder::Mode::kClientCertificate};  // PEMs only
};

TEST_P(LogSecretsTest, NoSecretInAnyLogLineOrAnswer) {
  // Endpoints that echo what they were sent (request bins, echo services, error pages quoting
  // the request): what they answer is kept as the attempt's snippet, shown by the API.
  sink_.SetDefault("/ok", SinkResponse::Status(200, "echo: Authorization: Bearer " + dest_auth_ +
                                                        "\nX-Api-Key: " + dest_key_ + "\n"));
  sink_.SetDefault("/fail", SinkResponse::Status(500, "upstream broke; you sent token " +
                                                          url_token_ + " and key " + dest_key_));
  sink_.SetDefault("/gone", SinkResponse::Status(410, "gone for good"));
  // The first alert webhook call fails (logged as a failure), the rest succeed.
  sink_.Enqueue("/alerts/" + webhook_path_token_, SinkResponse::Status(500, "try later"));
  Start();
  if (HasFatalFailure()) return;

  std::vector<std::string> ids = IngestSignedEverywhere();
  ASSERT_EQ(ids.size(), 5u);

  // Catalog changes through the API, with secrets: a source (its secret rotated), a
  // destination with a signing secret, a route; then an event through them.
  EXPECT_EQ(Api("POST", "/api/v1/sources",
                R"({"name":"api-src","verify":{"scheme":"github","secrets":[")" +
                    api_source_secret_ + R"("]}})")
                .status,
            201);
  EXPECT_EQ(Api("PATCH", "/api/v1/sources/api-src",
                R"({"verify":{"scheme":"github","secrets":[")" + api_source_secret_ + R"(",")" +
                    api_source_secret2_ + R"("]}})")
                .status,
            200);
  json::object api_dst{{"name", "api-dst"},
                       {"allow_private", true},
                       {"url", sink_.url("/api")},
                       {"signing_secret", api_signing_}};
  api_dst["auth"] = {{"basic", {{"username", "relay"}, {"password", api_basic_password_}}}};
  api_dst["tls"] = {{"client_cert", pems_.client_cert_pem()},
                    {"client_key", pems_.client_key_pem()},
                    {"ca_file", pems_.ca_pem()}};
  EXPECT_EQ(Api("POST", "/api/v1/destinations", json::serialize(api_dst)).status, 201);
  EXPECT_EQ(Api("POST", "/api/v1/routes", R"({"source":"api-src","destination":"api-dst"})").status,
            201);
  // The credential replaced, and the key given again: the audit names the fields only.
  EXPECT_EQ(
      Api("PATCH", "/api/v1/destinations/api-dst",
          json::serialize(json::object{{"auth", {{"basic", nullptr}, {"bearer", api_bearer_}}},
                                       {"tls", {{"client_key", pems_.client_key_pem()}}}}))
          .status,
      200);
  const std::string body = R"({"via":"api"})";
  HttpResponse via_api = Ingest(
      "api-src",
      {{"X-Hub-Signature-256", "sha256=" + HexEncode(HmacSha256(api_source_secret2_, body))}},
      body);
  ASSERT_EQ(via_api.status, 202) << via_api.body;
  ids.emplace_back(json::parse(via_api.body).at("id").as_string());

  // Deliveries: five to "ok", one to the API destination, one given up at "failing" (which
  // also opens its breaker), one that pauses "gone".
  EXPECT_TRUE(test::WaitFor([&] {
    return Metric("hookrelay_deliveries_total{destination=\"ok\",outcome=\"delivered\"} ") == 5 &&
           Metric("hookrelay_deliveries_total{destination=\"api-dst\",outcome=\"delivered\"} ") ==
               1 &&
           Metric("hookrelay_deliveries_total{destination=\"failing\",outcome=\"failed\"} ") == 1 &&
           Metric("hookrelay_destination_paused{destination=\"gone\"} ") == 1;
  })) << server_->output();
  // Alerts: by email (over STARTTLS, with the password) and to the webhook, whose first call
  // failed.
  EXPECT_TRUE(test::WaitFor([&] { return !smtp_->Messages().empty(); })) << server_->output();
  EXPECT_TRUE(test::WaitFor([&] {
    size_t calls = 0;
    for (const auto& r : sink_.Requests()) calls += r.path.rfind("/alerts/", 0) == 0;
    return calls >= 2;
  })) << server_->output();
  EXPECT_TRUE(test::WaitFor([&] { return Metric("hookrelay_alerts_failed_total ") >= 1; }));

  // Operator actions: resume, reset the breaker, replay one event and all failed ones.
  EXPECT_EQ(Api("POST", "/api/v1/destinations/gone/resume").status, 200);
  EXPECT_EQ(Api("POST", "/api/v1/destinations/failing/reset-breaker").status, 200);
  EXPECT_EQ(Api("POST", "/api/v1/events/" + ids[0] + "/replay").status, 202);
  HttpResponse bulk = Api("POST", "/api/v1/replays", R"({"status":"failed","rate":"100/s"})");
  EXPECT_EQ(bulk.status, 202) << bulk.body;
  std::string replay_id;
  if (bulk.status == 202) replay_id = std::string(json::parse(bulk.body).at("id").as_string());
  // A wrong admin token (logged as a warning) must not show the right one either.
  {
    HttpConnection conn(server_->port());
    HttpResponse wrong = conn.Send("GET", "/api/v1/stats", {{"Authorization", "Bearer nope"}});
    Keep("GET /api/v1/stats (wrong token)", wrong);
    EXPECT_EQ(wrong.status, 401);
  }

  // A named token (issue 28): created (its one answer holds it and is not kept), used, refused
  // for what its role may not do, revoked, refused. It must be in no log line and no other answer.
  {
    HttpConnection conn(server_->port());
    HttpResponse created = conn.Send(
        "POST", "/api/v1/tokens",
        {{"Authorization", "Bearer " + admin_token_}, {"Content-Type", "application/json"}},
        R"({"name": "dash", "role": "viewer"})");
    ASSERT_EQ(created.status, 201) << created.body;
    const std::string named(json::parse(created.body).at("token").as_string());
    secrets_.AddText("named API token", named);
    for (const char* path : {"/api/v1/events", "/api/v1/whoami"}) {
      HttpResponse r = conn.Send("GET", path, {{"Authorization", "Bearer " + named}});
      Keep(std::string("GET ") + path + " (named token)", r);
      EXPECT_EQ(r.status, 200) << r.body;
    }
    HttpResponse denied = conn.Send("POST", "/api/v1/destinations/gone/pause",
                                    {{"Authorization", "Bearer " + named}});
    Keep("POST pause (viewer)", denied);
    EXPECT_EQ(denied.status, 403) << denied.body;
    EXPECT_EQ(Api("DELETE", "/api/v1/tokens/dash").status, 200);
    HttpResponse revoked =
        conn.Send("GET", "/api/v1/events", {{"Authorization", "Bearer " + named}});
    Keep("GET /api/v1/events (revoked token)", revoked);
    EXPECT_EQ(revoked.status, 401) << revoked.body;
    Api("GET", "/api/v1/tokens");
  }

  GetEverything(ids, replay_id);
  // Issue 28: the store's files (the SQLite file, its write-ahead log, the shared memory) hold
  // no secret either, while the server runs and after it stopped (secrets at rest are encrypted).
  auto store_files = [this](const std::string& when) {
    size_t files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path() + "/data")) {
      if (!entry.is_regular_file()) continue;
      ++files;
      const std::string bytes = testing::ReadFile(entry.path().string());
      EXPECT_THAT(secrets_.FoundIn(bytes), ::testing::IsEmpty())
          << entry.path().filename() << " (" << bytes.size() << " bytes) " << when;
    }
    EXPECT_GE(files, 2u) << when;
  };
  store_files("while the server runs");
  EXPECT_TRUE(std::filesystem::exists(dir_.path() + "/data/hookrelay.db-wal"));
  ASSERT_EQ(server_->Stop(), 0) << server_->output();
  store_files("after it stopped");

  // The scenario ran: the log holds its debug lines and failures.
  const std::string log = server_->stderr_output();
  EXPECT_THAT(log, ::testing::HasSubstr("webhook alert")) << log;
  EXPECT_THAT(log, ::testing::HasSubstr("wrong bearer token")) << log;
  std::istringstream lines(log);
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    EXPECT_THAT(secrets_.FoundIn(line), ::testing::IsEmpty()) << "log line " << n << ": " << line;
    if (GetParam() == "json") {
      json::error_code ec;
      json::value v = json::parse(line, ec);
      EXPECT_FALSE(ec) << "log line " << n << " is not JSON: " << line;
    }
  }
  EXPECT_GT(n, 10);
  // What serve printed on stdout (the address, the dashboard; the token came from the
  // environment, so it is not shown).
  EXPECT_THAT(secrets_.FoundIn(server_->stdout_output()), ::testing::IsEmpty())
      << server_->stdout_output();
  for (const auto& [what, answer] : answers_) {
    EXPECT_THAT(secrets_.FoundIn(answer), ::testing::IsEmpty()) << what << ":\n" << answer;
  }
  EXPECT_GT(answers_.size(), 40u);
}

INSTANTIATE_TEST_SUITE_P(Formats, LogSecretsTest, ::testing::Values("text", "json"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace hookrelay
