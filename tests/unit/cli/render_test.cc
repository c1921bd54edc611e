// The management commands' pure parts: rendering the API's JSON with a fixed "now" and time
// zone, request paths, time flags and error mapping. No network.
#include "cli/render.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdlib>
#include <ctime>
#include <sstream>

#include "cli/api_client.h"
#include "cli/events_command.h"
#include "cli/replay_command.h"
#include "cli/terminal.h"
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
    {"id": "01JAAA", "source": "stripe", "received_at": "2026-11-30T06:00:00.123Z", "size": 1234,
     "deliveries": [{"destination": "billing", "status": "delivered", "chain": 1},
                    {"destination": "crm", "status": "failed", "chain": 0}]},
    {"id": "01JBBBBBBB", "source": "gh", "received_at": "2026-11-29T05:00:00Z", "size": 7}])")
                          .as_array();
  std::string out = RenderEventList(items, now_);
  // STATUS: each destination's current status (its latest chain), counted when naming each
  // would pass 80 columns.
  EXPECT_EQ(out,
            "ID          SOURCE  RECEIVED (UTC)                 SIZE    STATUS\n"
            "01JAAA      stripe  06:00:00, 1m59s ago            1234 B  1 failed, 1 delivered\n"
            "01JBBBBBBB  gh      2026-11-29 05:00:00, 1d1h ago  7 B     -\n");
  EXPECT_EQ(RenderEventList(json::array{}, now_), "No events.\n");
  // Issue 12.10: with a full-length id and more destinations than fit, the statuses are
  // counted, so the line stays within 80 columns.
  json::array many = json::parse(R"([
    {"id": "01M8QGN4G7N4K0ZS1SK8H4HJDP", "source": "plain", "received_at": "2026-11-30T06:00:00Z",
     "size": 23,
     "deliveries": [{"destination": "flaky", "status": "failed"},
                    {"destination": "okd", "status": "delivered"},
                    {"destination": "brk", "status": "failed"}]}])")
                         .as_array();
  std::string counted = RenderEventList(many, now_);
  // Issue 32.3: real status names (not "ok"), the failures first.
  EXPECT_CONTAINS(counted, "  2 failed, 1 other\n");
  for (size_t at = 0, end; (end = counted.find('\n', at)) != std::string::npos; at = end + 1) {
    EXPECT_LE(end - at, 80u) << counted;
  }
}

// Issue 32.3: a paused delivery says what holds it (the API's paused_by), and the summary names
// which destination is in which state, by the statuses' real names, while that fits.
TEST_F(RenderTest, EventListSaysWhatHoldsPausedDeliveries) {
  json::array items = json::parse(R"([
    {"id": "01JAAA", "source": "s", "received_at": "2026-11-30T06:00:00Z", "size": 2,
     "deliveries": [{"destination": "a", "status": "paused", "paused_by": "breaker",
                     "breaker_open_until": "2026-11-30T09:02:10Z"}]},
    {"id": "01JBBB", "source": "s", "received_at": "2026-11-30T06:00:00Z", "size": 2,
     "deliveries": [{"destination": "b", "status": "paused", "paused_by": "operator"},
                    {"destination": "c", "status": "scheduled", "paused_by": null}]},
    {"id": "01JCCC", "source": "s", "received_at": "2026-11-30T06:00:00Z", "size": 2,
     "deliveries": [{"destination": "billing", "status": "delivered"},
                    {"destination": "crm", "status": "paused", "paused_by": "breaker",
                     "breaker_open_until": "2026-11-30T09:02:10Z"},
                    {"destination": "ops", "status": "failed"}]},
    {"id": "01JDDD", "source": "s", "received_at": "2026-11-30T06:00:00Z", "size": 2,
     "deliveries": [{"destination": "a", "status": "failed"},
                    {"destination": "b", "status": "failed"},
                    {"destination": "d", "status": "failed"},
                    {"destination": "e", "status": "delivered"}]}])")
                          .as_array();
  std::string out = RenderEventList(items, now_);
  EXPECT_CONTAINS(out, "  a paused (breaker open until 09:02)\n");
  EXPECT_CONTAINS(out, "  b paused (by operator), c scheduled\n");
  // Too long to name each (38 columns are left): counted by the real names, failures first.
  EXPECT_CONTAINS(out, "  1 failed, 1 paused, 1 delivered\n");
  // Grouped by status when that fits, failures first.
  EXPECT_CONTAINS(out, "  failed: a, b, d; delivered: e\n");
  for (size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos; at = end + 1) {
    EXPECT_LE(end - at, 80u) << out;
  }
  EXPECT_LACKS(out, " ok");
  EXPECT_LACKS(out, "queued");
  json::object detail = json::parse(R"({"id": "e", "received_at": "2026-11-30T06:00:00Z",
    "deliveries": [{"destination": "a", "status": "paused", "attempt": 1, "max_attempts": 5,
                    "paused_by": "breaker", "breaker_open_until": "2026-11-30T09:02:10Z",
                    "attempts": []},
                   {"destination": "g", "status": "paused", "attempt": 1, "max_attempts": 5,
                    "paused_by": "gone", "attempts": []}]})")
                            .as_object();
  std::string shown = RenderEventDetail(detail, now_);
  EXPECT_CONTAINS(shown, "Delivery to a: paused (breaker open until 09:02), attempt 1 of 5\n");
  EXPECT_CONTAINS(shown, "Delivery to g: paused (410 Gone), attempt 1 of 5\n");
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
  EXPECT_CONTAINS(out, "  received  06:00:00 UTC, 1m59s ago\n");  // the zone, once
  EXPECT_CONTAINS(out, "  size      1234 B\n");
  EXPECT_CONTAINS(out, "Delivery to billing: scheduled, attempt 1 of 5\n");
  EXPECT_CONTAINS(out, "  next retry 06:05:00, in 3m\n");
  EXPECT_CONTAINS(out, "  deadline 2026-12-01 06:00:00, in 23h58m\n");
  EXPECT_CONTAINS(out, "Delivery to ops: failed, attempt 2 of 2\n");
  EXPECT_CONTAINS(out, "  reason: gave up after 2 attempts (max_attempts)\n");
  EXPECT_CONTAINS(out, "Delivery to billing (replay 1): delivered, attempt 1 of 5\n");
  // The attempts table, under each delivery: RETRY-AFTER and RESPONSE only where an attempt has
  // one.
  EXPECT_CONTAINS(out, "    #  STARTED              RESULT    DURATION  RESPONSE\n");
  EXPECT_CONTAINS(out,
                  "    #  STARTED              RESULT                     DURATION  RETRY-AFTER\n");
  // Issue 10.5: what the endpoint answered, on one line.
  EXPECT_CONTAINS(out,
                  "    1  06:00:00, 1m59s ago  HTTP 500  12ms      "
                  "{\"error\": \"db down\"}\\n\n");
  EXPECT_CONTAINS(out, "error: connection refused");
  EXPECT_CONTAINS(out, "HTTP 503");
  EXPECT_CONTAINS(out, "  30s       120");  // duration_ms 30000, rounded like every duration
  EXPECT_CONTAINS(out, "  30s       120\n");
  // Only the scheduled delivery has a next retry; no reason shown for healthy deliveries.
  EXPECT_EQ(out.find("next retry"), out.rfind("next retry"));
  EXPECT_EQ(out.find("reason:"), out.rfind("reason:"));
  EXPECT_EQ(out.find(" UTC"), out.rfind(" UTC")) << out;
}

