// Hostile input to every management API endpoint (issue 14), against the real binary: wrong
// types, missing and unknown fields, huge strings, invalid UTF-8, bad durations, negative
// numbers, malformed JSON and query parameters. Each must be a 4xx JSON error whose `field` (and
// message) names what was wrong — never a 5xx, never a crash. The cases are one table.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/process.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using std::chrono::seconds;
using testing::HookrelayServer;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::TempDir;

constexpr const char* kToken = "test-admin-token-0123456789abcdef0123";

constexpr const char* kConfig = R"(
[server]
allow_private_destinations = true

[[sources]]
name = "s"

[[destinations]]
name = "d"
url = "http://127.0.0.1:9/"

[[routes]]
source = "s"
destination = "d"
)";

struct Case {
  std::string method;
  std::string target;  // "{event}" is replaced by a real event id
  std::string body;
  int status;         // the expected 4xx
  std::string field;  // what error.field (and the message) must name; "" when none is expected
  std::string message = {};  // a part of error.message, when the case pins one
};

std::string Huge(size_t n) { return std::string(n, 'h'); }

// Generic bodies every JSON-taking endpoint must refuse as a whole (field "body").
std::vector<Case> MalformedBodies(const std::string& method, const std::string& target) {
  std::vector<Case> cases;
  for (std::string body : {std::string("{"), std::string("{\"a\":1,}"), std::string("{} {}"),
                           std::string("{'a':1}"), std::string("{\"a\":tru}"),
                           std::string(2000, '[') + std::string(2000, ']')}) {  // deep nesting
    cases.push_back({method, target, body, 400, "body", "malformed JSON"});
  }
  // Bytes that are not UTF-8: the message says so and where (byte 6, after {"a":").
  for (std::string body : {std::string("{\"a\":\"\xff\xfe\"}"),         // invalid UTF-8
                           std::string("{\"a\":\"\xc0\xaf\"}"),         // overlong UTF-8
                           std::string("{\"a\":\"\xed\xa0\x80\"}")}) {  // a UTF-16 surrogate
    cases.push_back({method, target, body, 400, "body", "malformed JSON: invalid UTF-8 at byte 6"});
  }
  for (std::string body : {"[]", "[1,2]", "null", "\"text\"", "42", "true"}) {
    cases.push_back({method, target, body, 400, "body", "must be a JSON object"});
  }
  return cases;
}

class ApiInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<HookrelayServer>(HookrelayServer::Options{
        kConfig, dir_.path() + "/data", {}, {{"HOOKRELAY_ADMIN_TOKEN", kToken}}});
    ASSERT_TRUE(server_->ok()) << server_->output();
  }

  HttpResponse Api(const std::string& method, const std::string& target,
                   const std::string& body = {}) {
    HttpConnection c(server_->port(), "127.0.0.1", seconds(10));
    testing::HeaderList headers = {{"Authorization", std::string("Bearer ") + kToken}};
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    return c.Send(method, target, headers, body);
  }

  TempDir dir_;
  std::unique_ptr<HookrelayServer> server_;
};

