// The management commands' pure parts: rendering the API's JSON with a fixed "now" and time
// zone, request paths, time flags and error mapping. No network.
#include "cli/render.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <ctime>

#include "cli/api_client.h"
#include "cli/events_command.h"
#include "cli/replay_command.h"
#include "common/time_format.h"

namespace hookrelay::cli {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

TimePoint At(const char* rfc3339) { return *ParseRfc3339(rfc3339); }

class RenderTest : public ::testing::Test {
 protected:
  // Local time is UTC unless a test says otherwise; POSIX TZ strings need no tzdata.
  void SetUp() override { SetTz("UTC0"); }
  void TearDown() override { SetTz("UTC0"); }
  static void SetTz(const char* tz) {
    setenv("TZ", tz, 1);
    tzset();
  }
  const TimePoint now_ = At("2026-11-30T06:02:00Z");
};

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}
#define EXPECT_CONTAINS(h, n) EXPECT_TRUE(Contains(h, n)) << "missing \"" << (n) << "\" in\n" << (h)
#define EXPECT_LACKS(h, n) \
  EXPECT_FALSE(Contains(h, n)) << "unexpected \"" << (n) << "\" in\n" << (h)

TEST_F(RenderTest, RelativeTimes) {
  EXPECT_EQ(FormatRelative(now_ + 3min, now_), "in 3m");
  EXPECT_EQ(FormatRelative(now_ + 3min + 12s + 500ms, now_), "in 3m12s");
  EXPECT_EQ(FormatRelative(now_ - 5min, now_), "5m ago");
  EXPECT_EQ(FormatRelative(now_ + 1h + 5s, now_), "in 1h");  // two places: 1h0m
  EXPECT_EQ(FormatRelative(now_ + 23h + 58min, now_), "in 23h58m");
  EXPECT_EQ(FormatRelative(now_ - 50h, now_), "2d2h ago");
  EXPECT_EQ(FormatRelative(now_ + 999ms, now_), "now");
  EXPECT_EQ(FormatRelative(now_ - 999ms, now_), "now");
  EXPECT_EQ(FormatRelative(now_ + 45s, now_), "in 45s");
}

TEST_F(RenderTest, LocalTimeOnTheSameDayShowsOnlyTheClock) {
  EXPECT_EQ(FormatLocalAndRelative(At("2026-11-30T06:05:31Z"), now_), "06:05:31, in 3m31s");
  EXPECT_EQ(FormatLocalAndRelative(At("2026-12-01T06:00:00Z"), now_),
            "2026-12-01 06:00:00, in 23h58m");
  EXPECT_EQ(FormatLocalAndRelative(At("2026-11-29T23:00:00Z"), now_),
            "2026-11-29 23:00:00, 7h2m ago");
}

TEST_F(RenderTest, TimesAreShownInTheLocalZone) {
  SetTz("CET-1");  // UTC+1, no daylight saving
  EXPECT_EQ(FormatLocalAndRelative(At("2026-11-30T06:05:31Z"), now_), "07:05:31, in 3m31s");
  // 23:30 UTC is already the next local day.
  EXPECT_EQ(FormatLocalAndRelative(At("2026-11-30T23:30:00Z"), now_),
            "2026-12-01 00:30:00, in 17h28m");
}

TEST_F(RenderTest, ApiTimes) {
  json::value t = "2026-11-30T06:05:31.250Z";
  EXPECT_EQ(FormatApiTime(&t, now_), "06:05:31, in 3m31s");
  json::value null = nullptr;
  EXPECT_EQ(FormatApiTime(&null, now_), "-");
  EXPECT_EQ(FormatApiTime(nullptr, now_), "-");
  json::value junk = "yesterday";
  EXPECT_EQ(FormatApiTime(&junk, now_), "yesterday");
}

TEST_F(RenderTest, EventList) {
  json::array items = json::parse(R"([
    {"id": "01JAAA", "source": "stripe", "received_at": "2026-11-30T06:00:00.123Z", "size": 1234},
    {"id": "01JBBBBBBB", "source": "gh", "received_at": "2026-11-29T05:00:00Z", "size": 7}])")
                          .as_array();
  std::string out = RenderEventList(items, now_);
  EXPECT_EQ(out,
            "ID          SOURCE  RECEIVED                       SIZE\n"
            "01JAAA      stripe  06:00:00, 1m59s ago            1234 B\n"
            "01JBBBBBBB  gh      2026-11-29 05:00:00, 1d1h ago  7 B\n");
  EXPECT_EQ(RenderEventList(json::array{}, now_), "No events.\n");
}