// Issue 32.2: the breaker's probes are marked in the attempts table; a failed one says it was
// not counted (the delivery is still at "attempt 1 of 4").
TEST_F(RenderTest, EventDetailMarksBreakerProbes) {
  json::object event = json::parse(R"json({"id": "e", "received_at": "2026-11-30T06:00:00Z",
    "deliveries": [{"destination": "a", "status": "delivered", "attempt": 2, "max_attempts": 4,
      "attempts": [
        {"n": 1, "started_at": "2026-11-30T06:00:00Z", "duration_ms": 5, "status_code": 500,
         "error": null, "retry_after": null, "probe": false, "counted": true},
        {"n": 2, "started_at": "2026-11-30T06:01:00Z", "duration_ms": 5, "status_code": 503,
         "error": null, "retry_after": null, "probe": true, "counted": false},
        {"n": 3, "started_at": "2026-11-30T06:02:00Z", "duration_ms": 5, "status_code": 200,
         "error": null, "retry_after": null, "probe": true, "counted": true}]}]})json")
                           .as_object();
  std::string out = RenderEventDetail(event, now_);
  EXPECT_CONTAINS(out, "Delivery to a: delivered, attempt 2 of 4\n");
  EXPECT_CONTAINS(out, "HTTP 503 (breaker probe, not counted)");
  EXPECT_CONTAINS(out, "HTTP 200 (breaker probe) ");
  EXPECT_LACKS(out, "HTTP 500 (");
}

// The attempts table fits in 80 columns however long an attempt's result, Retry-After and
// response are: the widest of them is cut at its end ("…"), a character at a time.
TEST_F(RenderTest, EventDetailAttemptsFitInEightyColumns) {
  json::object event = json::parse(R"json({"id": "e", "received_at": "2026-11-30T06:00:00Z",
    "deliveries": [{"destination": "a", "status": "failed", "reason": "gave up",
      "attempts": [
        {"n": 1, "started_at": "2026-11-30T06:00:00Z", "duration_ms": 3, "status_code": 503,
         "error": null, "retry_after": null, "probe": true, "counted": false},
        {"n": 2, "started_at": "2026-11-30T06:01:00Z", "duration_ms": 30000, "status_code": 503,
         "error": null, "retry_after": "Wed, 21 Oct 2026 07:28:00 GMT",
         "response_snippet": "{\"error\": \"the billing database is down for maintenance\"}",
         "response_snippet_encoding": "utf-8"}]}]})json")
                           .as_object();
  std::string out = RenderEventDetail(event, now_);
  for (size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos; at = end + 1) {
    const std::string line = out.substr(at, end - at);
    const auto chars = std::count_if(line.begin(), line.end(), [](char c) {
      return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    });
    EXPECT_LE(chars, 80) << line;
  }
  // Each cut column keeps its start: the clock, the status, the date, the response's opening.
  EXPECT_CONTAINS(out, "    1  06:00:00, 2m …  HTTP 503 (bre…  3ms ");
  EXPECT_CONTAINS(out, "  Wed, 21 Oct 2…  {\"error\": \"the…\n");
  EXPECT_CONTAINS(out, "…\n");
  // Wide enough, nothing is cut.
  EXPECT_LACKS(RenderEventDetail(event, now_, 200), "…");
}

// A deadline is shown only while the delivery can still be tried; a time inside a reason is
// rendered like every other time (local, relative), not as the API's RFC 3339 text.
TEST_F(RenderTest, EventDetailDeadlinesAndTimesInReasons) {
  json::object event = json::parse(R"json({"id": "e", "received_at": "2026-11-30T06:00:00Z",
    "deliveries": [
      {"destination": "a", "status": "delivered", "deadline": "2026-12-01T06:00:00Z",
       "attempts": []},
      {"destination": "b", "status": "failed", "deadline": "2026-12-01T06:00:00Z",
       "reason": "gave up", "attempts": []},
      {"destination": "c", "status": "paused", "deadline": "2026-12-01T06:30:00Z",
       "reason": "breaker open until 2026-11-30T06:30:19.642Z", "attempts": []}]})json")
                           .as_object();
  std::string out = RenderEventDetail(event, now_);
  EXPECT_EQ(out.find("deadline"), out.rfind("deadline")) << out;
  EXPECT_CONTAINS(out, "  deadline 2026-12-01 06:30:00, in 1d\n");
  EXPECT_CONTAINS(out, "  reason: breaker open until 06:30:19 (in 28m19s)\n");
  EXPECT_LACKS(out, "2026-11-30T");
}

TEST_F(RenderTest, TimesInsideText) {
  EXPECT_EQ(LocalizeTimes("until 2026-11-30T06:30:19.642Z", now_), "until 06:30:19 (in 28m19s)");
  EXPECT_EQ(LocalizeTimes("from 2026-11-29T06:00:00+01:00 to 2026-11-30T06:00:00Z.", now_),
            "from 2026-11-29 05:00:00 (1d1h ago) to 06:00:00 (2m ago).");
  EXPECT_EQ(LocalizeTimes("no time here", now_), "no time here");
  EXPECT_EQ(LocalizeTimes("2026-13-45T99:00:00Z x 12026-11-30T06:00:00Z", now_),
            "2026-13-45T99:00:00Z x 12026-11-30T06:00:00Z");
  EXPECT_EQ(LocalizeTimes("", now_), "");
  SetTz("CET-1");
  EXPECT_EQ(LocalizeTimes("paused until 2026-11-30T23:08:19Z", now_),
            "paused until 2026-12-01 00:08:19 (in 17h6m)");
  EXPECT_EQ(LocalZoneName(now_), "CET");
}