TEST_F(ApiInputTest, EveryEndpointAnswersBadInputWith4xxNamingTheField) {
  // Objects the API owns (config-file ones refuse PATCH with 409 before looking at the body),
  // and an event to replay.
  ASSERT_EQ(Api("POST", "/api/v1/sources", R"({"name": "api-src"})").status, 201);
  ASSERT_EQ(
      Api("POST", "/api/v1/destinations", R"({"name": "api-dest", "url": "http://127.0.0.1:9/"})")
          .status,
      201);
  {
    HttpConnection c(server_->port());
    ASSERT_EQ(c.Send("POST", "/in/s", {}, "{}").status, 202);
  }
  json::value page = json::parse(Api("GET", "/api/v1/events").body);
  ASSERT_EQ(page.at("items").as_array().size(), 1u);
  const std::string event_id(page.at("items").at(0).at("id").as_string());

  const std::string huge = Huge(60 * 1024);  // under the API's 64 KiB body limit
  std::vector<Case> cases = {
      // POST /api/v1/sources
      {"POST", "/api/v1/sources", "", 400, "body"},
      {"POST", "/api/v1/sources", "{}", 400, "name"},
      {"POST", "/api/v1/sources", R"({"name": 5})", 400, "name"},
      {"POST", "/api/v1/sources", R"({"name": null})", 400, "name"},
      {"POST", "/api/v1/sources", R"({"name": ["a"]})", 400, "name"},
      {"POST", "/api/v1/sources", R"({"name": ""})", 400, "name"},
      {"POST", "/api/v1/sources", R"({"name": "a/b"})", 400, "name"},
      {"POST", "/api/v1/sources", R"({"name": "a\u0000b"})", 400, "name"},
      {"POST", "/api/v1/sources", R"({"name": ")" + huge + R"("})", 400, "name"},
      {"POST", "/api/v1/sources", R"({"name": "x", "bogus": 1})", 400, "bogus"},
      {"POST", "/api/v1/sources", R"({"name": "x", ")" + Huge(1000) + R"(": 1})", 400, Huge(1000)},
      {"POST", "/api/v1/sources", R"({"name": "x", "max_body": -1})", 400, "max_body"},
      {"POST", "/api/v1/sources", R"({"name": "x", "max_body": "-5KiB"})", 400, "max_body"},
      {"POST", "/api/v1/sources", R"({"name": "x", "max_body": "lots"})", 400, "max_body"},
      {"POST", "/api/v1/sources", R"({"name": "x", "max_body": "999999TiB"})", 400, "max_body"},
      {"POST", "/api/v1/sources", R"({"name": "x", "max_body": 1.5})", 400, "max_body"},
      {"POST", "/api/v1/sources", R"({"name": "x", "max_body": true})", 400, "max_body"},
      {"POST", "/api/v1/sources", R"({"name": "x", "verify": "yes"})", 400, "verify"},
      {"POST", "/api/v1/sources", R"({"name": "x", "verify": {}})", 400, "verify.scheme"},
      {"POST", "/api/v1/sources", R"({"name": "x", "verify": {"scheme": 5}})", 400,
       "verify.scheme"},
      {"POST", "/api/v1/sources", R"({"name": "x", "dedup": "yes"})", 400, "dedup"},
      {"POST", "/api/v1/sources", R"({"name": "s"})", 409, ""},  // the config file's
      // PATCH /api/v1/sources/{name}
      {"PATCH", "/api/v1/sources/api-src", "", 400, "body"},
      {"PATCH", "/api/v1/sources/api-src", R"({"name": "other"})", 400, "name"},
      {"PATCH", "/api/v1/sources/api-src", R"({"max_body": "-1B"})", 400, "max_body"},
      {"PATCH", "/api/v1/sources/api-src", R"({"max_body": {}})", 400, "max_body"},
      {"PATCH", "/api/v1/sources/api-src", R"({"bogus": true})", 400, "bogus"},
      {"PATCH", "/api/v1/sources/nosuch", R"({"max_body": "1KiB"})", 404, ""},
      // POST /api/v1/destinations
      {"POST", "/api/v1/destinations", "", 400, "body"},
      {"POST", "/api/v1/destinations", R"({"name": "x"})", 400, "url"},
      {"POST", "/api/v1/destinations", R"({"url": "http://127.0.0.1:9/"})", 400, "name"},
      {"POST", "/api/v1/destinations", R"({"name": "x", "url": 5})", 400, "url"},
      {"POST", "/api/v1/destinations", R"({"name": "x", "url": "ftp://h/"})", 400, "url"},
      {"POST", "/api/v1/destinations", R"({"name": "x", "url": "not a url"})", 400, "url"},
      {"POST", "/api/v1/destinations", R"({"name": "x", "url": "http://)" + huge + R"(/"})", 400,
       "url"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "max_concurrency": -1})", 400,
       "max_concurrency"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "max_concurrency": "8"})", 400,
       "max_concurrency"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "max_concurrency": 1.5})", 400,
       "max_concurrency"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "max_concurrency": 1e30})", 400,
       "max_concurrency"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "max_concurrency": -9223372036854775808})",
       400, "max_concurrency"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "rate_limit": 5})", 400, "rate_limit"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "rate_limit": "-1/s"})", 400, "rate_limit"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "rate_limit": "fast"})", 400, "rate_limit"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "replay_window": "-1h"})", 400,
       "replay_window"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "replay_window": "soon"})", 400,
       "replay_window"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "replay_window": 5})", 400, "replay_window"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "replay_window": "99999999999999d"})", 400,
       "replay_window"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "policy": "fast"})", 400,
       "policy.preset"},  // a string names a preset
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "policy": {"max_attempts": -1}})", 400,
       "policy.max_attempts"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "policy": {"max_attempts": "3"}})", 400,
       "policy.max_attempts"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "policy": {"base": "-1s"}})", 400,
       "policy.base"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "policy": {"timeout": "1 fortnight"}})", 400,
       "policy.timeout"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "policy": {"delays": ["1s", -1]}})", 400,
       "policy.delays[1]"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "policy": {"strategy": "yolo"}})", 400,
       "policy.strategy"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "policy": {"bogus": 1}})", 400,
       "policy.bogus"},
      // tls and auth (issue 17): wrong types, files that are not there or not files, no PEM.
      {"POST", "/api/v1/destinations", R"({"name": "x", "url": "http://127.0.0.1:9/", "tls": 5})",
       400, "tls"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "tls": {"client_cert": []}})", 400,
       "tls.client_cert"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "tls": {"ca_file": "/dev/null"}})", 400,
       "tls.ca_file", "not a regular file"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "tls": {"ca_file": "/proc/version"}})", 400,
       "tls.ca_file", "/proc/version holds no PEM"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "tls": {"client_key": "@../../etc/x"}})", 400,
       "tls.client_key", "relative path"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "tls": {"ca_file": ")" + huge + R"("}})", 400,
       "tls.ca_file", "too long for a path"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "tls": {"client_cert": "-----BEGIN \u0000"}})",
       400, "tls.client_key"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "auth": {"bearer": 5}})", 400, "auth.bearer"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "auth": {"basic": "u:p"}})", 400,
       "auth.basic"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "auth": {"bearer": "a\u0000b"}})", 400,
       "auth.bearer"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "breaker": {"threshold": -3}})", 400,
       "breaker.threshold"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "breaker": {"open": "1m"}})", 400,
       "breaker.open"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "headers": []})", 400, "headers"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "headers": {"X-A": 5}})", 400, "headers.X-A"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "headers": {"X-A": "a\r\nb"}})", 400,
       "headers.X-A"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "ordered": "yes"})", 400, "ordered"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "order_key": {"xml": "a"}})", 400,
       "order_key.xml"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "order_key": {"json": "a..b"}})", 400,
       "order_key.json"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "order_key": "X-Shop"})", 400, "order_key"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "paused": 1})", 400, "paused"},
      {"POST", "/api/v1/destinations",
       R"({"name": "x", "url": "http://127.0.0.1:9/", "signing_secret": 5})", 400,
       "signing_secret"},
      {"POST", "/api/v1/destinations", R"({"name": "x", "url": "http://127.0.0.1:9/", "bogus": 1})",
       400, "bogus"},
      // PATCH /api/v1/destinations/{name}
      {"PATCH", "/api/v1/destinations/api-dest", "", 400, "body"},
      {"PATCH", "/api/v1/destinations/api-dest", R"({"url": "nope"})", 400, "url"},
      {"PATCH", "/api/v1/destinations/api-dest", R"({"max_concurrency": -5})", 400,
       "max_concurrency"},
      {"PATCH", "/api/v1/destinations/api-dest", R"({"policy": {"cap": "-1m"}})", 400,
       "policy.cap"},
      {"PATCH", "/api/v1/destinations/api-dest", R"({"name": "renamed"})", 400, "name"},
      {"PATCH", "/api/v1/destinations/api-dest", R"({"bogus": 1})", 400, "bogus"},
      // POST /api/v1/routes
      {"POST", "/api/v1/routes", "", 400, "body"},
      {"POST", "/api/v1/routes", "{}", 400, "source"},
      {"POST", "/api/v1/routes", R"({"source": "s"})", 400, "destination"},
      {"POST", "/api/v1/routes", R"({"source": 5, "destination": "d"})", 400, "source"},
      {"POST", "/api/v1/routes", R"({"source": "nosuch", "destination": "d"})", 400, "source"},
      {"POST", "/api/v1/routes", R"({"source": "s", "destination": "nosuch"})", 400, "destination"},
      {"POST", "/api/v1/routes", R"({"source": "s", "destination": "api-dest", "id": 5})", 400,
       "id"},
      {"POST", "/api/v1/routes", R"({"source": "s", "destination": "api-dest", "x": 1})", 400, "x"},
      // pause, resume, reset-breaker
      {"POST", "/api/v1/destinations/d/pause", R"({"reason": 5})", 400, "reason"},
      {"POST", "/api/v1/destinations/d/pause", R"({"reason": ""})", 400, "reason"},
      {"POST", "/api/v1/destinations/d/pause", R"({"reason": "x", "until": "1h"})", 400, "until"},
      {"POST", "/api/v1/destinations/d/resume", R"({"now": true})", 400, "now"},
      {"POST", "/api/v1/destinations/d/reset-breaker", R"({"force": true})", 400, "force"},
      {"POST", "/api/v1/destinations/nosuch/pause", "", 404, ""},
      // POST /api/v1/events/{id}/replay
      {"POST", "/api/v1/events/{event}/replay", R"({"destination": 5})", 400, "destination"},
      {"POST", "/api/v1/events/{event}/replay", R"({"destination": "nosuch"})", 400, "destination"},
      {"POST", "/api/v1/events/{event}/replay", R"({"destination": ")" + huge + R"("})", 400,
       "destination"},
      {"POST", "/api/v1/events/{event}/replay", R"({"bogus": 1})", 400, "bogus"},
      {"POST", "/api/v1/events/not-an-id/replay", "", 400, "id"},
      // POST /api/v1/replays
      {"POST", "/api/v1/replays", R"({"rate": -1})", 400, "rate"},
      {"POST", "/api/v1/replays", R"({"rate": 0})", 400, "rate"},
      {"POST", "/api/v1/replays", R"({"rate": 1e300})", 400, "rate"},
      {"POST", "/api/v1/replays", R"({"rate": "fast"})", 400, "rate"},
      {"POST", "/api/v1/replays", R"({"rate": "-5/s"})", 400, "rate"},
      {"POST", "/api/v1/replays", R"({"rate": true})", 400, "rate"},
      {"POST", "/api/v1/replays", R"({"since": "yesterday"})", 400, "since"},
      {"POST", "/api/v1/replays", R"({"since": 5})", 400, "since"},
      {"POST", "/api/v1/replays", R"({"until": "2026-13-45T99:00:00Z"})", 400, "until"},
      {"POST", "/api/v1/replays",
       R"({"since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"})", 400, "until"},
      {"POST", "/api/v1/replays", R"({"status": "weird"})", 400, "status"},
      {"POST", "/api/v1/replays", R"({"status": 5})", 400, "status"},
      {"POST", "/api/v1/replays", R"({"source": 5})", 400, "source"},
      {"POST", "/api/v1/replays", R"({"source": "nosuch"})", 400, "source"},
      {"POST", "/api/v1/replays", R"({"destination": "nosuch"})", 400, "destination"},
      {"POST", "/api/v1/replays", R"({"destination": ")" + huge + R"("})", 400, "destination"},
      {"POST", "/api/v1/replays", R"({"bogus": 1})", 400, "bogus"},
      // Query parameters and ids in paths.
      {"GET", "/api/v1/events?limit=-1", "", 400, "limit"},
      {"GET", "/api/v1/events?limit=0", "", 400, "limit"},
      {"GET", "/api/v1/events?limit=abc", "", 400, "limit"},
      {"GET", "/api/v1/events?limit=99999999999999999999", "", 400, "limit"},
      {"GET", "/api/v1/events?limit=1&limit=2", "", 400, "limit"},
      {"GET", "/api/v1/events?since=yesterday", "", 400, "since"},
      {"GET", "/api/v1/events?since=%zz", "", 400, "since"},
      {"GET", "/api/v1/events?until=2026-01-01T00:00:00Z&since=2026-02-01T00:00:00Z", "", 400,
       "until"},
      {"GET", "/api/v1/events?status=weird", "", 400, "status"},
      {"GET", "/api/v1/events?staus=failed", "", 400, "staus"},
      {"GET", "/api/v1/events?cursor=junk", "", 400, "cursor"},
      {"GET", "/api/v1/events?cursor=" + Huge(4000), "", 400, "cursor"},
      {"GET", "/api/v1/events/not-an-id", "", 400, "id"},
      {"GET", "/api/v1/events/{event}?body=maybe", "", 400, "body"},
      {"GET", "/api/v1/audit?limit=-5", "", 400, "limit"},
      {"GET", "/api/v1/audit?cursor=junk", "", 400, "cursor"},
      {"GET", "/api/v1/replays?limit=x", "", 400, "limit"},
      {"GET", "/api/v1/replays/not-an-id", "", 400, "id"},
      {"DELETE", "/api/v1/replays/not-an-id", "", 400, "id"},
      {"GET", "/api/v1/stats?window=-1h", "", 400, "window"},
      {"GET", "/api/v1/stats?window=90s", "", 400, "window"},
      {"GET", "/api/v1/stats?window=abc", "", 400, "window"},
      {"GET", "/api/v1/stats?window=100000d", "", 400, "window"},
      {"GET", "/api/v1/stats?step=0m", "", 400, "step"},
      {"GET", "/api/v1/stats?step=-1m", "", 400, "step"},
      {"GET", "/api/v1/stats?window=1h&step=2h", "", 400, "step"},
      {"GET", "/api/v1/stats?bogus=1", "", 400, "bogus"},
  };
  for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"POST", "/api/v1/sources"},
           {"PATCH", "/api/v1/sources/api-src"},
           {"POST", "/api/v1/destinations"},
           {"PATCH", "/api/v1/destinations/api-dest"},
           {"POST", "/api/v1/routes"},
           {"POST", "/api/v1/destinations/d/pause"},
           {"POST", "/api/v1/destinations/d/resume"},
           {"POST", "/api/v1/destinations/d/reset-breaker"},
           {"POST", "/api/v1/events/{event}/replay"},
           {"POST", "/api/v1/replays"},
       }) {
    for (Case c : MalformedBodies(method, target)) cases.push_back(c);
  }

  for (Case c : cases) {
    if (auto at = c.target.find("{event}"); at != std::string::npos) {
      c.target.replace(at, 7, event_id);
    }
    const std::string what = c.method + " " + c.target.substr(0, 120) + " " + c.body.substr(0, 120);
    HttpResponse r = Api(c.method, c.target, c.body);
    EXPECT_EQ(r.status, c.status) << what << " → " << r.body.substr(0, 300);
    EXPECT_LT(r.status, 500) << what;
    boost::system::error_code ec;
    json::value v = json::parse(r.body, ec);
    const json::value* e = !ec && v.is_object() ? v.as_object().if_contains("error") : nullptr;
    if (e == nullptr || !e->is_object() || !e->as_object().contains("message") ||
        !e->at("message").is_string() || !e->as_object().contains("code")) {
      ADD_FAILURE() << what << " → not a JSON error: " << r.body.substr(0, 300);
      continue;
    }
    const json::object* error = &e->as_object();
    const std::string message(error->at("message").as_string());
    EXPECT_FALSE(message.empty()) << what;
    if (!c.field.empty()) {
      const json::value* field = error->if_contains("field");
      EXPECT_TRUE(field != nullptr && field->is_string() && field->as_string() == c.field)
          << what << " → " << r.body.substr(0, 300);
      EXPECT_NE(message.find(c.field), std::string::npos)
          << what << ": the message names the field → " << message.substr(0, 300);
    }
    if (!c.message.empty()) {
      EXPECT_NE(message.find(c.message), std::string::npos)
          << what << ": the message says \"" << c.message << "\" → " << message.substr(0, 300);
    }
  }
  // Nothing was created or changed by any of it, and the server is still well.
  json::value sources = json::parse(Api("GET", "/api/v1/sources").body);
  EXPECT_EQ(sources.at("items").as_array().size(), 2u) << sources;
  json::value dests = json::parse(Api("GET", "/api/v1/destinations").body);
  EXPECT_EQ(dests.at("items").as_array().size(), 2u);
  json::value routes = json::parse(Api("GET", "/api/v1/routes").body);
  EXPECT_EQ(routes.at("items").as_array().size(), 1u);
  json::value replays = json::parse(Api("GET", "/api/v1/replays").body);
  EXPECT_EQ(replays.at("items").as_array().size(), 0u);
  EXPECT_EQ(Api("GET", "/healthz").status, 200);
  EXPECT_EQ(server_->Stop(), 0) << server_->output();
}

// A body past the API's 64 KiB limit is 413 before it is read, as a JSON error naming the body.
TEST_F(ApiInputTest, OversizedBodiesAre413) {
  for (std::string target : {"/api/v1/sources", "/api/v1/destinations", "/api/v1/routes",
                             "/api/v1/replays", "/api/v1/destinations/d/pause"}) {
    HttpResponse r = Api("POST", target, "{\"name\": \"" + Huge(100 * 1024) + "\"}");
    EXPECT_EQ(r.status, 413) << target << " → " << r.body.substr(0, 200);
    boost::system::error_code ec;
    json::value v = json::parse(r.body, ec);
    ASSERT_FALSE(ec) << r.body;
    EXPECT_TRUE(v.is_object() && v.as_object().contains("error")) << r.body;
  }
  EXPECT_EQ(Api("GET", "/healthz").status, 200);
}

}  // namespace
}  // namespace hookrelay
