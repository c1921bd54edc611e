// Black-box tests of what the CLI tells its user: help texts that match what the commands do,
// unknown names named, hints that name the CLI's own flags. The real `hookrelay` binary against
// a real `hookrelay serve`.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <memory>
#include <regex>

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
using testing::TempDir;

constexpr const char* kToken = "test-admin-token-0123";

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}
#define EXPECT_CONTAINS(h, n) EXPECT_TRUE(Contains(h, n)) << "missing \"" << (n) << "\" in\n" << (h)
#define EXPECT_LACKS(h, n) \
  EXPECT_FALSE(Contains(h, n)) << "unexpected \"" << (n) << "\" in\n" << (h)

class UsabilityCliTest : public testing::IntegrationTest {
 protected:
  void SetUp() override {
    admin_token_ = kToken;
    StartServer(testing::Config()
                    .Set("delivery.poll_interval", "100ms")
                    .Source("src")
                    .Destination("billing", sink_.url("/ok"))
                    .Route("src", "billing"));
  }

  std::string Ingest(const std::string& body) {
    HttpConnection conn(server_->port());
    HttpResponse r = conn.Send("POST", "/in/src", {{"Content-Type", "application/json"}}, body);
    EXPECT_EQ(r.status, 202) << r.body;
    return r.status == 202 ? std::string(json::parse(r.body).at("id").as_string()) : "";
  }

  RunResult Cli(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), HOOKRELAY_BINARY);
    env.emplace("HOOKRELAY_URL", server_->url());
    env.emplace("HOOKRELAY_TOKEN", kToken);
    return RunProgram(args, {}, 60s, env);
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
};