TEST_F(RenderTest, NumbersArePlain) {
  json::array items = json::parse(R"([{"name": "d", "url": "https://x.example/h",
      "allowed_concurrency": 3.0, "breaker": {"state": "closed", "consecutive_failures": 2.0}}])")
                          .as_array();
  std::string out =
      RenderDestinationList(items, now_) + RenderDestinationDetail(items[0].as_object(), now_);
  EXPECT_LACKS(out, "E0");
  EXPECT_CONTAINS(out, "  concurrency  3 allowed");
  EXPECT_CONTAINS(out, "closed   2 ");
}

// Issue 17: the client certificate's summary, the trusted CAs and the credential's kind; never a
// key or a token (the API does not send them).
TEST_F(RenderTest, DestinationDetailShowsTlsAndAuth) {
  json::object d = json::parse(R"({"name": "m", "url": "https://x.example/h",
      "tls": {"client_cert": {"subject": "CN=relay", "issuer": "CN=Example CA",
                              "not_after": "2027-01-01T00:00:00Z", "sha256": "ab"},
              "client_key_set": true,
              "ca_file": {"certificates": 2, "subjects": ["CN=Example CA", "CN=Old CA"]}},
      "auth": {"type": "basic", "username": "relay"}})")
                       .as_object();
  std::string out = RenderDestinationDetail(d, now_);
  EXPECT_CONTAINS(out, "  client cert  CN=relay, issued by CN=Example CA,");
  EXPECT_CONTAINS(out, "key set (write-only)");
  EXPECT_CONTAINS(out, "  trusts       CN=Example CA, CN=Old CA (not the system's CAs)");
  EXPECT_CONTAINS(out, "  auth         basic as relay (write-only)");
  d["tls"] = nullptr;
  d["auth"] = nullptr;
  out = RenderDestinationDetail(d, now_);
  EXPECT_LACKS(out, "client cert");
  EXPECT_LACKS(out, "auth ");
}

// Issue 28: a rotating signing secret says until when the previous secret also signs, within 80
// columns; without a rotation the line is as before.
TEST_F(RenderTest, DestinationDetailShowsASigningSecretRotation) {
  json::object d = json::parse(R"({"name": "m", "url": "https://x.example/h",
      "signing_secret_set": true,
      "signing_secret_rotation": {"old_expires_at": "2026-12-01T06:02:00Z"}})")
                       .as_object();
  std::string out = RenderDestinationDetail(d, now_, 80);
  EXPECT_CONTAINS(out, "  signing      secret set; rotating: the previous secret also signs until");
  EXPECT_CONTAINS(out, "2026-12-01 06:02:00, in 1d");
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
  d["signing_secret_rotation"] = nullptr;
  EXPECT_CONTAINS(RenderDestinationDetail(d, now_), "  signing      secret set\n");
}

TEST_F(RenderTest, SourceDetailShowsASecretRotation) {
  json::object s = json::parse(R"({"name": "gh", "verify": {"scheme": "github",
      "secrets_set": 1, "secrets_rotation": {"old_secrets": 1,
      "old_expires_at": "2026-12-01T06:02:00Z"}}})")
                       .as_object();
  std::string out = RenderSourceDetail(s, now_);
  EXPECT_CONTAINS(out,
                  "  verify    github (1 secret)\n  rotating  the old secret also verifies until "
                  "2026-12-01 06:02:00, in 1d");
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
  s["verify"].as_object()["secrets_rotation"].as_object()["old_secrets"] = 2;
  EXPECT_CONTAINS(RenderSourceDetail(s, now_), "  rotating  2 old secrets also verify until");
  s["verify"].as_object()["secrets_rotation"] = nullptr;
  EXPECT_LACKS(RenderSourceDetail(s, now_), "rotating");
}

// Issue 32.16: the destination's attempt latency, as the API gives it, beside its concurrency.
TEST_F(RenderTest, DestinationDetailShowsLatency) {
  json::object d = json::parse(R"({"name": "m", "url": "https://x.example/h",
      "latency": {"p50_ms": 49, "p99_ms": 160, "samples": 65}})")
                       .as_object();
  EXPECT_CONTAINS(RenderDestinationDetail(d, now_),
                  "  latency      p50 49 ms, p99 160 ms (last 65 attempts)\n");
  d["latency"] = json::parse(R"({"p50_ms": null, "p99_ms": null, "samples": 0})");
  EXPECT_CONTAINS(RenderDestinationDetail(d, now_), "  latency      no attempt timed yet\n");
}

