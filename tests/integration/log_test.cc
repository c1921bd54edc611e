// The server's log settings against the real `hookrelay serve` binary: --log-format json makes
// every stderr line a JSON object (time, level, message), --log-level filters, the config
// file's [log] table works the same, and bad values are usage errors (exit 2).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/process.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using ::testing::HasSubstr;
using testing::HookrelayServer;
using testing::HttpConnection;
using testing::TempDir;

const std::string kToken = "log-test-admin-token-0123456789";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Starts a server with `args` and `config`, makes it log at several levels (a wrong admin token
// is a warning; start and stop are info), stops it, and returns its stderr.
std::string RunAndLog(const std::vector<std::string>& args, const std::string& config = "") {
  TempDir dir;
  HookrelayServer server(
      HookrelayServer::Options{config, dir.path() + "/data", args, {{"HOOKRELAY_TOKEN", kToken}}});
  EXPECT_TRUE(server.ok()) << server.output();
  if (!server.ok()) return "";
  HttpConnection conn(server.port());
  // A message with characters JSON must escape: the path is logged with the warning.
  EXPECT_EQ(conn.Send("GET", "/api/v1/stats", {{"Authorization", "Bearer wrong\"\\token"}}).status,
            401);
  EXPECT_EQ(server.Stop(), 0) << server.output();
  return server.stderr_output();
}

TEST(LogFormatTest, JsonWritesOneObjectPerStderrLine) {
  const std::string err = RunAndLog({"--log-format", "json", "--log-level", "debug"});
  const std::vector<std::string> lines = Lines(err);
  ASSERT_GE(lines.size(), 3u) << err;
  std::set<std::string> levels;
  bool started = false, warned = false;
  for (const std::string& line : lines) {
    json::error_code ec;
    json::value v = json::parse(line, ec);
    ASSERT_FALSE(ec) << "not JSON: " << line;
    ASSERT_TRUE(v.is_object()) << line;
    const json::object& o = v.as_object();
    EXPECT_EQ(o.size(), 3u) << line;
    ASSERT_TRUE(o.contains("time") && o.at("time").is_string()) << line;
    ASSERT_TRUE(o.contains("level") && o.at("level").is_string()) << line;
    ASSERT_TRUE(o.contains("message") && o.at("message").is_string()) << line;
    const std::string time(o.at("time").as_string());
    EXPECT_EQ(time.size(), 24u) << time;  // 2026-12-01T20:10:34.123Z
    EXPECT_EQ(time.back(), 'Z') << time;
    levels.emplace(o.at("level").as_string());
    const std::string message(o.at("message").as_string());
    started |= message.find("started on http://127.0.0.1:") != std::string::npos;
    warned |= message.find("wrong bearer token") != std::string::npos;
  }
  EXPECT_TRUE(started) << err;
  EXPECT_TRUE(warned) << err;
  EXPECT_TRUE(levels.count("info")) << err;
  EXPECT_TRUE(levels.count("warning")) << err;
}

TEST(LogFormatTest, TextIsTheDefault) {
  const std::string err = RunAndLog({});
  EXPECT_THAT(err, HasSubstr(" info hookrelay "));
  EXPECT_THAT(err, HasSubstr(" warning management API: wrong bearer token"));
  for (const std::string& line : Lines(err)) EXPECT_NE(line.front(), '{') << line;
}

TEST(LogLevelTest, WarnHidesInfo) {
  const std::string err = RunAndLog({"--log-level", "warn"});
  EXPECT_THAT(err, HasSubstr("wrong bearer token"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr(" info "))) << err;
}

TEST(LogLevelTest, ErrorHidesWarnings) {
  const std::string err = RunAndLog({"--log-level", "error"});
  EXPECT_EQ(err, "");
}

TEST(LogConfigTest, ConfigFileLogTableAppliesAndFlagsWin) {
  const std::string err = RunAndLog({}, "[log]\nlevel = \"warn\"\nformat = \"json\"\n");
  ASSERT_FALSE(err.empty());
  for (const std::string& line : Lines(err)) {
    json::error_code ec;
    json::value v = json::parse(line, ec);
    ASSERT_FALSE(ec) << line;
    EXPECT_EQ(v.at("level").as_string(), "warning") << line;
  }
  // Flags win over the file.
  const std::string text =
      RunAndLog({"--log-format", "text", "--log-level", "info"}, "[log]\nformat = \"json\"\n");
  EXPECT_THAT(text, HasSubstr(" info hookrelay "));
}

// With json, a fatal error found after the settings are read is a JSON record too.
TEST(LogFormatTest, JsonFatalStartupErrorIsAJsonRecord) {
  TempDir dir;
  HookrelayServer first(
      HookrelayServer::Options{"", dir.path() + "/first", {}, {{"HOOKRELAY_TOKEN", kToken}}});
  ASSERT_TRUE(first.ok()) << first.output();
  testing::RunResult r = testing::RunProgram(
      {HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:" + std::to_string(first.port()), "--data",
       dir.path() + "/second", "--log-format", "json"},
      "", std::chrono::seconds(30), {{"HOOKRELAY_TOKEN", kToken}});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::vector<std::string> lines = Lines(r.err);
  ASSERT_FALSE(lines.empty());
  for (const std::string& line : lines) {
    json::error_code ec;
    json::value v = json::parse(line, ec);
    ASSERT_FALSE(ec) << "not JSON: " << line;
  }
  const json::value last = json::parse(lines.back());
  EXPECT_EQ(last.at("level").as_string(), "error");
  EXPECT_THAT(std::string(last.at("message").as_string()), HasSubstr("hookrelay serve: "));
}

struct BadLogSetting {
  std::string name;  // of the test case
  std::vector<std::string> args;
  std::string config;
  std::string expected;
};

class BadLogSettingTest : public ::testing::TestWithParam<BadLogSetting> {};

TEST_P(BadLogSettingTest, IsAUsageErrorBeforeAnythingStarts) {
  TempDir dir;
  std::vector<std::string> argv = {HOOKRELAY_BINARY, "serve",  "--listen",
                                   "127.0.0.1:0",    "--data", dir.path() + "/data"};
  if (!GetParam().config.empty()) {
    testing::WriteFile(dir.path() + "/hookrelay.toml", GetParam().config);
    argv.push_back("--config");
    argv.push_back(dir.path() + "/hookrelay.toml");
  }
  argv.insert(argv.end(), GetParam().args.begin(), GetParam().args.end());
  testing::RunResult r = testing::RunProgram(argv, "", std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().expected));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("listening on"))) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Values, BadLogSettingTest,
    ::testing::Values(
        BadLogSetting{"UnknownLevelFlag",
                      {"--log-level", "loud"},
                      "",
                      "hookrelay serve: --log-level: must be one of trace, debug, info, warn, "
                      "error (got \"loud\")"},
        BadLogSetting{"EmptyLevelFlag", {"--log-level", ""}, "", "--log-level: must be one of"},
        BadLogSetting{"UnknownFormatFlag",
                      {"--log-format", "xml"},
                      "",
                      "hookrelay serve: --log-format: must be text or json (got \"xml\")"},
        BadLogSetting{"UnknownLevelInFile",
                      {},
                      "[log]\nlevel = \"verbose\"\n",
                      "hookrelay.toml:2: log.level: must be one of trace, debug, info, warn, "
                      "error (got \"verbose\")"},
        BadLogSetting{"UnknownFormatInFile",
                      {},
                      "[log]\nformat = \"logfmt\"\n",
                      "hookrelay.toml:2: log.format: must be text or json"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace hookrelay