const char* kEventDetail = R"json({
  "id": "01JEVENT", "source": "stripe", "received_at": "2026-11-30T06:00:00.123Z", "size": 1234,
  "headers": [["content-type", "application/json"]], "body_base64": "e30=",
  "deliveries": [
    {"destination": "billing", "status": "scheduled", "attempt": 1, "max_attempts": 5,
     "next_attempt_at": "2026-11-30T06:05:00Z", "deadline": "2026-12-01T06:00:00Z",
     "reason": null, "chain": 0,
     "attempts": [{"n": 1, "started_at": "2026-11-30T06:00:00.200Z", "duration_ms": 12,
                   "status_code": 500, "error": null, "retry_after": null,
                   "response_snippet": "{\"error\": \"db down\"}\n", "response_snippet_encoding": "utf-8"}]},
    {"destination": "ops", "status": "failed", "attempt": 2, "max_attempts": 2,
     "next_attempt_at": null, "deadline": null,
     "reason": "gave up after 2 attempts (max_attempts)", "chain": 0,
     "attempts": [{"n": 1, "started_at": "2026-11-30T06:00:00.300Z", "duration_ms": 3,
                   "status_code": null, "error": "connection refused", "retry_after": null},
                  {"n": 2, "started_at": "2026-11-30T06:01:00Z", "duration_ms": 30000,
                   "status_code": 503, "error": null, "retry_after": "120"}]},
    {"destination": "billing", "status": "delivered", "attempt": 1, "max_attempts": 5,
     "next_attempt_at": null, "deadline": null, "reason": null, "chain": 1, "attempts": []}]})json";

TEST_F(RenderTest, EventDetail) {
  std::string out = RenderEventDetail(json::parse(kEventDetail).as_object(), now_);
  EXPECT_CONTAINS(out, "Event 01JEVENT\n");
  EXPECT_CONTAINS(out, "  source    stripe\n");
  EXPECT_CONTAINS(out, "  received  06:00:00, 1m59s ago\n");
  EXPECT_CONTAINS(out, "  size      1234 B\n");
  EXPECT_CONTAINS(out, "Delivery to billing: scheduled, attempt 1 of 5\n");
  EXPECT_CONTAINS(out, "  next retry 06:05:00, in 3m\n");
  EXPECT_CONTAINS(out, "  deadline 2026-12-01 06:00:00, in 23h58m\n");
  EXPECT_CONTAINS(out, "Delivery to ops: failed, attempt 2 of 2\n");
  EXPECT_CONTAINS(out, "  reason: gave up after 2 attempts (max_attempts)\n");
  EXPECT_CONTAINS(out, "Delivery to billing (replay 1): delivered, attempt 1 of 5\n");
  // The attempts table, under each delivery.
  EXPECT_CONTAINS(out, "    #  STARTED              RESULT    DURATION  RETRY-AFTER  RESPONSE\n");
  // Issue 10.5: what the endpoint answered, on one line.
  EXPECT_CONTAINS(out,
                  "    1  06:00:00, 1m59s ago  HTTP 500  12ms      -            "
                  "{\"error\": \"db down\"}\\n\n");
  EXPECT_CONTAINS(out, "error: connection refused");
  EXPECT_CONTAINS(out, "HTTP 503");
  EXPECT_CONTAINS(out, "30000ms");
  EXPECT_CONTAINS(out, "120          -\n");
  // Only the scheduled delivery has a next retry; no reason shown for healthy deliveries.
  EXPECT_EQ(out.find("next retry"), out.rfind("next retry"));
  EXPECT_EQ(out.find("reason:"), out.rfind("reason:"));
}

// Issue 10.5: a long or binary response stays on one line of about 60 characters, with control
// characters escaped (no terminal escape sequence reaches the screen).
TEST_F(RenderTest, EventDetailResponseSnippetIsOneEscapedLine) {
  json::object event = json::parse(kEventDetail).as_object();
  json::object& attempt =
      event.at("deliveries").as_array()[0].at("attempts").as_array()[0].as_object();
  attempt["response_snippet"] = "\x1b[31mred\r\n" + std::string(200, 'z');
  std::string out = RenderEventDetail(event, now_);
  EXPECT_LACKS(out, "\x1b");
  EXPECT_CONTAINS(out, "\\x1b[31mred\\r\\n" + std::string(44, 'z') + "…\n");
  attempt["response_snippet"] = "b2sK/w==";  // "ok\n\xff": not UTF-8, so sent as base64
  attempt["response_snippet_encoding"] = "base64";
  EXPECT_CONTAINS(RenderEventDetail(event, now_), "ok\\n\\xff\n");
}