// Issue 17: an ordered destination says how it is ordered and lists the queues held behind their
// head (key, how many wait and since when, the head's event and state), and how many more there
// are; at 80 columns.
TEST_F(RenderTest, DestinationDetailShowsOrderingAndHeldQueues) {
  json::object d = json::parse(R"({"name": "shop", "url": "https://x.example/h",
      "ordered": true, "order_key": {"header": "X-Shop"},
      "held": {"total": 3, "queues": [
        {"order_key": "cus_42", "waiting": 2, "waiting_since": "2026-11-30T05:57:00Z",
         "head": {"event": "01JDX5Q3ZK8M4T2W9YHB7C6N1R", "chain": 0, "status": "scheduled",
                  "attempt": 3, "max_attempts": 10, "next_attempt_at": "2026-11-30T06:05:00Z",
                  "reason": "attempt 3 of 10 failed: 503"}},
        {"order_key": "", "waiting": 1, "waiting_since": "2026-11-30T05:59:00Z",
         "head": {"event": "01JDX5Q3ZK8M4T2W9YHB7C6N1S", "chain": 1, "status": "delivering",
                  "attempt": 1, "max_attempts": 10, "next_attempt_at": null, "reason": null}}]}})")
                       .as_object();
  std::string out = RenderDestinationDetail(d, now_);
  EXPECT_CONTAINS(out, "  ordered      per key, from the header X-Shop\n");
  EXPECT_CONTAINS(out,
                  "  held         key \"cus_42\": 2 held behind 01JDX5Q3ZK8M4T2W9YHB7C6N1R since\n"
                  "               05:57:00, 5m ago (scheduled, attempt 3 of 10, next retry\n"
                  "               06:05:00, in 3m)\n");
  EXPECT_CONTAINS(
      out,
      "               the destination's queue: 1 held behind 01JDX5Q3ZK8M4T2W9YHB7C6N1S\n"
      "               since 05:59:00, 3m ago (delivering, attempt 1 of 10)\n");
  EXPECT_CONTAINS(out, "               and 1 more queue held\n");
  for (size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos; at = end + 1) {
    EXPECT_LE(end - at, 80u) << out.substr(at, end - at);
  }
  // A key comes from a webhook: its control characters are escaped, never sent to the terminal.
  json::object evil = d;
  evil["held"].as_object()["queues"].as_array()[0].as_object()["order_key"] = "a\x1b[2Jb\n";
  std::string shown = RenderDestinationDetail(evil, now_);
  EXPECT_CONTAINS(shown, "key \"a\\x1b[2Jb\\n\"");
  EXPECT_LACKS(shown, "\x1b");
  // Unordered, nothing held: neither line.
  d["ordered"] = false;
  d["order_key"] = nullptr;
  d["held"] = json::parse(R"({"total": 0, "queues": []})");
  out = RenderDestinationDetail(d, now_);
  EXPECT_LACKS(out, "ordered");
  EXPECT_LACKS(out, "held");
  // The whole destination, one at a time.
  d["ordered"] = true;
  EXPECT_CONTAINS(RenderDestinationDetail(d, now_),
                  "  ordered      the whole destination, one event at a time\n");
}

// Issue 10.5: a long or binary response stays on one line of about 60 characters, with control
// characters escaped (no terminal escape sequence reaches the screen).
// Issue 12.10: a long reason is wrapped at 80 columns, its lines indented under the first.
TEST_F(RenderTest, EventDetailWrapsLongReasons) {
  json::object event = json::parse(kEventDetail).as_object();
  event["deliveries"].as_array()[1].as_object()["reason"] =
      "gave up after 3 of 3 attempts: 500 Internal Server Error: the endpoint failed while "
      "handling the event; the response said {\"error\": \"database unavailable, try later\"}";
  std::string out = RenderEventDetail(event, now_);
  EXPECT_CONTAINS(
      out,
      "  reason: gave up after 3 of 3 attempts: 500 Internal Server Error: the endpoint\n"
      "          failed while handling the event; the response said {\"error\": \"database\n"
      "          unavailable, try later\"}\n");
  for (size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos; at = end + 1) {
    if (out.substr(at, 9) == "  reason:" || out.substr(at, 10) == "          ") {
      EXPECT_LE(end - at, 80u) << out;
    }
  }
}

// Issue 17: an ordered delivery says which queue it is in and, while it waits, what for.
TEST_F(RenderTest, EventDetailShowsWhatAnOrderedDeliveryWaitsFor) {
  json::object event = json::parse(kEventDetail).as_object();
  json::object& d = event["deliveries"].as_array()[0].as_object();
  d["order_key"] = "cus_42";
  d["held_behind"] = json::object{{"event", "01HEAD"},
                                  {"chain", 0},
                                  {"status", "scheduled"},
                                  {"attempt", 2},
                                  {"next_attempt_at", nullptr}};
  std::string out = RenderEventDetail(event, now_);
  EXPECT_CONTAINS(out, "  ordered (key \"cus_42\"); held behind 01HEAD (scheduled, attempt 2)\n");
  d["order_key"] = "\x1b]0;pwned\x07";  // from the webhook's body: escaped, not obeyed
  out = RenderEventDetail(event, now_);
  EXPECT_CONTAINS(out, "ordered (key \"\\x1b]0;pwned\\x07\")");
  EXPECT_LACKS(out, "\x1b");
  d["order_key"] = "";
  d["held_behind"] = nullptr;
  out = RenderEventDetail(event, now_);
  EXPECT_CONTAINS(out, "  ordered (whole destination)\n");
  EXPECT_LACKS(out, "held behind");
  d.erase("order_key");
  EXPECT_LACKS(RenderEventDetail(event, now_), "ordered");
}

TEST_F(RenderTest, EventDetailResponseSnippetIsOneEscapedLine) {
  json::object event = json::parse(kEventDetail).as_object();
  json::object& attempt =
      event.at("deliveries").as_array()[0].at("attempts").as_array()[0].as_object();
  attempt["response_snippet"] = "\x1b[31mred\r\n" + std::string(200, 'z');
  std::string out = RenderEventDetail(event, now_);
  EXPECT_LACKS(out, "\x1b");
  // Cut to fit 80 columns; wider, at its own 60 characters.
  EXPECT_CONTAINS(out, "\\x1b[31mred\\r\\n" + std::string(16, 'z') + "…\n");
  EXPECT_CONTAINS(RenderEventDetail(event, now_, 200),
                  "\\x1b[31mred\\r\\n" + std::string(44, 'z') + "…\n");
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
  std::string detail = RenderSourceDetail(items[0].as_object(), now_);
  EXPECT_CONTAINS(detail, "Source github\n");
  // GitHub signs no timestamp: no tolerance applies, so none is shown.
  EXPECT_CONTAINS(detail, "  verify    github (2 secrets)\n");
  json::object stripe = items[0].as_object();
  stripe["verify"].as_object()["scheme"] = "stripe";
  stripe["verify"].as_object()["secrets_set"] = 1;
  EXPECT_CONTAINS(RenderSourceDetail(stripe, now_),
                  "  verify    stripe (1 secret, tolerance 5m)\n");
  EXPECT_CONTAINS(detail, "  dedup     header X-GitHub-Delivery\n");
  EXPECT_CONTAINS(detail, "  max body  5MiB\n");
  EXPECT_CONTAINS(detail, "  defined   config file\n");
  EXPECT_LACKS(RenderSourceDetail(items[1].as_object(), now_), "secret");
  EXPECT_LACKS(detail, "rejected");
  json::object counted = items[0].as_object();
  counted["rejections"] = json::parse(
      R"({"since_start": 12, "not_recorded": 2, "last_at": "2026-11-30T06:00:00.000Z"})");
  EXPECT_CONTAINS(RenderSourceDetail(counted, now_),
                  "  rejected  12 since the server started (2 not kept), the last 06:00:00 UTC, "
                  "2m ago\n");
  counted["rejections"] = json::parse(R"({"since_start": 0, "not_recorded": 0, "last_at": null})");
  EXPECT_CONTAINS(RenderSourceDetail(counted, now_), "  rejected  0 since the server started\n");
  EXPECT_EQ(RenderSourceList(json::array{}), "No sources.\n");
}