// The default --id that `routes add --help` promises is the id the route gets.
TEST_F(UsabilityCliTest, RoutesAddHelpNamesTheDefaultIdItCreates) {
  ASSERT_EQ(Cli({"sources", "add", "shop"}).exit_code, 0);
  RunResult help = Cli({"routes", "add", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(help.out, m, std::regex(R"(default SOURCE(\S+)DESTINATION)")))
      << help.out;
  const std::string separator = m[1];
  RunResult add = Cli({"routes", "add", "shop", "billing"});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_CONTAINS(add.out, "shop" + separator + "billing");
  EXPECT_EQ(Cli({"routes", "show", "shop" + separator + "billing"}).exit_code, 0);
}

// An unknown source or destination in `events list` is a typo, said as `replay` says it.
TEST_F(UsabilityCliTest, EventsListNamesAnUnknownSourceOrDestination) {
  Ingest(R"({"n": 1})");
  RunResult source = Cli({"events", "list", "--source", "githb"});
  EXPECT_EQ(source.exit_code, 1) << source.out;
  EXPECT_CONTAINS(source.err, "no source \"githb\"");
  EXPECT_LACKS(source.out, "No events.");
  RunResult destination = Cli({"events", "list", "--destination", "nope", "--json"});
  EXPECT_EQ(destination.exit_code, 1) << destination.out;
  EXPECT_CONTAINS(destination.err, "no destination \"nope\"");
  RunResult replay = Cli({"replay", "--status", "failed", "--source", "githb"});
  EXPECT_EQ(replay.exit_code, 1);
  EXPECT_CONTAINS(replay.err, "no source \"githb\"");

  // Known names with nothing to show are still "No events.", exit 0.
  RunResult empty = Cli({"events", "list", "--source", "src", "--until", "2000-01-01T00:00:00Z"});
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_EQ(empty.out, "No events.\n");
  RunResult known = Cli({"events", "list", "--source", "src", "--destination", "billing"});
  EXPECT_EQ(known.exit_code, 0) << known.err;
  EXPECT_CONTAINS(known.out, "src");
}

// The SSRF refusal names the switch of the surface it is said on.
TEST_F(UsabilityCliTest, PrivateAddressRefusalNamesTheCliFlag) {
  RunResult add = Cli({"destinations", "add", "local", "http://127.0.0.1:9/x"});
  EXPECT_EQ(add.exit_code, 1);
  EXPECT_CONTAINS(add.err, "--allow-private");
  EXPECT_LACKS(add.err, "--allow-private-destinations");
  EXPECT_LACKS(add.err, "allow_private");
  RunResult ok = Cli({"destinations", "add", "local", "http://127.0.0.1:9/x", "--allow-private"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  RunResult upd = Cli({"destinations", "update", "billing2", "--url", "http://127.0.0.1:9/y"});
  EXPECT_NE(upd.exit_code, 0);

  // The API names its JSON field.
  HttpConnection api(server_->port());
  HttpResponse r = api.Send(
      "POST", "/api/v1/destinations",
      {{"Content-Type", "application/json"}, {"Authorization", std::string("Bearer ") + kToken}},
      R"({"name": "api-local", "url": "http://127.0.0.1:9/z"})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_CONTAINS(r.body, "allow_private");
  EXPECT_LACKS(r.body, "--allow-private\"");
}

constexpr const char* kLongUrl =
    "https://hooks.example-customer-domain.com/api/v2/webhooks/incoming/hookrelay-endpoint";

// The lines of `text` longer than `width` characters (UTF-8 characters, not bytes).
std::vector<std::string> LinesOver(const std::string& text, size_t width) {
  std::vector<std::string> over;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    size_t chars = 0;
    for (char c : line) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    // `destinations show` prints the URL whole, to be copied: the one word never cut or broken.
    if (chars > width && !Contains(line, kLongUrl)) over.push_back(line);
    start = end + 1;
  }
  return over;
}
#define EXPECT_FITS(text, width)                                                                \
  do {                                                                                          \
    const std::string fits_text = (text);                                                       \
    for (const std::string& l : LinesOver(fits_text, width))                                    \
      ADD_FAILURE() << "line longer than " << (width) << ": \"" << l << "\" in\n" << fits_text; \
  } while (0)

class TerminalWidthCliTest : public UsabilityCliTest {
 protected:
  void SetUp() override {
    UsabilityCliTest::SetUp();
    ASSERT_EQ(Cli({"sources", "add", "a-rather-long-source-name-for-tests"}).exit_code, 0);
    RunResult add =
        Cli({"destinations", "add", "a-rather-long-destination-name", kLongUrl, "--policy",
             R"({"strategy": "ladder", "delays": ["5s", "30s", "2m", "10m", "30m",)"
             R"( "1h", "2h", "4h", "8h", "12h"], "max_attempts": 20,)"
             R"( "max_duration": "72h", "timeout": "30s"})",
             "--replay-window", "30d"});
    ASSERT_EQ(add.exit_code, 0) << add.err;
    ASSERT_EQ(Cli({"routes", "add", "a-rather-long-source-name-for-tests",
                   "a-rather-long-destination-name"})
                  .exit_code,
              0);
    Ingest(R"({"n": 1})");
    Ingest(R"({"n": 2})");
  }

  std::string Output(std::vector<std::string> args, const std::string& columns) {
    RunResult r = Cli(std::move(args), {{"COLUMNS", columns}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
};

// With COLUMNS=80 no line of the tables, the detail views, `simulate herd` or `--help` is
// longer than 80 columns, however long the names, URL and policy.
TEST_F(TerminalWidthCliTest, EveryLineFitsInEightyColumns) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"routes", "list"},
           {"destinations", "list"},
           {"destinations", "show", "a-rather-long-destination-name"},
           {"events", "list"},
           {"events", "list", "--limit", "1"},
           {"audit", "list", "--limit", "1"},
           {"sources", "rejections", "a-rather-long-source-name-for-tests"},
           {"sources", "list"},
           {"simulate", "herd", "--events", "100000", "--fail-window", "1h30m15s", "--recover-at",
            "2d3h4m5s", "--capacity", "1000000/s", "--seed", "123456789012", "--policy-json",
            R"({"strategy": "exponential", "base": "1s", "max_attempts": 5, "jitter": "full"})",
            "--policy", "default"},
           {"--help"},
           {"serve", "--help"},
           {"events", "list", "--help"},
           {"destinations", "--help"},
           {"destinations", "add", "--help"},
           {"destinations", "update", "--help"},
           {"sources", "add", "--help"},
           {"routes", "add", "--help"},
           {"replay", "--help"},
           {"simulate", "herd", "--help"},
           {"schedule", "--help"}}) {
    SCOPED_TRACE(args.front() + (args.size() > 1 ? " " + args[1] : ""));
    EXPECT_FITS(Output(args, "80"), 80u);
  }
  // A cut URL keeps its scheme.
  const std::string list = Output({"destinations", "list"}, "80");
  EXPECT_CONTAINS(list, "https://");
  EXPECT_LACKS(list, kLongUrl);
}

// A wider terminal gets the whole URL; an invalid COLUMNS is 80 (stdout is not a terminal here).
TEST_F(TerminalWidthCliTest, WiderTerminalShowsTheWholeUrl) {
  EXPECT_CONTAINS(Output({"destinations", "list"}, "160"), kLongUrl);
  const std::string invalid = Output({"destinations", "list"}, "wide");
  EXPECT_LACKS(invalid, kLongUrl);
  EXPECT_FITS(invalid, 80u);
  // The help's descriptions use the width too: one line at 160 where 80 wraps.
  const std::string help = Output({"destinations", "add", "--help"}, "160");
  EXPECT_CONTAINS(help, "Retry policy: a preset name or a policy JSON object");
}

// `events list` pages with --cursor: the table names the cursor of the next page, and --cursor
// continues where --json's next_cursor said.
TEST_F(UsabilityCliTest, EventsListContinuesFromACursor) {
  const std::string first = Ingest(R"({"n": 1})");
  const std::string second = Ingest(R"({"n": 2})");
  const std::string third = Ingest(R"({"n": 3})");
  json::value page = CliJson({"events", "list", "--limit", "2"});
  ASSERT_TRUE(page.is_object());
  ASSERT_TRUE(page.at("next_cursor").is_string()) << page;
  const std::string cursor(page.at("next_cursor").as_string());
  json::value rest = CliJson({"events", "list", "--cursor", cursor});
  ASSERT_EQ(rest.at("items").as_array().size(), 1u) << rest;
  EXPECT_EQ(rest.at("items").as_array()[0].at("id").as_string(), first);  // newest first
  EXPECT_TRUE(rest.at("next_cursor").is_null());

  RunResult table = Cli({"events", "list", "--limit", "2"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_CONTAINS(table.out, third);
  EXPECT_CONTAINS(table.out, "--cursor " + cursor);
  RunResult next = Cli({"events", "list", "--limit", "2", "--cursor", cursor});
  ASSERT_EQ(next.exit_code, 0) << next.err;
  EXPECT_CONTAINS(next.out, first);
  EXPECT_LACKS(next.out, second);
  EXPECT_LACKS(next.out, "--cursor");
  RunResult bad = Cli({"events", "list", "--cursor", "not-a-cursor"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_CONTAINS(bad.err, "cursor");
}

// Rejected requests and the audit trail have commands; `sources show` gives the last rejection's
// time local and relative, like every other time.
TEST_F(UsabilityCliTest, RejectionsAuditAndLocalTimes) {
  RunResult add = Cli({"sources", "add", "gh", "--verify", "github", "--secret", "s3cret-value"});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  HttpConnection conn(server_->port());
  HttpResponse r = conn.Send("POST", "/in/gh",
                             {{"Content-Type", "application/json"},
                              {"X-Hub-Signature-256", "sha256=" + std::string(64, '0')}},
                             R"({"n": 1})");
  ASSERT_EQ(r.status, 401) << r.body;
  // Counted at once, recorded by the store's writer soon after.
  ASSERT_TRUE(test::WaitFor([&] {
    return CliJson({"sources", "rejections", "gh"}).at("items").as_array().size() == 1;
  }));

  RunResult rejections = Cli({"sources", "rejections", "gh"}, {{"TZ", "UTC"}});
  ASSERT_EQ(rejections.exit_code, 0) << rejections.err;
  EXPECT_CONTAINS(rejections.out, "1 refused since the server started");
  EXPECT_CONTAINS(rejections.out, "signature_mismatch");
  EXPECT_CONTAINS(rejections.out, "RECEIVED (UTC)");
  EXPECT_CONTAINS(rejections.out, "127.0.0.1");
  json::value page = CliJson({"sources", "rejections", "gh", "--limit", "1"});
  ASSERT_EQ(page.at("items").as_array().size(), 1u) << page;
  EXPECT_EQ(page.at("items").as_array()[0].at("reason").as_string(), "signature_mismatch");
  RunResult unknown = Cli({"sources", "rejections", "nope"});
  EXPECT_EQ(unknown.exit_code, 1);

  RunResult show = Cli({"sources", "show", "gh"}, {{"TZ", "UTC"}});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_CONTAINS(show.out, "  rejected  1 since the server started, the last ");
  EXPECT_CONTAINS(show.out, " UTC, ");  // "14:05:31 UTC, 2s ago"
  EXPECT_FALSE(std::regex_search(show.out, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:)"))) << show.out;

  RunResult audit = Cli({"audit", "list"}, {{"TZ", "UTC"}});
  ASSERT_EQ(audit.exit_code, 0) << audit.err;
  EXPECT_CONTAINS(audit.out, "AT (UTC)");
  EXPECT_CONTAINS(audit.out, "config_change");
  EXPECT_CONTAINS(audit.out, "gh");
  EXPECT_CONTAINS(audit.out, "token:");
  json::value entries = CliJson({"audit", "list", "--limit", "1"});
  ASSERT_EQ(entries.at("items").as_array().size(), 1u) << entries;
  EXPECT_EQ(entries.at("items").as_array()[0].at("action").as_string(), "config_change");
}

// Issue 32.10: a config that serve refuses leaves nothing behind: no data directory, no
// database, whichever check refuses it (a loopback destination used to be refused only after
// the store was opened). A missing config file names the OS's reason.
TEST(ServeConfigCliTest, RefusedConfigCreatesNoDataDirectory) {
  TempDir dir;
  struct Case {
    std::string toml;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"[[destinations]]\nname = \"d\"\nurl = \"http://127.0.0.1:9/x\"\n",
            "hookrelay.toml:3: destination \"d\": url: points at 127.0.0.1"},
           {"[[destinations]]\nname = \"d\"\nurl = \"https://10.1.2.3/x\"\n", "points at 10.1.2.3"},
           {"[[sources]]\nname = \"s\"\n\n[[routes]]\nsource = \"s\"\ndestination = \"nope\"\n",
            "unknown destination \"nope\""},
           {"[[sources]]\nname = \"s\n", "hookrelay.toml:2: unterminated string"}}) {
    const std::string config = dir.path() + "/hookrelay.toml";
    const std::string data = dir.path() + "/data";
    testing::WriteFile(config, c.toml);
    RunResult r = RunProgram(
        {HOOKRELAY_BINARY, "serve", "--config", config, "--data", data, "--listen", "127.0.0.1:0"},
        {}, 60s, {{"HOOKRELAY_ADMIN_TOKEN", kToken}});
    EXPECT_EQ(r.exit_code, 2) << c.toml << r.out << r.err;
    EXPECT_CONTAINS(r.err, c.error);
    EXPECT_FALSE(std::filesystem::exists(data)) << c.toml << r.err;
  }
  RunResult missing = RunProgram({HOOKRELAY_BINARY, "serve", "--config", dir.path() + "/nope.toml",
                                  "--data", dir.path() + "/data", "--listen", "127.0.0.1:0"},
                                 {}, 60s, {{"HOOKRELAY_ADMIN_TOKEN", kToken}});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_CONTAINS(missing.err,
                  "cannot read " + dir.path() + "/nope.toml: No such file or directory");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/data"));
}

// Issue 29: `check-config` says what serve would say about a file, and starts nothing;
// `healthcheck` exits 0 for a server that answers and 1 for one that does not.
TEST_F(UsabilityCliTest, CheckConfigSaysWhatServeWouldAndHealthcheckExitsZeroOrOne) {
  TempDir dir;
  const std::string good = dir.path() + "/good.toml";
  testing::WriteFile(good, testing::Config()
                               .Source("src")
                               .Destination("d", "https://d.example.com/in")
                               .Route("src", "d"));
  RunResult r = Cli({"check-config", good});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "good.toml: OK (1 source, 1 destination, 1 route;");
  const std::string bad = dir.path() + "/bad.toml";
  testing::WriteFile(bad,
                     "[[destinations]]\nname = \"d\"\nurl = \"https://d.example.com/\"\n"
                     "signing_secret = \"nope\"\n");
  r = Cli({"check-config", bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_CONTAINS(r.err, "bad.toml:4: destinations[0].signing_secret: must start with");
  RunResult serve = RunProgram({HOOKRELAY_BINARY, "serve", "--config", bad, "--data",
                                dir.path() + "/data", "--listen", "127.0.0.1:0"},
                               {}, 30s);
  EXPECT_EQ(serve.exit_code, 2);
  EXPECT_EQ(serve.err.substr(serve.err.find(':')), r.err.substr(r.err.find(':')))
      << "the same message as serve";
  const std::string key_file = dir.path() + "/master.key";
  testing::WriteFile(key_file, "c2hvcnQ=\n");
  const std::string with_key = dir.path() + "/key.toml";
  testing::WriteFile(with_key, "[store]\nmaster_key_file = \"" + key_file + "\"\n");
  r = Cli({"check-config", with_key});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_CONTAINS(r.err, "master.key: must be 32 bytes in base64");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/data")) << "nothing created";

  r = Cli({"healthcheck", server_->url() + "/healthz"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Cli({"healthcheck", server_->url() + "/readyz"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Cli({"healthcheck", server_->url()});  // a bare address: /healthz
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Cli({"healthcheck", server_->url() + "/nothing-here"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_CONTAINS(r.err, "HTTP 404");
  r = Cli({"healthcheck", "http://127.0.0.1:1/healthz", "--timeout", "2"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_CONTAINS(r.err, "cannot reach");
  EXPECT_LACKS(r.err, "--server");
  EXPECT_EQ(Cli({"healthcheck", "127.0.0.1:8080"}).exit_code, 2);
}

}  // namespace
}  // namespace hookrelay