TEST_F(RenderTest, EventDetailToleratesMissingFields) {
  std::string out = RenderEventDetail(
      json::parse(R"({"id": "x", "deliveries": [{"destination": "d", "status": "failed"}]})")
          .as_object(),
      now_);
  EXPECT_CONTAINS(out, "Event x\n");
  EXPECT_CONTAINS(out, "  received  -\n");
  EXPECT_CONTAINS(out, "Delivery to d: failed, attempt - of -\n");
  EXPECT_CONTAINS(out, "  reason: not recorded\n");
  EXPECT_CONTAINS(
      RenderEventDetail(json::parse(R"({"id": "y", "deliveries": []})").as_object(), now_),
      "No deliveries");
}

TEST_F(RenderTest, Sources) {
  json::array items = json::parse(R"([
    {"name": "github", "max_body": "5MiB",
     "verify": {"scheme": "github", "secrets_set": 2, "tolerance": "5m"},
     "dedup": {"header": "X-GitHub-Delivery"}, "origin": "config"},
    {"name": "plain", "max_body": "64KiB", "verify": null, "dedup": null, "origin": "api"}])")
                          .as_array();
  EXPECT_EQ(RenderSourceList(items),
            "NAME    VERIFY  DEDUP                     MAX BODY  DEFINED IN\n"
            "github  github  header X-GitHub-Delivery  5MiB      config file\n"
            "plain   none    none                      64KiB     API\n");
  std::string detail = RenderSourceDetail(items[0].as_object());
  EXPECT_CONTAINS(detail, "Source github\n");
  EXPECT_CONTAINS(detail, "  verify    github (2 secrets, tolerance 5m)\n");
  EXPECT_CONTAINS(detail, "  dedup     header X-GitHub-Delivery\n");
  EXPECT_CONTAINS(detail, "  max body  5MiB\n");
  EXPECT_CONTAINS(detail, "  defined   config file\n");
  EXPECT_LACKS(RenderSourceDetail(items[1].as_object()), "secret");
  EXPECT_EQ(RenderSourceList(json::array{}), "No sources.\n");
}

const char* kDestinations = R"json([
  {"name": "billing", "url": "https://example.com/hooks",
   "policy": {"preset": "pro", "strategy": "ladder", "max_attempts": 5, "max_duration": "0s",
              "timeout": "30s", "jitter": "none", "delays": ["5m", "30m"], "base": "1m",
              "cap": "1d"},
   "replay_window": "30d", "forward_headers": ["X-GitHub-Event", "X-Request-Id"],
   "signing_secret_set": true, "max_concurrency": 16, "rate_limit": "100/s", "paused": false,
   "breaker": {"state": "open", "consecutive_failures": 20, "open_until": "2026-11-30T06:12:00Z",
               "trips": 1},
   "paused_reason": null, "allowed_concurrency": 4, "in_flight": 0, "origin": "api",
   "headers": {"Authorization": "(redacted)", "X-Env": "prod"}},
  {"name": "ops", "url": "http://127.0.0.1:9/x", "headers": {},
   "policy": {"strategy": "exponential", "max_attempts": 3, "max_duration": "1h",
              "timeout": "5s"},
   "signing_secret_set": false, "max_concurrency": 2, "rate_limit": null, "paused": true,
   "breaker": {"state": "closed", "consecutive_failures": 0, "open_until": null, "trips": 0},
   "paused_reason": "410 Gone", "allowed_concurrency": 2, "in_flight": 1}])json";

TEST_F(RenderTest, DestinationList) {
  std::string out = RenderDestinationList(json::parse(kDestinations).as_array(), now_);
  EXPECT_EQ(out,
            "NAME     URL                        STATE              BREAKER"
            "                      FAILURES  CONCURRENCY\n"
            "billing  https://example.com/hooks  active             open until 06:12:00, in 10m"
            "  20        4\n"
            "ops      http://127.0.0.1:9/x       paused (410 Gone)  closed"
            "                       0         2\n");
  EXPECT_EQ(RenderDestinationList(json::array{}, now_), "No destinations.\n");
}