// Issue 32.9: `sources rejections NAME` and `audit list`.
TEST_F(RenderTest, RejectionsAndAudit) {
  json::object page = json::parse(R"({"items": [{"id": "42",
      "received_at": "2026-11-30T06:00:00.000Z", "reason": "signature_mismatch",
      "message": "signature does not match any configured secret", "headers": [],
      "size": 1234, "sha256": "9f86d08", "remote_addr": "192.0.2.7"}],
    "next_cursor": null,
    "counts": {"since_start": 1250, "not_recorded": 1190, "last_at": "2026-11-30T06:00:00.000Z",
               "by_reason": {"missing_signature": 0, "malformed_signature": 0,
                             "timestamp_outside_tolerance": 10, "signature_mismatch": 1240}}})")
                          .as_object();
  EXPECT_EQ(RenderRejectionList(page, now_),
            "1250 refused since the server started, 1190 not kept; the last 06:00:00 UTC, 2m\n"
            "ago; by reason: timestamp_outside_tolerance 10, signature_mismatch 1240\n"
            "\n"
            "RECEIVED (UTC)    FROM       REASON              SIZE\n"
            "06:00:00, 2m ago  192.0.2.7  signature_mismatch  1234 B\n");
  page["items"] = json::array{};
  EXPECT_CONTAINS(RenderRejectionList(page, now_), "No rejected requests kept.\n");

  json::array audit = json::parse(R"([
    {"id": 3, "at": "2026-11-30T06:00:00Z", "actor": "token:ab12cd34", "action": "pause",
     "target": "billing", "count": 1,
     "detail": {"reason": "maintenance of the billing service, ask #ops before resuming"}},
    {"id": 2, "at": "2026-11-30T05:00:00Z", "actor": "config", "action": "config_change",
     "target": "config file", "count": 1, "detail": null}])")
                          .as_array();
  const std::string out = RenderAuditList(audit, now_);
  EXPECT_CONTAINS(out,
                  "AT (UTC)            ACTOR           ACTION         TARGET      COUNT  DETAIL\n");
  EXPECT_CONTAINS(out,
                  "06:00:00, 2m ago    token:ab12cd34  pause          billing     1      "
                  "{\"reason\"…\n");
  EXPECT_CONTAINS(out, "05:00:00, 1h2m ago");
  for (size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos; at = end + 1) {
    EXPECT_LE(end - at, 80u + 2) << out;
  }
  EXPECT_CONTAINS(
      RenderAuditList(audit, now_, 200),
      "{\"reason\":\"maintenance of the billing service, ask #ops before resuming\"}\n");
  EXPECT_EQ(RenderAuditList(json::array{}, now_), "No audit entries.\n");
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
   "breaker_settings": {"threshold": 20, "open": ["10m", "30m", "2h"], "escalation_reset": "1d"},
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
            "NAME     STATE              BREAKER        FAILURES  URL\n"
            "billing  active             open (in 10m)  20        https://example.com/hooks\n"
            "ops      paused (410 Gone)  closed         0         http://127.0.0.1:9/x\n");
  // Long URLs and reasons are cut, so the table reads at 80 columns.
  json::array long_items = json::parse(kDestinations).as_array();
  long_items[1].as_object()["url"] = "https://billing.internal.example.com/hooks/very/long/path";
  long_items[1].as_object()["paused_reason"] =
      "deploy of billing v2 until 2026-11-30T08:00:00Z, ask #ops";
  std::string cut = RenderDestinationList(long_items, now_);
  // Issue 12.10: a reason too long for the column is left to `show`; issue 32.8: a URL keeps
  // its scheme and the end of its path (from a "/"), and its host when that fits too.
  EXPECT_CONTAINS(cut,
                  "ops      paused  closed         0         https://…/hooks/very/long/path\n");
  EXPECT_CONTAINS(RenderDestinationList(long_items, now_, 90),
                  "https://billing.internal.example.com…/long/path\n");
  EXPECT_CONTAINS(RenderDestinationList(long_items, now_, 120),
                  "https://billing.internal.example.com/hooks/very/long/path\n");
  for (size_t at = 0, end; (end = cut.find('\n', at)) != std::string::npos; at = end + 1) {
    EXPECT_LE(end - at, 80u + 2) << cut;  // one "…" of 3 bytes
  }
  // The trial's table: one host, different paths, and the engine's "paused: …" reason.
  json::array same = json::parse(R"([
    {"name": "okd", "url": "http://127.0.0.1:18901/hooks/status/200", "paused": false,
     "breaker": {"state": "closed", "consecutive_failures": 0}},
    {"name": "gone", "url": "http://127.0.0.1:18901/hooks/status/410", "paused": true,
     "paused_reason": "paused: the endpoint answered 410 Gone; fix it, then resume",
     "breaker": {"state": "open", "consecutive_failures": 12,
                 "open_until": "2026-11-30T07:40:00Z"}},
    {"name": "flaky", "url": "http://127.0.0.1:18901/hooks/status/500?fail=2", "paused": false,
     "breaker": {"state": "closed", "consecutive_failures": 3}}])")
                         .as_array();
  std::string trial = RenderDestinationList(same, now_);
  EXPECT_CONTAINS(trial, "gone   paused (410 Gone)  ");
  EXPECT_LACKS(trial, "paused (paused");
  EXPECT_CONTAINS(trial, "http://…/hooks/status/200\n");
  EXPECT_CONTAINS(trial, "http://…/hooks/status/410\n");
  EXPECT_CONTAINS(trial, "http://…/status/500?fail=2\n");
  EXPECT_CONTAINS(RenderDestinationList(same, now_, 87), "http://127.0.0.1:18901…/status/200\n");
  for (size_t at = 0, end; (end = trial.find('\n', at)) != std::string::npos; at = end + 1) {
    EXPECT_LE(end - at, 80u + 2) << trial;
  }
  EXPECT_EQ(RenderDestinationList(json::array{}, now_), "No destinations.\n");
}

