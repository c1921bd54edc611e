// Black-box tests of what the CLI tells its user: help texts that match what the commands do,
// unknown names named, hints that name the CLI's own flags. The real `hookrelay` binary against
// a real `hookrelay serve`.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <memory>
#include <regex>

#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/process.h"
#include "support/sink.h"

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

class UsabilityCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string config =
        "[delivery]\npoll_interval = \"100ms\"\n"
        "\n[[sources]]\nname = \"src\"\n"
        "\n[[destinations]]\nname = \"billing\"\nallow_private = true\nurl = \"" +
        sink_.url("/ok") +
        "\"\n"
        "\n[[routes]]\nsource = \"src\"\ndestination = \"billing\"\n";
    server_ = std::make_unique<HookrelayServer>(HookrelayServer::Options{
        config, dir_.path() + "/data", {}, {{"HOOKRELAY_ADMIN_TOKEN", kToken}}});
    ASSERT_TRUE(server_->ok()) << server_->output();
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

  TempDir dir_;
  Sink sink_;
  std::unique_ptr<HookrelayServer> server_;
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

}  // namespace
}  // namespace hookrelay