TEST_F(RenderTest, DestinationDetail) {
  json::array items = json::parse(kDestinations).as_array();
  std::string billing = RenderDestinationDetail(items[0].as_object(), now_);
  EXPECT_CONTAINS(billing, "Destination billing\n");
  EXPECT_CONTAINS(billing, "  url          https://example.com/hooks\n");
  EXPECT_CONTAINS(billing, "  state        active\n");
  EXPECT_CONTAINS(billing,
                  "  breaker      open until 06:12:00, in 10m; 20 consecutive failures; "
                  "tripped 1 time\n");
  EXPECT_CONTAINS(billing, "  concurrency  4 allowed of 16 max, 0 in flight\n");
  EXPECT_CONTAINS(billing,
                  "  policy       pro: ladder, 5 attempts, timeout 30s\n"
                  "               delays 5m, 30m (the last repeats); jitter none; cap 1d; replay "
                  "window 30d\n");
  EXPECT_CONTAINS(billing, "  forwards     received X-GitHub-Event, X-Request-Id\n");
  EXPECT_CONTAINS(billing, "  rate limit   100/s\n");
  EXPECT_CONTAINS(billing, "  signing      secret set\n");
  EXPECT_CONTAINS(billing,
                  "  headers      Authorization: (redacted)\n"
                  "               X-Env: prod\n");
  EXPECT_CONTAINS(billing, "  defined      API\n");
  std::string ops = RenderDestinationDetail(items[1].as_object(), now_);
  EXPECT_CONTAINS(ops, "  state        paused (410 Gone)\n");
  EXPECT_CONTAINS(ops, "  breaker      closed; 0 consecutive failures; tripped 0 times\n");
  EXPECT_CONTAINS(ops, "  policy       custom: exponential, 3 attempts within 1h, timeout 5s\n");
  EXPECT_CONTAINS(ops, "  rate limit   none\n");
  EXPECT_CONTAINS(ops, "  signing      none\n");
  // ops points at 127.0.0.1 without allow_private: the detail says deliveries will be refused.
  EXPECT_CONTAINS(ops,
                  "  note         127.0.0.1 is a loopback or private address: deliveries to "
                  "it are refused unless the\n");
  EXPECT_EQ(billing.find("note"), std::string::npos) << billing;
}

TEST_F(RenderTest, DestinationDetailNotesAddressesTheSenderRefuses) {
  auto detail = [&](std::string url, bool allow_private) {
    json::object d = json::parse(kDestinations).as_array()[0].as_object();
    d["url"] = url;
    d["allow_private"] = allow_private;
    return RenderDestinationDetail(d, now_);
  };
  for (const char* url :
       {"http://127.0.0.1:9000/h", "http://10.1.2.3/h", "http://[::1]:8080/h",
        "http://localhost:9000/h", "https://api.LOCALHOST/h", "http://169.254.169.254/latest"}) {
    EXPECT_NE(detail(url, false).find("  note  "), std::string::npos) << url;
    EXPECT_EQ(detail(url, true).find("  note  "), std::string::npos) << url;
  }
  for (const char* url :
       {"https://example.com/h", "http://93.184.216.34/h", "https://internal.example.com/h"}) {
    EXPECT_EQ(detail(url, false).find("  note  "), std::string::npos) << url;
  }
}

TEST_F(RenderTest, Routes) {
  json::array items = json::parse(R"([{"id": 1, "source": "github", "destination": "billing"},
                                      {"id": "r2", "source": "stripe", "destination": "ops",
                                       "origin": "api"}])")
                          .as_array();
  EXPECT_EQ(RenderRouteList(items),
            "ID  SOURCE  DESTINATION  DEFINED IN\n"
            "1   github  billing      -\n"
            "r2  stripe  ops          API\n");
  EXPECT_EQ(RenderRouteDetail(items[1].as_object()),
            "Route r2\n  from     stripe\n  to       ops\n  defined  API\n");
  EXPECT_EQ(RenderRouteList(json::array{}), "No routes.\n");
}

TEST(ApiClientTest, InterpretsSuccessAndApiErrors) {
  auto ok = InterpretResponse(200, R"({"items": []})", "http://h");
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->as_object().contains("items"));

  auto unauth = InterpretResponse(
      401, R"({"error": {"code": "unauthenticated", "message": "bad token", "field": null}})",
      "http://h");
  ASSERT_FALSE(unauth.ok());
  EXPECT_EQ(unauth.status().code(), Status::Code::kUnauthenticated);
  EXPECT_EQ(unauth.status().message(), "HTTP 401 unauthenticated: bad token");

  auto bad = InterpretResponse(
      400, R"({"error": {"code": "invalid_argument", "message": "must be …", "field": "since"}})",
      "http://h");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "HTTP 400 invalid_argument: must be … (field: since)");

  auto not_json = InterpretResponse(502, "<html>bad gateway</html>", "http://h");
  ASSERT_FALSE(not_json.ok());
  EXPECT_CONTAINS(not_json.status().message(), "HTTP 502");
  EXPECT_CONTAINS(not_json.status().message(), "<html>bad gateway");

  auto garbage = InterpretResponse(200, "not json", "http://h");
  ASSERT_FALSE(garbage.ok());
  EXPECT_CONTAINS(garbage.status().message(), "not JSON");
}