// Issue 32.8: a cut URL keeps its scheme.
TEST(CutUrlTest, KeepsTheScheme) {
  const std::string url = "https://hooks.example-customer-domain.com/api/v2/webhooks/in";
  EXPECT_EQ(CutUrl(url, 200), url);
  EXPECT_EQ(CutUrl(url, 30), "https://…/api/v2/webhooks/in");
  EXPECT_EQ(CutUrl(url, 50), "https://hooks.example-customer-domain.com…hooks/in");
  EXPECT_EQ(CutUrl(url, 54), "https://hooks.example-customer-domain.com…/webhooks/in");
  EXPECT_EQ(CutUrl("http://a-very-long-host-name.example.com", 20).rfind("http://", 0), 0u);
  for (size_t w = 20; w < 60; ++w) {
    const std::string cut = CutUrl(url, w);
    EXPECT_EQ(cut.rfind("https://", 0), 0u) << cut;
    EXPECT_LE(cut.size(), w + 2) << cut;  // one "…" of 3 bytes
    EXPECT_NE(cut.find("…"), std::string::npos) << cut;
  }
}

TEST(RouteListTest, FitsTheWidth) {
  json::array items = json::parse(R"([
    {"id": "a-rather-long-source-name-for-tests:a-rather-long-destination-name",
     "source": "a-rather-long-source-name-for-tests",
     "destination": "a-rather-long-destination-name", "origin": "api"},
    {"id": "src:billing", "source": "src", "destination": "billing", "origin": "config"}])")
                          .as_array();
  const std::string out = RenderRouteList(items, 80);
  for (size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos; at = end + 1) {
    std::string line = out.substr(at, end - at);
    size_t chars = 0;
    for (char c : line) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    EXPECT_LE(chars, 80u) << out;
  }
  EXPECT_CONTAINS(out, "src:billing");
  EXPECT_CONTAINS(out, "…");
  EXPECT_CONTAINS(RenderRouteList(items, 200),
                  "a-rather-long-source-name-for-tests:a-rather-long-destination-name  ");
}

TEST_F(RenderTest, DestinationDetail) {
  json::array items = json::parse(kDestinations).as_array();
  std::string billing = RenderDestinationDetail(items[0].as_object(), now_);
  EXPECT_CONTAINS(billing, "Destination billing\n");
  EXPECT_CONTAINS(billing, "  url          https://example.com/hooks\n");
  EXPECT_CONTAINS(billing, "  state        active\n");
  // Issue 32.8: lines wrap at the width (80 by default), continued under the value.
  EXPECT_CONTAINS(billing,
                  "  breaker      open until 06:12:00 UTC, in 10m; 20 consecutive failures; "
                  "tripped\n"
                  "               1 time\n"
                  "               opens after 20 consecutive failures, for 10m, 30m, 2h (the last\n"
                  "               repeats; from the first again after 1d closed)\n");
  EXPECT_CONTAINS(billing, "  concurrency  4 allowed of 16 max, 0 in flight\n");
  EXPECT_CONTAINS(billing,
                  "  policy       pro: ladder, 5 attempts, timeout 30s\n"
                  "               delays 5m, 30m (the last repeats); jitter none; cap 1d; replay\n"
                  "               window 30d\n");
  for (size_t at = 0, end; (end = billing.find('\n', at)) != std::string::npos; at = end + 1) {
    EXPECT_LE(end - at, 80u) << billing;
  }
  // A wider terminal: one line each.
  std::string wide = RenderDestinationDetail(items[0].as_object(), now_, 160);
  EXPECT_CONTAINS(wide,
                  "  breaker      open until 06:12:00 UTC, in 10m; 20 consecutive failures; "
                  "tripped 1 time\n");
  EXPECT_CONTAINS(wide,
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
                  "it\n               are refused unless the destination allows it\n");
  EXPECT_EQ(billing.find("note"), std::string::npos) << billing;
}

// Half-open: when the probe went, never the past end of the open period (which a server from
// before the probe's lease sent as open_until).
TEST_F(RenderTest, HalfOpenBreakerShowsWhenItsProbeWent) {
  json::object d = json::parse(kDestinations).as_array()[0].as_object();
  d["breaker"] = json::parse(R"({"state": "half_open", "consecutive_failures": 20,
      "open_until": null, "probe_sent_at": "2026-11-30T05:59:00Z", "trips": 1})");
  EXPECT_CONTAINS(RenderDestinationDetail(d, now_, 120),
                  "  breaker      half_open, probe sent 05:59:00 UTC, 3m ago; 20 consecutive "
                  "failures; tripped 1 time\n");
  EXPECT_CONTAINS(RenderDestinationList(json::array{d}, now_), "half_open (probe 3m ago)");
  // An older server: a past open_until while half-open is not shown.
  d["breaker"] = json::parse(R"({"state": "half_open", "consecutive_failures": 20,
      "open_until": "2026-11-30T05:50:00Z", "trips": 1})");
  std::string old = RenderDestinationDetail(d, now_);
  EXPECT_CONTAINS(old, "  breaker      half_open; 20 consecutive failures; tripped 1 time\n");
  EXPECT_LACKS(old, "until");
  EXPECT_LACKS(RenderDestinationList(json::array{d}, now_), "ago");
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
                                       "origin": "api", "types": ["invoice.*", "charge.paid"],
                                       "filter": {"body": {"livemode": true}}}])")
                          .as_array();
  EXPECT_EQ(RenderRouteList(items),
            "ID  SOURCE  DESTINATION  TAKES                            DEFINED IN\n"
            "1   github  billing      all                              -\n"
            "r2  stripe  ops          invoice.*, charge.paid + filter  API\n");
  EXPECT_EQ(RenderRouteDetail(items[1].as_object()),
            "Route r2\n  from     stripe\n  to       ops\n  types    invoice.*, charge.paid\n"
            "  filter   {\"body\":{\"livemode\":true}}\n  defined  API\n");
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
  EXPECT_EQ(unauth.status().message(),
            "HTTP 401 unauthenticated: bad token (check HOOKRELAY_TOKEN or --token)");

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
  unsetenv("HOOKRELAY_ADMIN_TOKEN");
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
  // HOOKRELAY_ADMIN_TOKEN, the name `hookrelay serve` reads, is accepted too.
  unsetenv("HOOKRELAY_TOKEN");
  setenv("HOOKRELAY_ADMIN_TOKEN", "admin-env-token", 1);
  EXPECT_EQ(ResolveApiConfig("", "").token, "admin-env-token");
  setenv("HOOKRELAY_TOKEN", "env-token", 1);
  EXPECT_EQ(ResolveApiConfig("", "").token, "env-token");  // HOOKRELAY_TOKEN first
  unsetenv("HOOKRELAY_URL");
  unsetenv("HOOKRELAY_TOKEN");
  unsetenv("HOOKRELAY_ADMIN_TOKEN");
}

