// Black-box tests of the management commands (events, sources, destinations, routes): the real
// `hookrelay` CLI binary talking to a real `hookrelay serve` over HTTP.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <csignal>
#include <fstream>
#include <memory>
#include <thread>

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
using testing::RunProgram;
using testing::RunResult;
using testing::Sink;
using testing::SinkResponse;
using testing::TempDir;

constexpr const char* kToken = "test-admin-token-0123";

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}
#define EXPECT_CONTAINS(h, n) EXPECT_TRUE(Contains(h, n)) << "missing \"" << (n) << "\" in\n" << (h)
#define EXPECT_LACKS(h, n) \
  EXPECT_FALSE(Contains(h, n)) << "unexpected \"" << (n) << "\" in\n" << (h)

class ManagementCliTest : public testing::IntegrationTest {
 protected:
  void SetUp() override {
    // "billing" answers 200; "ops" always fails with 500 and gives up after 2 attempts.
    sink_.SetDefault("/fail", SinkResponse::Status(500, "down"));
    admin_token_ = kToken;
    server_config_ = testing::Config()
                         .Set("delivery.poll_interval", "100ms")
                         .Source("src")
                         .Destination("billing", sink_.url("/ok"))
                         .Destination("ops", sink_.url("/fail"),
                                      {{"policy", testing::TomlInline({{"strategy", "exponential"},
                                                                       {"jitter", "none"},
                                                                       {"base", "50ms"},
                                                                       {"cap", "50ms"},
                                                                       {"max_attempts", 2},
                                                                       {"timeout", "2s"}})}})
                         .Route("src", "billing")
                         .Route("src", "ops");
    StartServer(server_config_);
  }

  std::string Ingest(const std::string& body) {
    HttpConnection conn(server_->port());
    HttpResponse r = conn.Send("POST", "/in/src", {{"Content-Type", "application/json"}}, body);
    EXPECT_EQ(r.status, 202) << r.body;
    return r.status == 202 ? std::string(json::parse(r.body).at("id").as_string()) : "";
  }

  RunResult Cli(std::vector<std::string> args, const std::string& token = kToken) {
    args.insert(args.begin(), HOOKRELAY_BINARY);
    return RunProgram(args, {}, 60s,
                      {{"HOOKRELAY_URL", server_->url()}, {"HOOKRELAY_TOKEN", token}});
  }

  json::value CliJson(std::vector<std::string> args) {
    args.push_back("--json");
    RunResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    boost::system::error_code ec;
    json::value v = json::parse(r.out, ec);
    EXPECT_FALSE(ec) << r.out;
    return v;
  }

  // Polls `events show ID --json` until the delivery to `destination` has `status` (20 s).
  bool WaitForDelivery(const std::string& id, const std::string& destination,
                       const std::string& status) {
    return test::WaitFor(
        [&] {
          json::value v = CliJson({"events", "show", id});
          if (!v.is_object()) return false;
          for (const json::value& d : v.at("deliveries").as_array()) {
            if (d.at("destination") == destination.c_str() && d.at("status") == status.c_str()) {
              return true;
            }
          }
          return false;
        },
        std::chrono::seconds(20), std::chrono::milliseconds(50));
  }

  std::string server_config_;
};