TEST(ApiClientTest, ResolvesUrlAndTokenFromFlagsThenEnvironment) {
  unsetenv("HOOKRELAY_URL");
  unsetenv("HOOKRELAY_TOKEN");
  ApiConfig d = ResolveApiConfig("", "");
  EXPECT_EQ(d.url, "http://127.0.0.1:8080");
  EXPECT_EQ(d.token, "");
  setenv("HOOKRELAY_URL", "http://env:1/", 1);
  setenv("HOOKRELAY_TOKEN", "env-token", 1);
  ApiConfig e = ResolveApiConfig("", "");
  EXPECT_EQ(e.url, "http://env:1");
  EXPECT_EQ(e.token, "env-token");
  ApiConfig f = ResolveApiConfig("http://flag:2", "flag-token");
  EXPECT_EQ(f.url, "http://flag:2");
  EXPECT_EQ(f.token, "flag-token");
  unsetenv("HOOKRELAY_URL");
  unsetenv("HOOKRELAY_TOKEN");
}

TEST(ApiClientTest, TransportErrorsNameTheUrlButNotTheToken) {
  // Port 1 on loopback: nothing listens there, so the connection is refused at once.
  ApiClient client(ApiConfig{"http://127.0.0.1:1", "secret-token-xyz"}, 5s);
  auto r = client.Get("/api/v1/events");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable);
  EXPECT_CONTAINS(r.status().message(), "http://127.0.0.1:1");
  EXPECT_LACKS(r.status().message(), "secret-token-xyz");
}

TEST(EventsCommandTest, PercentEncodesQueryValues) {
  EXPECT_EQ(PercentEncode("a-Z_0.~"), "a-Z_0.~");
  EXPECT_EQ(PercentEncode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
  EventListOptions o;
  o.status = "failed";
  o.destination = "bill ing";
  o.since = "2026-11-30T06:00:00.000Z";
  EXPECT_EQ(EventListPath(o, 50, ""),
            "/api/v1/events?limit=50&status=failed&destination=bill%20ing"
            "&since=2026-11-30T06%3A00%3A00.000Z");
  EXPECT_EQ(EventListPath(EventListOptions{}, 3, "c/1"), "/api/v1/events?limit=3&cursor=c%2F1");
}

TEST(EventsCommandTest, TimeFlagsAcceptRfc3339OrADurationBeforeNow) {
  TimePoint now = At("2026-11-30T06:00:00Z");
  EXPECT_EQ(*ResolveTimeFlag("2026-11-30T07:00:00+01:00", now, "--since"),
            "2026-11-30T06:00:00.000Z");
  EXPECT_EQ(*ResolveTimeFlag("90m", now, "--since"), "2026-11-30T04:30:00.000Z");
  EXPECT_EQ(*ResolveTimeFlag("1d", now, "--until"), "2026-11-29T06:00:00.000Z");
  auto bad = ResolveTimeFlag("yesterday", now, "--since");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "--since");
  EXPECT_CONTAINS(bad.status().message(), "\"yesterday\"");
}

TEST(BulkReplayRenderTest, ProgressBarAndTotals) {
  json::object job = json::parse(R"({"id": "01JOB", "state": "running", "total": 200, "done": 98,
                                     "failed": 2, "rate": 50, "error": null})")
                         .as_object();
  EXPECT_EQ(RenderBulkReplayProgress(job, true),
            "[###############...............] 50% 100/200 (2 failed) running");
  EXPECT_EQ(RenderBulkReplayProgress(job, false), "50% 100/200 (2 failed) running");
  job["state"] = "done";
  job["total"] = 0;
  EXPECT_EQ(RenderBulkReplayProgress(job, false), "100% 100/0 (2 failed) done");
  job["state"] = "failed";
  job["error"] = "rate must be positive";
  EXPECT_EQ(
      RenderBulkReplayResult(job),
      "Bulk replay 01JOB failed: 98 replayed, 2 failed, of 0\nerror: rate must be positive\n");
}

}  // namespace
}  // namespace hookrelay::cli