TEST(ApiClientTest, AnApiAddressThatLooksLikeADestinationIsRefused) {
  for (const char* ok : {"http://127.0.0.1:8080", "http://127.0.0.1:8080/", "https://relay.example",
                         "http://[::1]:9000"}) {
    EXPECT_TRUE(CheckApiAddress(ok, "--server").ok()) << ok;
  }
  for (const char* bad :
       {"http://127.0.0.1:18153/new-endpoint", "http://h:1/?x=1", "http://h:1#frag",
        "http://h:1/api/v1", "http://user:pw@h:1", "ftp://h:1", "127.0.0.1:8080", "", "http://"}) {
    Status s = CheckApiAddress(bad, "--server");
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << bad;
  }
  EXPECT_LACKS(CheckApiAddress("http://user:pw-secret@h:1", "--server").message(), "pw-secret");
  Status s = CheckApiAddress("http://127.0.0.1:18153/new-endpoint", "HOOKRELAY_URL");
  EXPECT_CONTAINS(s.message(), "HOOKRELAY_URL \"http://127.0.0.1:18153/new-endpoint\"");
  EXPECT_CONTAINS(s.message(), "--server");
  EXPECT_CONTAINS(s.message(), "--url is a destination's URL");
}

TEST(ApiClientTest, AMissingTokenSaysWhatToSet) {
  EXPECT_TRUE(CheckToken("t").ok());
  EXPECT_FALSE(CheckToken("tok\r\nX-Injected: 1").ok());
  EXPECT_LACKS(CheckToken("tok\nsecret-part").message(), "secret-part");
  Status s = CheckToken("");
  EXPECT_CONTAINS(s.message(), "HOOKRELAY_TOKEN");
  EXPECT_CONTAINS(s.message(), "--token");
  // A 401 says the same.
  auto r = InterpretResponse(401, R"({"error":{"code":"unauthenticated","message":"no"}})", "u");
  EXPECT_CONTAINS(r.status().message(), "HOOKRELAY_TOKEN or --token");
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
  const TimePoint now = At("2026-11-30T23:11:00Z");
  EXPECT_EQ(RenderBulkReplayProgress(job, true, now),
            "[###############...............] 50% 100/200 (2 failed) running");
  EXPECT_EQ(RenderBulkReplayProgress(job, false, now), "50% 100/200 (2 failed) running");
  job["state"] = "done";
  job["total"] = 0;
  EXPECT_EQ(RenderBulkReplayProgress(job, false, now), "100% 100/0 (2 failed) done");
  job["state"] = "failed";
  job["error"] = "rate must be positive";
  EXPECT_EQ(
      RenderBulkReplayResult(job),
      "Bulk replay 01JOB failed: 98 replayed, 2 failed, of 0\nerror: rate must be positive\n");
}

// The job JSON's "waiting" field (CONTRACTS.md) says why a job makes no progress.
TEST(BulkReplayRenderTest, ProgressSaysWhyItWaits) {
  setenv("TZ", "UTC0", 1);
  tzset();
  const TimePoint now = At("2026-11-30T23:11:00Z");
  json::object job = json::parse(R"({"id": "01JOB", "state": "running", "total": 2, "done": 0,
      "failed": 0, "rate": 50,
      "waiting": {"reason": "breaker_open", "destination": "analytics",
                  "until": "2026-11-30T23:39:00Z",
                  "message": "breaker open on analytics until 2026-11-30T23:39:00Z"}})")
                         .as_object();
  EXPECT_EQ(
      RenderBulkReplayProgress(job, false, now),
      "0% 0/2 (0 failed) running; waiting: breaker open on analytics until 23:39:00 (in 28m)");
  job["waiting"].as_object()["until"] = nullptr;
  EXPECT_EQ(RenderBulkReplayProgress(job, false, now),
            "0% 0/2 (0 failed) running; waiting: breaker open on analytics");
  job["waiting"] = json::parse(R"({"reason": "destination_paused", "destination": "crm",
                                   "until": null, "message": "destination crm is paused"})");
  EXPECT_EQ(RenderBulkReplayProgress(job, false, now),
            "0% 0/2 (0 failed) running; waiting: destination crm is paused");
  // A reason this CLI does not know: the server's message, its times local.
  job["waiting"] = json::parse(R"({"reason": "maintenance", "destination": null,
      "until": "2026-11-30T23:20:00Z", "message": "store busy until 2026-11-30T23:20:00Z"})");
  EXPECT_EQ(RenderBulkReplayProgress(job, false, now),
            "0% 0/2 (0 failed) running; waiting: store busy until 23:20:00 (in 9m)");
  std::string detail = RenderBulkReplayJob(job, now);
  EXPECT_CONTAINS(detail, "Bulk replay 01JOB: running\n");
  EXPECT_CONTAINS(detail, "  progress  0% 0/2 (0 failed)\n");
  EXPECT_CONTAINS(detail, "  waiting   store busy until 23:20:00 (in 9m)\n");
  EXPECT_CONTAINS(detail, "  rate      50/s\n");
  EXPECT_CONTAINS(detail, "hookrelay replay cancel 01JOB");
  // No field, or null: nothing extra.
  job["waiting"] = nullptr;
  EXPECT_EQ(RenderBulkReplayProgress(job, false, now), "0% 0/2 (0 failed) running");
  job.erase("waiting");
  EXPECT_EQ(RenderBulkReplayProgress(job, false, now), "0% 0/2 (0 failed) running");
  EXPECT_LACKS(RenderBulkReplayJob(job, now), "waiting");
}