TEST_F(ManagementCliTest, EventsListAndShow) {
  std::string a = Ingest(R"({"n": 1})");
  std::string b = Ingest(R"({"n": 2})");
  ASSERT_TRUE(WaitForDelivery(a, "ops", "failed"));
  ASSERT_TRUE(WaitForDelivery(a, "billing", "delivered"));

  RunResult list = Cli({"events", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_CONTAINS(list.out, "ID");
  EXPECT_CONTAINS(list.out, "RECEIVED");
  EXPECT_CONTAINS(list.out, a);
  EXPECT_CONTAINS(list.out, b);
  EXPECT_CONTAINS(list.out, "src");
  // Received times are local and relative: "09:02:23, now" or "09:02:23, 1s ago".
  EXPECT_TRUE(Contains(list.out, ", now") || Contains(list.out, " ago")) << list.out;

  // --limit 1 follows no further than one event, and says where to continue.
  json::value one = CliJson({"events", "list", "--limit", "1"});
  ASSERT_EQ(one.at("items").as_array().size(), 1u);
  EXPECT_TRUE(one.at("next_cursor").is_string());
  // Pages are followed: --limit 2 with a server page of 2 gets both, ids distinct.
  json::value two = CliJson({"events", "list", "--limit", "2", "--source", "src"});
  ASSERT_EQ(two.at("items").as_array().size(), 2u);
  EXPECT_NE(two.at("items").at(0).at("id"), two.at("items").at(1).at("id"));
  json::value none =
      CliJson({"events", "list", "--source", "src", "--until", "2000-01-01T00:00:00Z"});
  EXPECT_TRUE(none.at("items").as_array().empty());
  RunResult none_text =
      Cli({"events", "list", "--source", "src", "--until", "2000-01-01T00:00:00Z"});
  EXPECT_EQ(none_text.out, "No events.\n");

  RunResult show = Cli({"events", "show", a});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_CONTAINS(show.out, "Event " + a);
  EXPECT_CONTAINS(show.out, "Delivery to billing: delivered, attempt 1 of");
  EXPECT_CONTAINS(show.out, "Delivery to ops: failed, attempt 2 of 2");
  EXPECT_CONTAINS(show.out, "reason: ");
  EXPECT_CONTAINS(show.out, "HTTP 500");

  json::value detail = CliJson({"events", "show", a});
  EXPECT_EQ(detail.at("id").as_string(), a);
  EXPECT_EQ(detail.at("source").as_string(), "src");
  ASSERT_EQ(detail.at("deliveries").as_array().size(), 2u);

  RunResult missing = Cli({"events", "show", "01JDZ8X4AC1N4G0Y5K6M7P8Q9R"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_CONTAINS(missing.err, "404");
  RunResult not_an_id = Cli({"events", "show", "01NOSUCHEVENT"});  // a typo, not a missing event
  EXPECT_EQ(not_an_id.exit_code, 1);
  EXPECT_CONTAINS(not_an_id.err, "400");
  EXPECT_CONTAINS(not_an_id.err, "not an event id");
}

TEST_F(ManagementCliTest, Catalog) {
  RunResult sources = Cli({"sources", "list"});
  ASSERT_EQ(sources.exit_code, 0) << sources.err;
  EXPECT_CONTAINS(sources.out, "NAME");
  EXPECT_CONTAINS(sources.out, "src");
  json::value src = CliJson({"sources", "show", "src"});
  EXPECT_EQ(src.at("name").as_string(), "src");
  EXPECT_CONTAINS(Cli({"sources", "show", "src"}).out, "Source src\n");

  RunResult dests = Cli({"destinations", "list"});
  ASSERT_EQ(dests.exit_code, 0) << dests.err;
  EXPECT_CONTAINS(dests.out, "BREAKER");
  EXPECT_CONTAINS(dests.out, "billing");
  EXPECT_CONTAINS(dests.out, sink_.url("/fail"));
  json::value dest_list = CliJson({"destinations", "list"});
  EXPECT_EQ(dest_list.at("items").as_array().size(), 2u);
  RunResult ops = Cli({"destinations", "show", "ops"});
  ASSERT_EQ(ops.exit_code, 0) << ops.err;
  EXPECT_CONTAINS(ops.out, "Destination ops\n");
  EXPECT_CONTAINS(ops.out, "breaker      closed");
  // Issue 12.13: the breaker's settings (the defaults here) are shown too.
  EXPECT_CONTAINS(ops.out, "opens after 20 consecutive failures, for 10m");
  EXPECT_CONTAINS(ops.out, "2 attempts");
  json::value ops_json = CliJson({"destinations", "show", "ops"});
  EXPECT_TRUE(ops_json.at("breaker").is_object());
  EXPECT_EQ(ops_json.at("paused"), false);

  RunResult unknown = Cli({"destinations", "show", "nosuch"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_CONTAINS(unknown.err, "404");

  RunResult routes = Cli({"routes", "list"});
  ASSERT_EQ(routes.exit_code, 0) << routes.err;
  EXPECT_CONTAINS(routes.out, "SOURCE");
  EXPECT_CONTAINS(routes.out, "billing");
  EXPECT_CONTAINS(routes.out, "ops");
  EXPECT_EQ(CliJson({"routes", "list"}).at("items").as_array().size(), 2u);
}

TEST_F(ManagementCliTest, ReplayAFailedDelivery) {
  const std::string id = Ingest(R"({"n":"again"})");
  ASSERT_TRUE(WaitForDelivery(id, "ops", "failed"));
  sink_.SetDefault("/fail", SinkResponse::Status(200));
  const size_t before = sink_.RequestCount();

  RunResult r = Cli({"replay", id, "--destination", "ops"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "Replayed " + id + " to ops (chain 1, delivery ");
  ASSERT_TRUE(sink_.WaitForRequests(before + 1, 10s));
  ASSERT_TRUE(WaitForDelivery(id, "ops", "delivered"));

  json::value all = CliJson({"replay", id});  // both destinations
  EXPECT_EQ(all.at("event").as_string(), id);
  EXPECT_EQ(all.at("replays").as_array().size(), 2u);

  RunResult wrong = Cli({"replay", id, "--destination", "nosuch"});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_CONTAINS(wrong.err, "400");
  EXPECT_CONTAINS(wrong.err, "destination");
  RunResult unknown = Cli({"replay", "01JDZ8X4AC1N4G0Y5K6M7P8Q9R"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_CONTAINS(unknown.err, "404");
  EXPECT_EQ(Cli({"replay"}).exit_code, 2);
}

TEST_F(ManagementCliTest, BulkReplayOfFailedEventsShowsProgressAndTotals) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Ingest("{\"bulk\":" + std::to_string(i) + "}"));
  for (const std::string& id : ids) ASSERT_TRUE(WaitForDelivery(id, "ops", "failed"));
  sink_.SetDefault("/fail", SinkResponse::Status(200));

  RunResult r = Cli({"replay", "--status", "failed", "--destination", "ops", "--rate", "20/s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_CONTAINS(r.out, " done: 5 replayed, 0 failed, of 5");
  // stderr is not a terminal here: plain progress lines, no bar, ending at 100%.
  EXPECT_CONTAINS(r.err, "100% 5/5 (0 failed) done");
  EXPECT_LACKS(r.err, "[#");
  for (const std::string& id : ids) EXPECT_TRUE(WaitForDelivery(id, "ops", "delivered")) << id;

  // Nothing failed is left: --json shows an empty job, done at once.
  json::value job = CliJson({"replay", "--status", "failed", "--rate", "100"});
  EXPECT_EQ(job.at("state").as_string(), "done");
  EXPECT_EQ(job.at("total").as_int64(), 0);

  json::value queued = CliJson({"replay", "--status", "failed", "--no-wait"});
  EXPECT_FALSE(queued.at("id").as_string().empty());
  EXPECT_EQ(queued.at("rate"), 50);  // a plain integer, not 5E1
  RunResult queued_text = Cli({"replay", "--status", "failed", "--no-wait", "--rate", "3"});
  EXPECT_EQ(queued_text.exit_code, 0) << queued_text.err;
  EXPECT_CONTAINS(queued_text.out, " at 3/s");
  EXPECT_LACKS(queued_text.out, "3E0");  // not "E0": the job's random id may contain that

  // Checked by the CLI, like --since: a usage error (2) that shows what was typed.
  RunResult bad = Cli({"replay", "--status", "failed", "--rate", "fast"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_CONTAINS(bad.err, "--rate \"fast\"");
  EXPECT_EQ(Cli({"replay", ids[0], "--status", "failed"}).exit_code, 2);
  EXPECT_EQ(Cli({"replay", "--status", "failed", "--since", "1d", "--no-wait"}).exit_code, 0);
  EXPECT_EQ(Cli({"replay", "--status", "failed", "--since", "someday"}).exit_code, 2);
}

TEST_F(ManagementCliTest, PauseResumeResetBreaker) {
  RunResult r = Cli({"destinations", "pause", "billing", "--reason", "deploy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "Paused billing\n");
  EXPECT_CONTAINS(r.out, "Destination billing\n");
  json::value shown = CliJson({"destinations", "show", "billing"});
  ASSERT_TRUE(shown.is_object());
  EXPECT_EQ(shown.at("paused_reason"), "deploy");

  json::value resumed = CliJson({"destinations", "resume", "billing"});
  ASSERT_TRUE(resumed.is_object());
  EXPECT_EQ(resumed.at("paused"), false);
  r = Cli({"destinations", "reset-breaker", "ops"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "Reset the breaker of ops\n");
  EXPECT_CONTAINS(r.out, "breaker      closed");

  RunResult unknown = Cli({"destinations", "pause", "nosuch"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_CONTAINS(unknown.err, "404");
  EXPECT_EQ(Cli({"destinations", "resume"}).exit_code, 2);
  EXPECT_EQ(Cli({"destinations", "resume", "billing", "--reason", "x"}).exit_code, 2);

  HttpConnection conn(server_->port());
  HttpResponse audit =
      conn.Send("GET", "/api/v1/audit", {{"Authorization", std::string("Bearer ") + kToken}});
  ASSERT_EQ(audit.status, 200) << audit.body;
  EXPECT_LACKS(audit.body, kToken);
  std::vector<std::string> actions;
  json::value trail = json::parse(audit.body);
  for (const json::value& e : trail.at("items").as_array()) {
    actions.emplace_back(e.at("action").as_string());
  }
  // The oldest: the first start wrote the config file's objects into the stored catalog.
  EXPECT_EQ(actions,
            (std::vector<std::string>{"reset_breaker", "resume", "pause", "config_change"}));
}

// Issue 32.3: deliveries held by an open breaker and by the operator's pause are both "paused";
// the CLI says which (events show in full, the list as far as its column allows), in the
// statuses' real names.
TEST_F(ManagementCliTest, PausedDeliveriesSayWhatHoldsThem) {
  sink_.SetDefault("/brk", SinkResponse::Status(503));
  HttpConnection conn(server_->port());
  const testing::HeaderList auth{{"Authorization", std::string("Bearer ") + kToken},
                                 {"Content-Type", "application/json"}};
  HttpResponse r =
      conn.Send("POST", "/api/v1/destinations", auth,
                R"({"name": "brk", "allow_private": true, "url": ")" + sink_.url("/brk") +
                    R"(", "breaker": {"threshold": 1, "open": ["1h"]}})");
  ASSERT_EQ(r.status, 201) << r.body;
  r = conn.Send("POST", "/api/v1/sources", auth, R"({"name": "held"})");
  ASSERT_EQ(r.status, 201) << r.body;
  r = conn.Send("POST", "/api/v1/routes", auth, R"({"source": "held", "destination": "brk"})");
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_EQ(Cli({"destinations", "pause", "billing"}).exit_code, 0);

  HttpResponse in = conn.Send("POST", "/in/held", {{"Content-Type", "application/json"}}, "{}");
  ASSERT_EQ(in.status, 202) << in.body;
  const std::string held(json::parse(in.body).at("id").as_string());
  const std::string paused = Ingest(R"({"n": 1})");
  ASSERT_TRUE(WaitForDelivery(held, "brk", "paused"));
  ASSERT_TRUE(WaitForDelivery(paused, "billing", "paused"));
  ASSERT_TRUE(WaitForDelivery(paused, "ops", "failed"));

  RunResult show = Cli({"events", "show", held});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_CONTAINS(show.out, "Delivery to brk: paused (breaker open until ");
  show = Cli({"events", "show", paused});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_CONTAINS(show.out, "Delivery to billing: paused (by operator), attempt 0 of ");
  EXPECT_CONTAINS(show.out, "Delivery to ops: failed, attempt 2 of 2\n");

  RunResult list = Cli({"events", "list", "--source", "held"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_CONTAINS(list.out, "paused (breaker");
  list = Cli({"events", "list", "--source", "src"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_CONTAINS(list.out, "1 failed, 1 paused");  // failures first; no "ok" or "queued"
  EXPECT_LACKS(list.out, " ok");
}

TEST_F(ManagementCliTest, WrongTokenIsAnApiError) {
  RunResult r = Cli({"events", "list"}, "wrong-token-987");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_CONTAINS(r.err, "401");
  EXPECT_CONTAINS(r.err, "unauthenticated");
  EXPECT_LACKS(r.err + r.out, "wrong-token-987");
  // --token overrides HOOKRELAY_TOKEN.
  RunResult fixed = Cli({"routes", "list", "--token", kToken}, "wrong-token-987");
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
}

TEST_F(ManagementCliTest, BadUsageExitsTwo) {
  for (std::vector<std::string> args : {std::vector<std::string>{"events"},
                                        {"events", "show"},
                                        {"events", "list", "--limit", "0"},
                                        {"events", "list", "--status", "bogus"},
                                        {"events", "list", "--since", "yesterday"},
                                        {"sources", "show"},
                                        {"routes", "show"},
                                        {"routes", "rm"},
                                        {"sources", "add"},
                                        {"events", "list", "--nope"}}) {
    RunResult r = Cli(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.out << r.err;
  }
  EXPECT_TRUE(sink_.Requests().empty());
}

// The catalog through the CLI: add a source, a destination (at the sink) and a route; events
// of the new source arrive at the sink; update and rm; the objects survive a restart; config-file
// objects are refused; bad flags are usage errors (2), API refusals are 1.
TEST_F(ManagementCliTest, SourcesDestinationsRoutesAddUpdateRm) {
  const std::string secret_file = dir_.path() + "/signing-secret";
  const std::string signing_secret = "whsec_c2lnbmluZy1rZXktMDEyMzQ1Njc4OQ==";
  { std::ofstream(secret_file) << signing_secret << "\n"; }
  RunResult src = Cli({"sources", "add", "shop", "--dedup-json", "id", "--max-body", "64KiB"});
  ASSERT_EQ(src.exit_code, 0) << src.err;
  EXPECT_CONTAINS(src.out, "Created source shop");
  EXPECT_CONTAINS(src.out, "json id");
  EXPECT_CONTAINS(src.out, "64KiB");
  EXPECT_CONTAINS(src.out, "API");

  json::value dest =
      CliJson({"destinations", "add", "crm", sink_.url("/crm"), "--allow-private", "--header",
               "Authorization: Bearer header-secret-xyz", "--header", "X-Env: test",
               "--signing-secret", "@" + secret_file, "--max-concurrency", "4"});
  ASSERT_TRUE(dest.is_object());
  EXPECT_EQ(dest.at("url").as_string(), sink_.url("/crm"));
  EXPECT_EQ(dest.at("origin").as_string(), "api");
  EXPECT_TRUE(dest.at("signing_secret_set").as_bool());
  EXPECT_EQ(dest.at("headers").at("X-Env").as_string(), "test");
  EXPECT_LACKS(json::serialize(dest), "header-secret-xyz");
  EXPECT_LACKS(json::serialize(dest), signing_secret);

  RunResult route = Cli({"routes", "add", "shop", "crm"});
  ASSERT_EQ(route.exit_code, 0) << route.err;
  EXPECT_CONTAINS(route.out, "shop:crm");
  RunResult routes = Cli({"routes", "list"});
  ASSERT_EQ(routes.exit_code, 0) << routes.err;
  EXPECT_CONTAINS(routes.out, "DEFINED IN");
  EXPECT_CONTAINS(routes.out, "shop:crm");
  EXPECT_CONTAINS(routes.out, "config file");  // src->billing, src->ops

  // Live at once: an event of the new source reaches the new destination, signed, with the
  // configured header.
  HttpConnection conn(server_->port());
  HttpResponse in =
      conn.Send("POST", "/in/shop", {{"Content-Type", "application/json"}}, R"({"id": "evt_1"})");
  ASSERT_EQ(in.status, 202) << in.body;
  ASSERT_TRUE(sink_.WaitForRequests(1, 10s));
  std::vector<testing::SinkRequest> got = sink_.Requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, "/crm");
  EXPECT_EQ(got[0].body, R"({"id": "evt_1"})");
  EXPECT_EQ(got[0].Header("Authorization").value_or(""), "Bearer header-secret-xyz");
  EXPECT_TRUE(got[0].Header("webhook-signature").has_value());

  RunResult upd =
      Cli({"destinations", "update", "crm", "--url", sink_.url("/crm2"), "--rate-limit", "50/s"});
  ASSERT_EQ(upd.exit_code, 0) << upd.err;
  EXPECT_CONTAINS(upd.out, "Updated destination crm");
  EXPECT_CONTAINS(upd.out, sink_.url("/crm2"));
  EXPECT_CONTAINS(upd.out, "50/s");
  EXPECT_CONTAINS(upd.out, "Authorization: (redacted)");  // kept, never shown

  // Refusals: the API says why (exit 1); bad flags never reach it (exit 2).
  RunResult routed = Cli({"sources", "rm", "shop"});
  EXPECT_EQ(routed.exit_code, 1);
  EXPECT_CONTAINS(routed.err, "still routed");
  RunResult config_owned = Cli({"destinations", "update", "billing", "--rate-limit", "1/s"});
  EXPECT_EQ(config_owned.exit_code, 1);
  EXPECT_CONTAINS(config_owned.err, "defined in the config file");
  RunResult bad_url = Cli({"destinations", "add", "x", "ftp://example.com/"});
  EXPECT_EQ(bad_url.exit_code, 1);
  EXPECT_CONTAINS(bad_url.err, "url: must be http(s)");
  EXPECT_CONTAINS(bad_url.err, "(field: url)");
  RunResult bad_window =
      Cli({"destinations", "add", "x", "https://x.example", "--replay-window", "soon"});
  EXPECT_EQ(bad_window.exit_code, 1);
  EXPECT_CONTAINS(bad_window.err, "replay_window");
  RunResult unknown = Cli({"routes", "add", "shop", "nope"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_CONTAINS(unknown.err, "no destination \"nope\"");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"destinations", "add", "x"},       // no URL
           {"destinations", "update", "crm"},  // nothing to change
           {"destinations", "add", "x", "https://x.example", "--header", "no-colon"},
           {"destinations", "add", "x", "https://x.example", "--policy", "{bad json"},
           {"sources", "add", "x", "--spec", "@/nonexistent/spec.json"},
           {"sources", "add", "x", "--dedup-json", "id", "--dedup-header", "X-Id"},
           {"routes", "add", "shop"},
       }) {
    RunResult r = Cli(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.out << r.err;
  }

  // A restart keeps what the API created (and the config file's objects).
  ASSERT_EQ(server_->Stop(), 0);
  ASSERT_NO_FATAL_FAILURE(StartServer(server_config_));
  json::value shown = CliJson({"destinations", "show", "crm"});
  ASSERT_TRUE(shown.is_object());
  EXPECT_EQ(shown.at("url").as_string(), sink_.url("/crm2"));
  EXPECT_EQ(shown.at("rate_limit").as_string(), "50/s");
  json::value list = CliJson({"sources", "list"});
  ASSERT_TRUE(list.is_object());
  EXPECT_EQ(list.at("items").as_array().size(), 2u);  // src (config file) and shop (API)

  RunResult rm_route = Cli({"routes", "rm", "shop:crm"});
  ASSERT_EQ(rm_route.exit_code, 0) << rm_route.err;
  EXPECT_CONTAINS(rm_route.out, "Deleted route shop:crm");
  ASSERT_EQ(Cli({"sources", "rm", "shop"}).exit_code, 0);
  RunResult rm_dest = Cli({"destinations", "rm", "crm", "--json"});
  ASSERT_EQ(rm_dest.exit_code, 0) << rm_dest.err;
  EXPECT_EQ(json::parse(rm_dest.out).at("name").as_string(), "crm");
  RunResult gone = Cli({"destinations", "show", "crm"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_CONTAINS(gone.err, "404");

  // Every change is in the audit trail, none with a secret.
  HttpConnection conn2(server_->port());
  HttpResponse audit =
      conn2.Send("GET", "/api/v1/audit", {{"Authorization", std::string("Bearer ") + kToken}});
  ASSERT_EQ(audit.status, 200) << audit.body;
  EXPECT_LACKS(audit.body, "header-secret-xyz");
  EXPECT_LACKS(audit.body, signing_secret);
  EXPECT_CONTAINS(audit.body, "\"target\":\"destination crm\"");
}

// Issue 10.1: a destination's URL given where the API's address goes (or the other way round)
// must never send the admin token to it. A listener on a free port stands for the destination;
// every management command is run with --url, --server and --endpoint mixed up.
TEST_F(ManagementCliTest, TheTokenNeverGoesToADestinationUrl) {
  Sink trap;
  const std::string with_path = trap.url("/new-endpoint");
  ASSERT_EQ(Cli({"sources", "add", "shop"}).exit_code, 0);
  // allow_private: the update below points it at the trap on 127.0.0.1 on purpose.
  RunResult made =
      Cli({"destinations", "add", "shop", "https://shop.example/hook", "--allow-private"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string id = Ingest(R"({"n": 1})");
  const std::vector<std::vector<std::string>> commands = {
      {"events", "list"},
      {"events", "show", id},
      {"sources", "list"},
      {"sources", "show", "shop"},
      {"sources", "add", "shop2"},
      {"sources", "update", "shop", "--max-body", "1MiB"},
      {"sources", "rm", "nosuch"},
      {"destinations", "list"},
      {"destinations", "show", "shop"},
      {"destinations", "add", "shop3"},
      {"destinations", "update", "shop"},
      {"destinations", "rm", "nosuch"},
      {"destinations", "pause", "shop"},
      {"destinations", "resume", "shop"},
      {"destinations", "reset-breaker", "shop"},
      {"routes", "list"},
      {"routes", "show", "src->billing"},
      {"routes", "add", "shop", "shop"},
      {"routes", "rm", "nosuch"},
      {"replay", id},
      {"replay", "--status", "failed", "--no-wait"},
      {"replay", "list"},
      {"replay", "status", "nosuch"},
      {"replay", "cancel", "nosuch"},
  };
  const std::vector<std::vector<std::string>> mixes = {
      {"--url", with_path},
      {"--url", trap.url("/")},
      {"--endpoint", with_path},
      {"--server", with_path},
      {"--server", trap.url("/?x=1")},
      {"--server", trap.url("/#f")},
      {"--server", with_path, "--url", with_path},
  };
  for (const auto& command : commands) {
    for (const auto& mix : mixes) {
      std::vector<std::string> args = command;
      args.insert(args.end(), mix.begin(), mix.end());
      RunResult r = Cli(args);
      std::string joined;
      for (const auto& a : args) joined += a + " ";
      EXPECT_LACKS(r.out + r.err, kToken);
      // Refused before any request (2), unless the command takes a destination URL: then it went
      // to the real API (HOOKRELAY_URL).
      if (mix[0] == "--server") {
        EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
        EXPECT_CONTAINS(r.err, "--server");
        EXPECT_CONTAINS(r.err, "--url is a destination's URL");
      }
    }
  }
  // The same address in HOOKRELAY_URL is refused too.
  RunResult env = RunProgram({HOOKRELAY_BINARY, "events", "list"}, {}, 60s,
                             {{"HOOKRELAY_URL", with_path}, {"HOOKRELAY_TOKEN", kToken}});
  EXPECT_EQ(env.exit_code, 2);
  EXPECT_CONTAINS(env.err, "HOOKRELAY_URL");
  EXPECT_TRUE(trap.Requests().empty())
      << trap.Requests().size() << " requests, the first " << trap.Requests()[0].method << " "
      << trap.Requests()[0].target;

  // The destination's URL is --url in add and update (add also takes it positionally).
  json::value updated = CliJson({"destinations", "update", "shop", "--url", with_path});
  EXPECT_EQ(updated.at("url").as_string(), with_path);
  json::value added = CliJson({"destinations", "add", "shop4", "--url", "https://b.example/h"});
  EXPECT_EQ(added.at("url").as_string(), "https://b.example/h");
  EXPECT_EQ(
      Cli({"destinations", "add", "shop5", "https://a.example/", "--url", "https://b.example/"})
          .exit_code,
      2);
  EXPECT_TRUE(trap.Requests().empty());
}

TEST_F(ManagementCliTest, AMissingTokenSaysWhatToSet) {
  RunResult r = RunProgram(
      {HOOKRELAY_BINARY, "sources", "list"}, {}, 60s,
      {{"HOOKRELAY_URL", server_->url()}, {"HOOKRELAY_TOKEN", ""}, {"HOOKRELAY_ADMIN_TOKEN", ""}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_CONTAINS(r.err, "HOOKRELAY_TOKEN");
  EXPECT_CONTAINS(r.err, "--token");
  // HOOKRELAY_ADMIN_TOKEN, the name the server reads, works for the CLI too.
  RunResult alias = RunProgram({HOOKRELAY_BINARY, "sources", "list"}, {}, 60s,
                               {{"HOOKRELAY_URL", server_->url()},
                                {"HOOKRELAY_TOKEN", ""},
                                {"HOOKRELAY_ADMIN_TOKEN", kToken}});
  EXPECT_EQ(alias.exit_code, 0) << alias.err;
  EXPECT_CONTAINS(alias.out, "src");
  // Plurals: one source is "1 source".
  EXPECT_LACKS(server_->output(), "1 sources");
}

// Ctrl-C while a bulk replay is watched: the job keeps running, and the CLI says so and how to
// watch or cancel it (exit 130); `replay list | status | cancel` do that.
TEST_F(ManagementCliTest, BulkReplayJobsCanBeListedWatchedAndCancelled) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(Ingest("{\"slow\":" + std::to_string(i) + "}"));
  for (const std::string& id : ids) ASSERT_TRUE(WaitForDelivery(id, "ops", "failed")) << id;
  testing::ChildProcess watch(
      {HOOKRELAY_BINARY, "replay", "--status", "failed", "--destination", "ops", "--rate", "1/h"},
      dir_.path(), {{"HOOKRELAY_URL", server_->url()}, {"HOOKRELAY_TOKEN", kToken}});
  ASSERT_TRUE(watch.WaitForOutput("(0 failed)", 20s)) << watch.Stderr();
  const std::string err = watch.Stderr();
  const size_t at = err.find("replay ");
  ASSERT_NE(at, std::string::npos) << err;
  const std::string job = err.substr(at + 7, err.find(':', at) - at - 7);
  watch.Signal(SIGINT);
  EXPECT_EQ(watch.Wait(20s), 130) << watch.Stderr();
  EXPECT_CONTAINS(watch.Stderr(), "job " + job + " keeps running on the server");
  EXPECT_CONTAINS(watch.Stderr(), "`hookrelay replay status " + job + "`");
  EXPECT_CONTAINS(watch.Stderr(), "`hookrelay replay cancel " + job + "`");

  RunResult list = Cli({"replay", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_CONTAINS(list.out, job);
  EXPECT_CONTAINS(list.out, "1/h");
  RunResult status = Cli({"replay", "status", job});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_TRUE(Contains(status.out, "Bulk replay " + job + ": running") ||
              Contains(status.out, "Bulk replay " + job + ": queued"))
      << status.out;
  EXPECT_CONTAINS(status.out, "/3");
  RunResult cancel = Cli({"replay", "cancel", job});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_CONTAINS(cancel.out, "cancelled");
  EXPECT_EQ(CliJson({"replay", "status", job}).at("state"), "cancelled");
  EXPECT_CONTAINS(cancel.out, "Cancelled; chains already created still go out.");
  // Issue 12.6: cancelling it again changes nothing, and says so.
  RunResult again = Cli({"replay", "cancel", job});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_CONTAINS(again.out, "Bulk replay " + job + " was already cancelled; nothing changed.");
  EXPECT_FALSE(Contains(again.out, "chains already created still go out")) << again.out;
  // Issue 12.13: a rate below the minimum is refused as typed, with the minimum.
  RunResult slow = Cli({"replay", "--status", "failed", "--rate", "0.0001"});
  EXPECT_EQ(slow.exit_code, 2) << slow.out << slow.err;
  EXPECT_CONTAINS(slow.err, "--rate \"0.0001\"");
  EXPECT_CONTAINS(slow.err, "1/h");
  EXPECT_FALSE(Contains(slow.err, "0.0001/s")) << slow.err;
  EXPECT_EQ(Cli({"replay", "status", "nosuch"}).exit_code, 1);
  EXPECT_EQ(Cli({"replay", "status"}).exit_code, 2);
  // `replay EVENT_ID` still replays one event.
  RunResult one = Cli({"replay", ids[0], "--destination", "ops"});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_CONTAINS(one.out, "Replayed " + ids[0] + " to ops");
}

TEST(ManagementCliNoServerTest, NoArgumentsPrintsTheCommands) {
  RunResult r = RunProgram({HOOKRELAY_BINARY});
  EXPECT_EQ(r.exit_code, 2);
  for (const char* command :
       {"serve", "events", "sources", "destinations", "routes", "replay", "schedule"}) {
    EXPECT_CONTAINS(r.err, command);
  }
  RunResult events = RunProgram({HOOKRELAY_BINARY, "events"});
  EXPECT_EQ(events.exit_code, 2);
  EXPECT_CONTAINS(events.err, "list");
  EXPECT_CONTAINS(events.err, "show");
}

TEST(ManagementCliNoServerTest, UnreachableServerIsAClearError) {
  // Port 1 on loopback: nothing listens, the connection is refused.
  RunResult r = RunProgram({HOOKRELAY_BINARY, "events", "list"}, {}, 60s,
                           {{"HOOKRELAY_URL", "http://127.0.0.1:1"}, {"HOOKRELAY_TOKEN", "tok-1"}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_CONTAINS(r.err, "cannot reach the hookrelay API at http://127.0.0.1:1");
  EXPECT_LACKS(r.err, "tok-1");
  RunResult flag =
      RunProgram({HOOKRELAY_BINARY, "sources", "list", "--server", "http://127.0.0.1:1"}, {}, 60s,
                 {{"HOOKRELAY_TOKEN", "tok-1"}});
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_CONTAINS(flag.err, "http://127.0.0.1:1");
}

}  // namespace
}  // namespace hookrelay