TEST(BulkReplayRenderTest, JobListAndRates) {
  setenv("TZ", "UTC0", 1);
  tzset();
  const TimePoint now = At("2026-11-30T06:02:00Z");
  json::array jobs = json::parse(R"([
    {"id": "01JAAAAAAAAAAAAAAAAAAAAAAA", "state": "running", "total": 2000, "done": 10,
     "failed": 2, "rate": 0.5, "created_at": "2026-11-30T06:00:00Z",
     "waiting": {"reason": "breaker_open", "destination": "a", "until": null}},
    {"id": "01JBBBBBBBBBBBBBBBBBBBBBBB", "state": "done", "total": 5, "done": 5, "failed": 0,
     "rate": 50, "created_at": "2026-11-30T05:00:00Z"}])")
                         .as_array();
  EXPECT_EQ(RenderBulkReplayList(jobs, now),
            "ID                          STATE             PROGRESS            RATE  "
            "CREATED (UTC)\n"
            "01JAAAAAAAAAAAAAAAAAAAAAAA  running, waiting  12/2000 (2 failed)  30/m  "
            "06:00:00\n"
            "01JBBBBBBBBBBBBBBBBBBBBBBB  done              5/5                 50/s  "
            "05:00:00\n");  // wider than 80 columns with "2m ago": the clock alone
  jobs.erase(jobs.begin());
  EXPECT_EQ(RenderBulkReplayList(jobs, now),
            "ID                          STATE  PROGRESS  RATE  CREATED (UTC)\n"
            "01JBBBBBBBBBBBBBBBBBBBBBBB  done   5/5       50/s  05:00:00, 1h2m ago\n");
  EXPECT_EQ(RenderBulkReplayList(json::array{}, now), "No bulk replays.\n");
  EXPECT_EQ(FormatRatePerSecond(3), "3/s");
  EXPECT_EQ(FormatRatePerSecond(1.0 / 60), "1/m");
  EXPECT_EQ(FormatRatePerSecond(5.0 / 3600), "5/h");
  // Issue 12.10: a rate that is whole in no unit is short too.
  EXPECT_EQ(FormatRatePerSecond(0.3 / 3600), "0.3/h");
  EXPECT_EQ(FormatRatePerSecond(1e-05), "0.036/h");
  EXPECT_EQ(FormatRatePerSecond(1.0 / 7), "8.57/m");
  json::array tiny = json::parse(R"([
    {"id": "01M8QGP8GH1KWT89FX71HPND7C", "state": "cancelled", "total": 2000, "done": 0,
     "failed": 0, "rate": 1e-05, "created_at": "2026-11-30T05:39:48Z"},
    {"id": "01M8QGP8FWFWJGDNZAVWHM8167", "state": "done", "total": 12, "done": 10, "failed": 2,
     "rate": 0.0002777777777777778, "created_at": "2026-11-30T05:39:48Z"}])")
                         .as_array();
  const std::string list = RenderBulkReplayList(tiny, now);
  for (size_t at = 0, end; (end = list.find('\n', at)) != std::string::npos; at = end + 1) {
    EXPECT_LE(end - at, 80u) << list;
  }
  EXPECT_CONTAINS(list, "  0.036/h  ");
}

// Issue 28: a scoped token says so in the list and names its scope in its detail; the master keys
// are listed with the one the node runs with marked; all within 80 columns.
TEST(AccessRenderTest, ScopedTokensAndMasterKeys) {
  setenv("TZ", "UTC0", 1);
  tzset();
  const TimePoint now = At("2026-12-05T21:00:00Z");
  json::array tokens = json::parse(R"([
    {"name": "bootstrap", "role": "admin", "created_at": "2026-12-05T20:00:00Z",
     "created_by": null, "expires_at": null, "expired": false, "last_used_at": null,
     "last_used_addr": null, "revoked": false, "scope": null},
    {"name": "billing-team", "role": "operator", "created_at": "2026-12-05T20:30:00Z",
     "created_by": "token:bootstrap", "expires_at": null, "expired": false,
     "last_used_at": null, "last_used_addr": null, "revoked": false,
     "scope": {"sources": ["stripe"], "destinations": ["billing", "crm"]}}])")
                           .as_array();
  const std::string list = RenderTokenList(tokens, now);
  EXPECT_CONTAINS(list, "billing-team  operator (scoped)");
  EXPECT_CONTAINS(list, "bootstrap     admin ");
  EXPECT_LACKS(list, "bootstrap     admin (scoped)");
  const std::string detail = RenderTokenDetail(tokens[1].as_object(), now);
  EXPECT_CONTAINS(detail, "  scope     sources: stripe; destinations: billing, crm\n");
  EXPECT_LACKS(RenderTokenDetail(tokens[0].as_object(), now), "scope");
  tokens[1].as_object()["scope"] = json::parse(R"({"sources": [], "destinations": ["d"]})");
  EXPECT_CONTAINS(RenderTokenDetail(tokens[1].as_object(), now),
                  "  scope     sources: none; destinations: d\n");

  json::array keys = json::parse(R"([
    {"id": "186435ff4f2ec2c0", "created_at": "2026-12-05T20:00:00Z", "this_node": false},
    {"id": "ccc2fcd59a14fa09", "created_at": "2026-12-05T20:59:00Z", "this_node": true}])")
                         .as_array();
  EXPECT_EQ(RenderKeyList(keys, now),
            "ID                ADDED (UTC)\n"
            "186435ff4f2ec2c0  20:00:00, 1h ago\n"
            "ccc2fcd59a14fa09  20:59:00, 1m ago  this node runs with it\n");
  EXPECT_EQ(RenderKeyList(json::array{}, now), "No master keys (the store has no data key yet).\n");
  for (const std::string& out : {list, detail, RenderKeyList(keys, now)}) {
    for (size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos; at = end + 1) {
      EXPECT_LE(end - at, 80u) << out;
    }
  }
}

// Issue 32.8: COLUMNS is taken when it is a whole number from 1 to 10000.
TEST(TerminalTest, ParseColumns) {
  EXPECT_EQ(ParseColumns("80"), 80u);
  EXPECT_EQ(ParseColumns("160"), 160u);
  EXPECT_EQ(ParseColumns("1"), 1u);
  for (const char* bad : {"", "0", "-5", "abc", "80x", " 80", "100000", "99999999999"}) {
    EXPECT_EQ(ParseColumns(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace hookrelay::cli
