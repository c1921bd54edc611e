// Black-box tests of `hookrelay serve` itself: the data directory's file modes, the order of
// start-up (no admin token shown before the address is bound), the admin token's environment
// variables, the indexes at / and /api/v1, the wrong-token throttle, and what the server logs
// and counts. The real binary, on 127.0.0.1.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "support/config_builder.h"
#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/pg_cluster.h"
#include "support/process.h"
#include "support/sink.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::HookrelayServer;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::RunProgram;
using testing::Sink;
using testing::SinkResponse;
using testing::TempDir;

const std::string kToken = "serve-test-token-0123456789abcdef0123";  // 38 characters
const std::string kVerifySecret = "verify-secret-do-not-leak";
const std::string kSigningSecret = "whsec_c2lnbmluZy1zZWNyZXQtZG8tbm90LWxlYWs=";

unsigned Mode(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0xffff;
  return st.st_mode & 07777;
}

// The data directory's regular files and their modes.
std::map<std::string, unsigned> FileModes(const std::string& dir) {
  std::map<std::string, unsigned> modes;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) modes[e.path().filename().string()] = Mode(e.path().string());
  }
  return modes;
}

testing::TomlValue Policy(const char* timeout) {
  return testing::TomlInline({{"strategy", "exponential"},
                              {"jitter", "none"},
                              {"base", "20ms"},
                              {"cap", "50ms"},
                              {"max_attempts", 2},
                              {"max_duration", "1m"},
                              {"timeout", timeout}});
}

std::string Config(const std::string& sink_url) {
  return testing::Config()
      .Set("delivery.lease_margin", "1s")
      .Set("delivery.poll_interval", "100ms")
      .Source("gh",
              {{"verify", testing::TomlInline({{"scheme", "github"},
                                               {"secrets", testing::TomlArray({kVerifySecret})}})}})
      .Source("src")
      .Destination("billing", sink_url + "/hooks",
                   {{"signing_secret", kSigningSecret},
                    {"policy", Policy("2s")},
                    // 12: the last of the 12 attempts LogsWhatHappensAndCountsPerDestination makes
                    // (3 events and their 3 replays, 2 attempts each) opens it, as that delivery
                    // fails for good. An earlier trip would leave the rest waiting for the
                    // breaker: a failed half-open probe does not count toward max_attempts
                    // (issue 32.2).
                    {"breaker", testing::TomlInline(
                                    {{"threshold", 12}, {"open", testing::TomlArray({"300ms"})}})}})
      .Route("src", "billing")
      .Source("s2")
      .Destination("slow", sink_url + "/slow", {{"max_concurrency", 1}, {"policy", Policy("20s")}})
      .Route("s2", "slow");
}

HttpResponse Send(uint16_t port, const std::string& method, const std::string& target,
                  const std::string& token = "", const std::string& body = "") {
  HttpConnection conn(port);
  testing::HeaderList headers;
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
  return conn.Send(method, target, headers, body);
}

// A TCP port on 127.0.0.1 held (listening) by this test.
class HeldPort {
 public:
  HeldPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 1) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      throw std::runtime_error("cannot hold a port");
    }
    port_ = ntohs(a.sin_port);
  }
  ~HeldPort() { ::close(fd_); }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

class ServeBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override { old_umask_ = ::umask(022); }  // what most shells have
  void TearDown() override { ::umask(old_umask_); }

  std::unique_ptr<HookrelayServer> Start(
      std::map<std::string, std::string> env = {{"HOOKRELAY_TOKEN", kToken}},
      std::vector<std::string> extra = {}) {
    auto server = std::make_unique<HookrelayServer>(
        HookrelayServer::Options{Config(sink_.url("")), data_dir(), extra, env});
    EXPECT_TRUE(server->ok()) << server->output();
    return server;
  }
  std::string data_dir() const { return dir_.path() + "/data"; }

  mode_t old_umask_ = 0;
  TempDir dir_;
  Sink sink_;
};

// Issue 10.2: the database holds secrets; with an existing 0755 directory and umask 022 every
// file the server creates (hookrelay.db and SQLite's own -wal and -shm) is owner-only.
TEST_F(ServeBinaryTest, EveryFileInTheDataDirectoryIsOwnerOnly) {
  fs::create_directories(data_dir());
  ::chmod(data_dir().c_str(), 0755);
  auto server = Start();
  ASSERT_TRUE(server->ok());
  ASSERT_EQ(Send(server->port(), "POST", "/in/src", "", R"({"a":1})").status, 202);
  ASSERT_TRUE(sink_.WaitForRequests(1, 10s));
  auto modes = FileModes(data_dir());
  for (const char* name :
       {"hookrelay.db", "hookrelay.db-wal", "hookrelay.db-shm", "admin-token.sha256", "node-id"}) {
    ASSERT_TRUE(modes.count(name)) << name << " missing";
  }
  for (const auto& [name, mode] : modes) {
    EXPECT_EQ(mode & 077, 0u) << name << " has mode " << std::oct << mode;
  }
  // The directory the user made 0755 is theirs to change; the server says so.
  EXPECT_NE(server->output().find("accessible to other users (mode 0755)"), std::string::npos)
      << server->output();
  EXPECT_EQ(server->Stop(), 0);
  for (const auto& [name, mode] : FileModes(data_dir())) {
    EXPECT_EQ(mode & 077, 0u) << name << " has mode " << std::oct << mode;
  }
}

TEST_F(ServeBinaryTest, ANewDataDirectoryIs0700) {
  auto server = Start();
  ASSERT_TRUE(server->ok());
  EXPECT_EQ(Mode(data_dir()), 0700u);
  EXPECT_EQ(server->output().find("accessible to other users"), std::string::npos)
      << server->output();
}

// Issue 12.4: an existing 0644 database (and token hash, node id) in a 0755 directory is made
// owner-only before SQLite opens it, so the -wal and -shm SQLite then creates (copying the
// database's mode) are owner-only too; each file changed is named in a warning.
TEST_F(ServeBinaryTest, TightensItsOwnFilesAtStartAndNamesEach) {
  {
    auto server = Start();
    ASSERT_TRUE(server->ok());
    ASSERT_EQ(server->Stop(), 0);
  }
  ::chmod(data_dir().c_str(), 0755);
  for (const char* name : {"hookrelay.db", "admin-token.sha256", "node-id"}) {
    ::chmod((data_dir() + "/" + name).c_str(), 0644);
  }
  fs::remove(data_dir() + "/hookrelay.db-wal");
  fs::remove(data_dir() + "/hookrelay.db-shm");
  auto server = Start();
  ASSERT_TRUE(server->ok());
  ASSERT_EQ(Send(server->port(), "POST", "/in/src", "", R"({"a":1})").status, 202);
  ASSERT_TRUE(sink_.WaitForRequests(1, 10s));
  const std::string out = server->output();
  for (const char* name : {"hookrelay.db", "admin-token.sha256", "node-id"}) {
    EXPECT_NE(out.find(data_dir() + "/" + name +
                       " was accessible to other users (mode 0644); changed it to 0600"),
              std::string::npos)
        << name << "\n"
        << out;
  }
  auto modes = FileModes(data_dir());
  for (const char* name : {"hookrelay.db", "hookrelay.db-wal", "hookrelay.db-shm"}) {
    ASSERT_TRUE(modes.count(name)) << name << " missing";
  }
  for (const auto& [name, mode] : modes) {
    EXPECT_EQ(mode & 077, 0u) << name << " has mode " << std::oct << mode;
  }
  // The directory is the user's to change: a warning that says how.
  EXPECT_NE(out.find("chmod 700 " + data_dir()), std::string::npos) << out;
  EXPECT_EQ(Mode(data_dir()), 0755u);
}

// Issue 10.10: a start-up that fails (address in use) shows no token and stores no hash; the
// next start generates and shows one.
TEST_F(ServeBinaryTest, NoAdminTokenIsShownOrStoredWhenTheAddressIsInUse) {
  HeldPort held;
  auto r = RunProgram({HOOKRELAY_BINARY, "serve", "--listen",
                       "127.0.0.1:" + std::to_string(held.port()), "--data", data_dir()},
                      {}, 30s, {{"HOOKRELAY_TOKEN", ""}, {"HOOKRELAY_ADMIN_TOKEN", ""}});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot listen on"), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find("Admin token"), std::string::npos) << r.out;
  EXPECT_EQ((r.out + r.err).find("hr_"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(data_dir())) << "the address is bound before anything is created";

  auto server = Start({{"HOOKRELAY_TOKEN", ""}, {"HOOKRELAY_ADMIN_TOKEN", ""}});
  ASSERT_TRUE(server->ok());
  std::smatch m;
  const std::string out = server->output();
  ASSERT_TRUE(std::regex_search(out, m, std::regex("shown once.*: (hr_[0-9a-f]+)\n"))) << out;
  const std::string token = m[1];
  // The next steps follow the token. Issue 12.12: the config file already defines sources,
  // destinations and routes, so they list them and post to an existing source (the first one
  // that checks no signature), instead of adding ones that would conflict.
  EXPECT_NE(out.find("export HOOKRELAY_TOKEN=" + token), std::string::npos) << out;
  // Not the CLI's default address (127.0.0.1:8080): the CLI is told where the API is.
  EXPECT_NE(out.find("export HOOKRELAY_URL=" + server->url() + "\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("hookrelay sources add"), std::string::npos) << out;
  EXPECT_EQ(out.find("hookrelay routes add"), std::string::npos) << out;
  EXPECT_NE(out.find("hookrelay sources list"), std::string::npos) << out;
  EXPECT_NE(out.find("curl -X POST " + server->url() + "/in/s2"), std::string::npos) << out;
  EXPECT_EQ(Send(server->port(), "GET", "/api/v1/sources", token).status, 200);
}

// Issue 32.11: when every source checks signatures, the start-up hint's plain curl got 401. The
// hint now signs the test event (with the secret from $SECRET, never printed) for the scheme in
// use; run as printed, it is accepted.
TEST_F(ServeBinaryTest, TheStartUpHintSignsTheTestEventWhenEverySourceVerifies) {
  struct Case {
    std::string verify;  // the source's verify table, in TOML
    std::string secret;
  };
  for (const Case& c : std::vector<Case>{
           {"{ scheme = \"github\", secrets = [\"gh-secret\"] }", "gh-secret"},
           {"{ scheme = \"stripe\", secrets = [\"whsec_stripe\"] }", "whsec_stripe"},
           {"{ scheme = \"shopify\", secrets = [\"shop-secret\"] }", "shop-secret"},
           {"{ scheme = \"hmac\", secrets = [\"it's\"], header = \"X-Sig\", algorithm = "
            "\"sha512\", encoding = \"base64\", prefix = \"v1'=\" }",
            "it's"},
       }) {
    TempDir dir;
    HookrelayServer server({"[[sources]]\nname = \"only\"\nverify = " + c.verify + "\n",
                            dir.path() + "/data",
                            {},
                            {{"HOOKRELAY_TOKEN", ""}, {"HOOKRELAY_ADMIN_TOKEN", ""}}});
    ASSERT_TRUE(server.ok()) << server.output();
    const std::string out = server.output();
    EXPECT_EQ(out.find(c.secret), std::string::npos) << "the secret is never printed: " << out;
    const size_t begin = out.find("  # source \"only\" checks ");
    const size_t end = out.find("  hookrelay events list", begin);
    ASSERT_NE(begin, std::string::npos) << out;
    ASSERT_NE(end, std::string::npos) << out;
    EXPECT_NE(out.find("unsigned requests get 401"), std::string::npos) << out;
    const std::string hint = out.substr(begin, end - begin);
    // Run the hint's lines as a user would, with the secret in SECRET.
    auto r = RunProgram({"/bin/bash", "-c", "set -e\n" + hint}, {}, 30s, {{"SECRET", c.secret}});
    EXPECT_EQ(r.exit_code, 0) << hint << r.err;
    EXPECT_NE(r.out.find("\"id\""), std::string::npos) << c.verify << "\n" << hint << r.out;
    EXPECT_EQ(r.out.find("error"), std::string::npos) << c.verify << "\n" << hint << r.out;
  }
}

// With a source that checks no signature, the hint posts to it with a plain curl.
TEST_F(ServeBinaryTest, TheStartUpHintPrefersASourceWithoutVerification) {
  HookrelayServer server(
      {"[[sources]]\nname = \"a-signed\"\nverify = { scheme = \"github\", "
       "secrets = [\"s\"] }\n\n[[sources]]\nname = \"plain\"\n",
       data_dir(),
       {},
       {{"HOOKRELAY_TOKEN", ""}, {"HOOKRELAY_ADMIN_TOKEN", ""}}});
  ASSERT_TRUE(server.ok()) << server.output();
  const std::string out = server.output();
  EXPECT_NE(out.find("  curl -X POST " + server.url() + "/in/plain -H"), std::string::npos) << out;
  EXPECT_EQ(out.find("openssl"), std::string::npos) << out;
  EXPECT_EQ(out.find("/in/a-signed"), std::string::npos) << out;
}

// The standard scheme's signature needs a decoded key: the hint says what to sign instead of a
// curl that would get 401.
TEST_F(ServeBinaryTest, TheStartUpHintSaysWhatAStandardWebhooksSourceNeeds) {
  HookrelayServer server(
      {"[[sources]]\nname = \"std\"\nverify = { scheme = \"standard\", "
       "secrets = [\"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"] }\n",
       data_dir(),
       {},
       {{"HOOKRELAY_TOKEN", ""}, {"HOOKRELAY_ADMIN_TOKEN", ""}}});
  ASSERT_TRUE(server.ok()) << server.output();
  const std::string out = server.output();
  EXPECT_NE(out.find("# source \"std\" checks standard signatures (unsigned requests get 401)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("webhook-signature"), std::string::npos) << out;
  EXPECT_EQ(out.find("curl -X POST"), std::string::npos) << out;
}

// Issue 12.13: a destination refused for its address names the config file and the line, like
// every other config error.
TEST_F(ServeBinaryTest, ARefusedDestinationAddressNamesTheConfigFileAndLine) {
  const std::string config_path = dir_.path() + "/bad.toml";
  {
    std::ofstream f(config_path);
    f << "[[sources]]\nname = \"gh\"\n\n[[destinations]]\nname = \"billing\"\n"
         "url = \"http://127.0.0.1:9/hooks\"\n";
  }
  auto r = RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:0", "--data", data_dir(),
                       "--config", config_path},
                      {}, 30s, {{"HOOKRELAY_TOKEN", kToken}});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(config_path + ":6: destination \"billing\": url: "), std::string::npos)
      << r.err;
}

// Issue 13: the first released schema cannot read a data directory of a development build: serve
// refuses it with exit 2 (retrying will not help), naming the directory and the schema version.
TEST_F(ServeBinaryTest, ADevelopmentSchemaDataDirectoryIsRefusedWithItsVersion) {
  fs::create_directories(data_dir());
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((data_dir() + "/hookrelay.db").c_str(), &db), SQLITE_OK);
    const char* sql =
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL,"
        " description TEXT NOT NULL);"
        "INSERT INTO schema_version VALUES (6, 0, 'dev'), (7, 0, 'dev');";
    EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  auto r = RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:0", "--data", data_dir()},
                      {}, 30s, {{"HOOKRELAY_TOKEN", kToken}});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(
      r.err.find("data directory " + data_dir() + " has schema version 7 from a development build"),
      std::string::npos)
      << r.err;
}

// Issue 13 (store-open): an empty --data or --store (PG=""; --store "$PG") is a usage error
// (exit 2) naming the flag, as the config file's empty dir is — never ./hookrelay-data; an empty
// --listen likewise, never the default address.
TEST_F(ServeBinaryTest, AnEmptyDataOrStoreFlagIsRefused) {
  const std::string cwd = dir_.path() + "/cwd";
  fs::create_directories(cwd);
  for (const std::string flag : {"--data", "--store", "--listen"}) {
    for (const std::string form : {"separate", "equals"}) {
      const std::string arg = form == "separate" ? flag + " ''" : flag + "=";
      auto r = RunProgram(
          {"/bin/sh", "-c",
           "cd '" + cwd + "' && exec '" + HOOKRELAY_BINARY + "' serve " +
               (flag == "--listen" ? "--data '" + data_dir() + "' " : "--listen 127.0.0.1:0 ") +
               arg},
          {}, 10s, {{"HOOKRELAY_TOKEN", kToken}});
      EXPECT_EQ(r.exit_code, 2) << arg << ": " << r.out << r.err;
      // "--data=" is refused by the argument parser itself ("--data: 1 required TEXT missing").
      EXPECT_NE(r.err.find(form == "separate" ? flag + ": is empty" : flag + ": "),
                std::string::npos)
          << arg << ": " << r.err;
      EXPECT_FALSE(fs::exists(cwd + "/hookrelay-data")) << arg;
      EXPECT_FALSE(fs::exists(data_dir())) << arg;
      EXPECT_EQ(r.out.find("listening"), std::string::npos) << arg;
    }
  }
}

// Issue 13 (store-open): a hookrelay.db that is not a database, or that a newer build wrote, is
// refused with exit 2 and a message naming the file and what to do; its bytes stay as they were.
TEST_F(ServeBinaryTest, AnUnusableDatabaseIsRefusedWithExit2AndLeftUntouched) {
  fs::create_directories(data_dir());
  const std::string db = data_dir() + "/hookrelay.db";
  testing::WriteFile(db, std::string(8192, 'x'));
  auto r = RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:0", "--data", data_dir()},
                      {}, 30s, {{"HOOKRELAY_TOKEN", kToken}});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(db + " is not a SQLite database"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("restore the data directory from a backup"), std::string::npos) << r.err;
  EXPECT_EQ(testing::ReadFile(db), std::string(8192, 'x'));
  EXPECT_EQ((r.out + r.err).find("Admin token"), std::string::npos) << r.out;
}

TEST_F(ServeBinaryTest, AnInvalidListenAddressIsAUsageErrorBeforeAnyToken) {
  auto r =
      RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:99999", "--data", data_dir()},
                 {}, 30s, {{"HOOKRELAY_TOKEN", ""}, {"HOOKRELAY_ADMIN_TOKEN", ""}});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("invalid listen address"), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find("Admin token"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(data_dir()));
}

// Issue 10.11: HOOKRELAY_TOKEN is the one name (the CLI's too); HOOKRELAY_ADMIN_TOKEN stays an
// alias.
TEST_F(ServeBinaryTest, TheAdminTokenComesFromHookrelayTokenOrItsAlias) {
  {
    auto server = Start({{"HOOKRELAY_TOKEN", kToken}, {"HOOKRELAY_ADMIN_TOKEN", ""}});
    ASSERT_TRUE(server->ok());
    EXPECT_NE(server->output().find("Admin token: from HOOKRELAY_TOKEN"), std::string::npos);
    EXPECT_EQ(Send(server->port(), "GET", "/api/v1/sources", kToken).status, 200);
    ASSERT_EQ(server->Stop(), 0);
  }
  const std::string other = kToken + "-alias";
  auto server = Start({{"HOOKRELAY_TOKEN", ""}, {"HOOKRELAY_ADMIN_TOKEN", other}});
  ASSERT_TRUE(server->ok());
  EXPECT_EQ(Send(server->port(), "GET", "/api/v1/sources", other).status, 200);
  EXPECT_EQ(Send(server->port(), "GET", "/api/v1/sources", kToken).status, 401);
}

// Issue 11.6: a weak token from the environment gets a warning that says how to make a strong
// one; a strong one gets none.
TEST_F(ServeBinaryTest, WarnsAboutAWeakTokenFromTheEnvironment) {
  {
    auto server = Start({{"HOOKRELAY_TOKEN", "only-twenty-chars-xx"}});
    ASSERT_TRUE(server->ok());
    const std::string out = server->output();
    EXPECT_NE(out.find("HOOKRELAY_TOKEN is only 20 characters"), std::string::npos) << out;
    EXPECT_NE(out.find("openssl rand -hex 32"), std::string::npos) << out;
    EXPECT_EQ(out.find("only-twenty-chars-xx"), std::string::npos) << "never print the token";
    ASSERT_EQ(server->Stop(), 0);
  }
  auto server = Start();
  ASSERT_TRUE(server->ok());
  EXPECT_EQ(server->output().find("openssl rand"), std::string::npos) << server->output();
}

// A token with whitespace or a control character could never be sent (the server strips the header
// value's surrounding whitespace), so every client would get 401: refused at start, exit 2,
// naming the variable and not echoing the token.
TEST_F(ServeBinaryTest, ATokenNoClientCanSendIsRefusedAtStart) {
  for (const std::string& token :
       {std::string("0123456789abcdef0123456789abcdef0123\n"), std::string("0123456789abcdef0123 "),
        std::string(34, ' '), std::string("0123456789abcdef\t0123456789abcdef"),
        std::string("0123456789abcdef\x01"
                    "0123456789abcdef")}) {
    auto r =
        RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:0", "--data", data_dir()}, {},
                   30s, {{"HOOKRELAY_TOKEN", token}, {"HOOKRELAY_ADMIN_TOKEN", ""}});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("HOOKRELAY_TOKEN contains"), std::string::npos) << r.err;
    EXPECT_EQ((r.out + r.err).find("0123456789abcdef0123"), std::string::npos) << r.err;
  }
}

// Issue 10.18: / and /api/v1 say where to go instead of a bare 404; /api/v1 needs no token and
// reveals nothing of the catalog.
// Issue 12: / redirects browsers to the dashboard; the body still says where things are (curl
// without -L).
TEST_F(ServeBinaryTest, RootAndApiIndexesSayWhereToGo) {
  auto server = Start();
  ASSERT_TRUE(server->ok());
  HttpResponse r = Send(server->port(), "GET", "/");
  ASSERT_EQ(r.status, 302) << r.body;
  EXPECT_EQ(r.Header("Location"), "/ui/");
  json::object root = json::parse(r.body).as_object();
  EXPECT_EQ(root.at("openapi").as_string(), "/api/v1/openapi.json");
  EXPECT_EQ(root.at("metrics").as_string(), "/metrics");
  EXPECT_EQ(root.at("dashboard").as_string(), "/ui/");
  EXPECT_TRUE(root.contains("docs"));

  for (const char* target : {"/api/v1", "/api/v1/"}) {
    r = Send(server->port(), "GET", target);
    ASSERT_EQ(r.status, 200) << target << r.body;
    json::object api = json::parse(r.body).as_object();
    EXPECT_EQ(api.at("openapi").as_string(), "/api/v1/openapi.json");
    EXPECT_EQ(r.body.find("billing"), std::string::npos) << "no catalog without a token";
    EXPECT_EQ(r.body.find(kToken), std::string::npos);
  }
  EXPECT_EQ(Send(server->port(), "POST", "/", "", "{}").status, 405);
  EXPECT_EQ(Send(server->port(), "GET", "/nope").status, 404);
  EXPECT_EQ(Send(server->port(), "GET", "/api/v1/sources").status, 401);
  EXPECT_EQ(Send(server->port(), "GET", "/api/v1/openapi.json", kToken).status, 200);
}

// Issue 12: the dashboard's files are embedded and served below /ui/ without a token, each with
// the security headers; a path that is no file is a 404 with them too.
TEST_F(ServeBinaryTest, DashboardIsServedWithSecurityHeaders) {
  auto server = Start();
  ASSERT_TRUE(server->ok());
  auto has_security_headers = [](const HttpResponse& r) {
    const std::string csp = r.Header("Content-Security-Policy");
    EXPECT_NE(csp.find("default-src 'self'"), std::string::npos) << csp;
    EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
    EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
    EXPECT_EQ(r.Header("X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(r.Header("Referrer-Policy"), "no-referrer");
  };
  HttpResponse r = Send(server->port(), "GET", "/ui/");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(r.body.find("<script type=\"module\" src=\"js/app.js\">"), std::string::npos);
  has_security_headers(r);
  r = Send(server->port(), "GET", "/ui/js/app.js");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Content-Type"), "text/javascript; charset=utf-8");
  has_security_headers(r);
  r = Send(server->port(), "GET", "/ui");
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(r.Header("Location"), "/ui/");
  for (const char* target : {"/ui/nope.js", "/ui/../hookrelay.toml", "/ui/%2e%2e/%2e%2e/etc/passwd",
                             "/ui/js/../index.html"}) {
    r = Send(server->port(), "GET", target);
    EXPECT_EQ(r.status, 404) << target;
    has_security_headers(r);
  }
  EXPECT_EQ(Send(server->port(), "POST", "/ui/", "", "{}").status, 405);
}

std::string Metrics(uint16_t port) { return Send(port, "GET", "/metrics").body; }

// Issue 32.20: API answers (and /metrics, ingest, errors, the 401 decided from the head alone)
// carry nosniff and no-store; the dashboard's files keep their revalidation by ETag.
TEST_F(ServeBinaryTest, ApiAnswersAreNeverCachedOrSniffed) {
  auto server = Start();
  ASSERT_TRUE(server->ok());
  struct Case {
    const char* method;
    const char* target;
    std::string token;
    int status;
  };
  for (const Case& c : std::vector<Case>{{"GET", "/api/v1/sources", kToken, 200},
                                         {"GET", "/api/v1/sources", "", 401},
                                         {"GET", "/api/v1/sources", "wrong-token-0000000000", 401},
                                         {"GET", "/api/v1/nope", kToken, 404},
                                         {"GET", "/api/v1", "", 200},
                                         {"GET", "/metrics", "", 200},
                                         {"GET", "/healthz", "", 200},
                                         {"POST", "/in/nope", "", 404},
                                         {"GET", "/nope", "", 404}}) {
    HttpResponse r = Send(server->port(), c.method, c.target, c.token);
    EXPECT_EQ(r.status, c.status) << c.target << ": " << r.body;
    EXPECT_EQ(r.Header("X-Content-Type-Options"), "nosniff") << c.target;
    EXPECT_EQ(r.Header("Cache-Control"), "no-store") << c.target;
  }
  HttpResponse ui = Send(server->port(), "GET", "/ui/");
  EXPECT_EQ(ui.Header("Cache-Control"), "no-cache");
}

// Issue 11.6: wrong tokens are logged (without the token), counted, and throttled per address.
// A wrong token from a blocked address gets 429; the right token is checked first and never
// refused (behind a NAT one operator's typos must not lock out the others).
TEST_F(ServeBinaryTest, WrongTokensAreThrottledButTheRightTokenIsNeverRefused) {
  auto server = Start({{"HOOKRELAY_TOKEN", kToken}}, {"--auth-block-ms", "1500"});
  ASSERT_TRUE(server->ok());
  ASSERT_EQ(Send(server->port(), "GET", "/api/v1/sources", kToken).status, 200);
  const std::string wrong = "wrong-token-guess-number-0000000000";
  int unauthorized = 0;
  HttpResponse throttled;
  for (int i = 0; i < 20; ++i) {
    HttpResponse r = Send(server->port(), "GET", "/api/v1/sources", wrong);
    if (r.status == 401) {
      ++unauthorized;
    } else {
      throttled = r;
      break;
    }
  }
  EXPECT_EQ(unauthorized, 5);
  EXPECT_EQ(throttled.status, 429) << throttled.body;
  EXPECT_EQ(throttled.Header("Retry-After"), "2") << "1.5 s, rounded up";
  // Blocked for wrong tokens only: the right token from the same address works at once, and
  // does not lift the block.
  EXPECT_EQ(Send(server->port(), "GET", "/api/v1/sources", kToken).status, 200);
  EXPECT_EQ(Send(server->port(), "GET", "/api/v1/sources", wrong).status, 429);
  const std::string metrics = Metrics(server->port());
  EXPECT_NE(metrics.find("hookrelay_api_auth_failures_total 7\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("hookrelay_api_auth_throttled_total 2\n"), std::string::npos) << metrics;
  const std::string out = server->output();
  EXPECT_NE(out.find("wrong bearer token from 127.0.0.1 (GET /api/v1/sources)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("address blocked"), std::string::npos) << out;
  EXPECT_EQ(out.find(wrong), std::string::npos) << "the presented token is never logged";
  EXPECT_EQ(out.find(kToken), std::string::npos);
}

// GET /api/v1/sources with `token`, from the loopback address `from`; the response's status.
int ApiStatusFrom(uint16_t port, const std::string& from, const std::string& token) {
  testing::RawConnection c(port, from);
  if (!c.Write("GET /api/v1/sources HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token +
               "\r\nConnection: close\r\n\r\n")) {
    return 0;
  }
  return testing::StatusOf(c.ReadUntil("\r\n\r\n", 10s));
}

// Issue 4: one wrong token from each of 10,050 addresses (more than the throttle tracks) must
// not lock anyone out: the right token passes from a new address and from a flooding one; the
// warnings are rate-limited instead of one line per wrong token.
TEST_F(ServeBinaryTest, AFloodOfWrongTokensFromManyAddressesLocksNobodyOut) {
  auto server = Start();
  ASSERT_TRUE(server->ok());
  const std::string wrong = "wrong-token-guess-number-0000000000";
  auto address = [](int i) {
    return "127.1." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1);
  };
  constexpr int kAddresses = 10050;
  int unauthorized = 0;
  int throttled = 0;
  for (int i = 0; i < kAddresses; ++i) {
    const int status = ApiStatusFrom(server->port(), address(i), wrong);
    ASSERT_TRUE(status == 401 || status == 429) << address(i) << ": " << status;
    (status == 401 ? unauthorized : throttled)++;
  }
  EXPECT_GT(unauthorized, 9900);
  EXPECT_GT(throttled, 0) << "past the table, wrong tokens from new addresses are refused";
  // A fresh address, the flood's last address and one from its middle: the right token passes.
  EXPECT_EQ(ApiStatusFrom(server->port(), "127.2.0.1", kToken), 200);
  EXPECT_EQ(ApiStatusFrom(server->port(), address(kAddresses - 1), kToken), 200);
  EXPECT_EQ(ApiStatusFrom(server->port(), address(5000), kToken), 200);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(ApiStatusFrom(server->port(), "127.2.0." + std::to_string(2 + i), wrong), 429);
  }
  EXPECT_EQ(ApiStatusFrom(server->port(), "127.2.0.20", kToken), 200);
  const std::string log = server->stderr_output();
  size_t lines = 0;
  for (size_t at = log.find("wrong bearer token"); at != std::string::npos;
       at = log.find("wrong bearer token", at + 1)) {
    ++lines;
  }
  EXPECT_LT(lines, 50u) << "the warnings are rate-limited";
}

// Polls /metrics until `pred` holds for its text (10 s at most); returns the last text.
template <typename Pred>
std::string WaitForMetrics(uint16_t port, Pred pred) {
  std::string text;
  (void)test::WaitFor([&] { return static_cast<bool>(pred(text = Metrics(port))); }, 20s, 20ms);
  return text;
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

// Issue 10.19: breaker transitions, deliveries that fail for good (with the reason), start-up,
// shutdown and bulk replays are logged, without secrets; alerts raised are counted with no
// alert channel configured. Issue 10.20: the per-destination series.
TEST_F(ServeBinaryTest, LogsWhatHappensAndCountsPerDestination) {
  sink_.SetDefault("/hooks", SinkResponse::Status(500, "boom"));
  auto server = Start();
  ASSERT_TRUE(server->ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(Send(server->port(), "POST", "/in/src", "", R"({"n":1})").status, 202);
  }
  std::string m = WaitForMetrics(server->port(), [](const std::string& t) {
    return Has(t, R"(hookrelay_deliveries_total{destination="billing",outcome="failed"} 3)");
  });
  EXPECT_TRUE(Has(m, R"(hookrelay_deliveries_total{destination="billing",outcome="failed"} 3)"))
      << m;
  EXPECT_TRUE(Has(m, R"(hookrelay_deliveries_total{destination="billing",outcome="delivered"} 0)"))
      << m;
  EXPECT_TRUE(Has(
      m, R"(hookrelay_destination_attempts_total{destination="billing",outcome="retryable"} 6)"))
      << m;
  EXPECT_TRUE(
      Has(m, R"(hookrelay_destination_attempts_total{destination="slow",outcome="success"} 0)"))
      << m;
  EXPECT_NE(m.find(R"(hookrelay_destination_due_backlog{destination="billing"} )"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("hookrelay_alerts_raised_total 0\n"), std::string::npos)
      << "the breaker opened and deliveries failed: alerts were raised, channel or not\n"
      << m;

  // A bulk replay of what failed is logged from start to end.
  HttpResponse r = Send(server->port(), "POST", "/api/v1/replays", kToken,
                        R"({"status":"failed","destination":"billing","rate":"1000/s"})");
  ASSERT_EQ(r.status, 202) << r.body;
  const std::string job = std::string(json::parse(r.body).at("id").as_string());
  EXPECT_TRUE(test::WaitFor([&] {
    return server->output().find("replay job " + job + " finished") != std::string::npos;
  }));
  // A running job that is cancelled says so: one event a second, cancelled after the first.
  WaitForMetrics(server->port(), [](const std::string& t) {
    return Has(t, R"(hookrelay_deliveries_total{destination="billing",outcome="failed"} 6)");
  });
  r = Send(server->port(), "POST", "/api/v1/replays", kToken,
           R"({"status":"failed","destination":"billing","rate":"1/s"})");
  ASSERT_EQ(r.status, 202) << r.body;
  const std::string slow_job = std::string(json::parse(r.body).at("id").as_string());
  auto wait_for_output = [&](const std::string& needle) {
    return test::WaitFor([&] { return server->output().find(needle) != std::string::npos; });
  };
  ASSERT_TRUE(wait_for_output("replay job " + slow_job + " started")) << server->output();
  ASSERT_EQ(Send(server->port(), "DELETE", "/api/v1/replays/" + slow_job, kToken).status, 200);
  EXPECT_TRUE(wait_for_output("replay job " + slow_job + " cancelled after ")) << server->output();

  ASSERT_EQ(server->Stop(), 0);
  const std::string out = server->output();
  EXPECT_NE(out.find("started on http://127.0.0.1:"), std::string::npos) << out;
  EXPECT_NE(out.find("breaker of billing opened until"), std::string::npos) << out;
  EXPECT_NE(out.find("to billing failed for good after attempt 2: "), std::string::npos) << out;
  EXPECT_NE(out.find("replay job " + job + " started"), std::string::npos) << out;
  EXPECT_NE(out.find("replay job " + job + " finished: 3 events replayed"), std::string::npos)
      << out;
  EXPECT_NE(out.find("SIGTERM received: shutting down"), std::string::npos) << out;
  EXPECT_NE(out.find(" info stopped"), std::string::npos) << out;
  for (const std::string& secret : {kToken, kVerifySecret, kSigningSecret}) {
    EXPECT_EQ(out.find(secret), std::string::npos) << "a secret was logged";
  }
}

// Issue 32.1: SIGUSR1 and SIGUSR2 are logged and ignored, SIGHUP (a terminal hang-up, `systemctl
// reload`) reloads the config (issue 29; integration/reload_test.cc) and the server goes on, and
// SIGQUIT drains and stops like SIGTERM; before, each of them killed serve at once with no log
// line.
TEST_F(ServeBinaryTest, ReloadSignalsAreLoggedAndIgnoredAndSigquitStopsCleanly) {
  auto server = Start();
  ASSERT_TRUE(server->ok());
  const std::vector<std::tuple<int, std::string, std::string>> handled = {
      {SIGHUP, "SIGHUP", "config reloaded from "},
      {SIGUSR1, "SIGUSR1", "SIGUSR1 received: ignored"},
      {SIGUSR2, "SIGUSR2", "SIGUSR2 received: ignored"}};
  for (const auto& [sig, name, expected] : handled) {
    const std::string line = expected;  // clang 14 cannot capture a structured binding
    ASSERT_EQ(::kill(server->pid(), sig), 0);
    ASSERT_TRUE(test::WaitFor([&] { return server->output().find(line) != std::string::npos; }))
        << server->output();
    EXPECT_EQ(Send(server->port(), "GET", "/healthz").status, 200) << "after " << name;
  }
  ASSERT_EQ(::kill(server->pid(), SIGQUIT), 0);
  ASSERT_TRUE(test::WaitFor([&] {
    return server->output().find(" info stopped") != std::string::npos;
  })) << server->output();
  EXPECT_EQ(server->Stop(), 0) << server->output();
  EXPECT_NE(server->output().find("SIGQUIT received: shutting down"), std::string::npos);
}

TEST_F(ServeBinaryTest, DueBacklogPerDestination) {
  sink_.SetDefault("/slow", SinkResponse::Hang());
  auto server = Start();
  ASSERT_TRUE(server->ok());
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(Send(server->port(), "POST", "/in/s2", "", R"({"n":1})").status, 202);
  }
  // One request hangs at the sink (max_concurrency 1): three are due and wait.
  std::string m = WaitForMetrics(server->port(), [](const std::string& t) {
    return Has(t, R"(hookrelay_destination_due_backlog{destination="slow"} 3)");
  });
  EXPECT_TRUE(Has(m, R"(hookrelay_destination_due_backlog{destination="slow"} 3)")) << m;
  EXPECT_TRUE(Has(m, R"(hookrelay_destination_due_backlog{destination="billing"} 0)")) << m;
  server->Kill();
}

// Issue 32.16: attempt latency per destination, in /metrics (a histogram labelled by destination,
// beside the global one) and as p50/p99 in the destination's API view.
TEST_F(ServeBinaryTest, AttemptLatencyPerDestination) {
  sink_.SetDefault("/hooks", SinkResponse::Status(200).WithDelay(300ms));
  auto server = Start();
  ASSERT_TRUE(server->ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(Send(server->port(), "POST", "/in/src", "", R"({"n":1})").status, 202);
  }
  const std::string count =
      R"(hookrelay_destination_attempt_duration_seconds_count{destination="billing"} 3)";
  std::string m =
      WaitForMetrics(server->port(), [&](const std::string& t) { return Has(t, count); });
  ASSERT_TRUE(Has(m, count)) << m;
  // Each took the sink's 300 ms at least: none is at or under 250 ms, all under +Inf.
  EXPECT_TRUE(Has(
      m,
      R"(hookrelay_destination_attempt_duration_seconds_bucket{destination="billing",le="0.25"} 0)"))
      << m;
  EXPECT_TRUE(Has(
      m,
      R"(hookrelay_destination_attempt_duration_seconds_bucket{destination="billing",le="+Inf"} 3)"))
      << m;
  EXPECT_NE(m.find(R"(hookrelay_destination_attempt_duration_seconds_sum{destination="billing"} )"),
            std::string::npos)
      << m;
  EXPECT_TRUE(
      Has(m, R"(hookrelay_destination_attempt_duration_seconds_count{destination="slow"} 0)"))
      << m;
  EXPECT_NE(m.find("# TYPE hookrelay_destination_attempt_duration_seconds histogram\n"),
            std::string::npos)
      << m;
  // The global histogram stays, unlabelled.
  EXPECT_TRUE(Has(m, "hookrelay_attempt_duration_seconds_count 3")) << m;
  EXPECT_TRUE(Has(m, R"(hookrelay_attempt_duration_seconds_bucket{le="0.25"} 0)")) << m;

  HttpResponse r = Send(server->port(), "GET", "/api/v1/destinations/billing", kToken);
  ASSERT_EQ(r.status, 200) << r.body;
  const json::object latency = json::parse(r.body).at("latency").as_object();
  EXPECT_EQ(latency.at("samples").as_int64(), 3) << r.body;
  const int64_t p50 = latency.at("p50_ms").as_int64();
  const int64_t p99 = latency.at("p99_ms").as_int64();
  EXPECT_GE(p50, 300) << r.body;
  EXPECT_GE(p99, p50) << r.body;
  EXPECT_LT(p99, 2000) << r.body;  // the attempt timeout
  // A destination with no attempt yet: no percentiles.
  r = Send(server->port(), "GET", "/api/v1/destinations/slow", kToken);
  ASSERT_EQ(r.status, 200) << r.body;
  const json::object none = json::parse(r.body).at("latency").as_object();
  EXPECT_EQ(none.at("samples").as_int64(), 0) << r.body;
  EXPECT_TRUE(none.at("p50_ms").is_null()) << r.body;
  EXPECT_TRUE(none.at("p99_ms").is_null()) << r.body;
}

// A destination's series exist while it is in the catalog, and go with it.
TEST_F(ServeBinaryTest, ADeletedDestinationsSeriesGoAway) {
  auto server = Start();
  ASSERT_TRUE(server->ok());
  HttpResponse r =
      Send(server->port(), "POST", "/api/v1/destinations", kToken,
           R"({"name":"temp","url":")" + sink_.url("/temp") + R"(","allow_private":true})");
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string series = R"(hookrelay_deliveries_total{destination="temp",outcome="failed"} 0)";
  std::string m =
      WaitForMetrics(server->port(), [&](const std::string& t) { return Has(t, series); });
  ASSERT_TRUE(Has(m, series)) << m;
  ASSERT_TRUE(
      Has(m, R"(hookrelay_destination_attempt_duration_seconds_count{destination="temp"} 0)"))
      << m;
  ASSERT_EQ(Send(server->port(), "DELETE", "/api/v1/destinations/temp", kToken).status, 200);
  m = WaitForMetrics(server->port(), [](const std::string& t) {
    return t.find(R"(destination="temp")") == std::string::npos;
  });
  EXPECT_EQ(m.find(R"(destination="temp")"), std::string::npos) << m;
}

// What a second server could change in the data directory: each file's inode, size and mtime,
// and the lock file's content (the holder's PID).
std::map<std::string, std::string> DirectoryState(const std::string& dir) {
  std::map<std::string, std::string> state;
  for (const auto& e : fs::directory_iterator(dir)) {
    struct stat st;
    if (::lstat(e.path().c_str(), &st) != 0) continue;
    state[e.path().filename().string()] =
        std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
        std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  }
  state["hookrelay.lock content"] = testing::ReadFile(dir + "/hookrelay.lock");
  return state;
}

// Issue 13: the data directory belongs to one process. A second serve on it exits 2 naming the
// holder's PID and the directory — before it binds its address (so the same address gives the
// same answer) and without touching the database; the kernel drops the lock when the holder
// dies, so after kill -9 the next serve starts.
TEST_F(ServeBinaryTest, ASecondServeOnALockedDataDirectoryIsRefusedWithTheHoldersPid) {
  auto first = Start();
  ASSERT_TRUE(first->ok());
  const std::string pid = std::to_string(first->pid());
  EXPECT_EQ(testing::ReadFile(data_dir() + "/hookrelay.lock"), pid + "\n");
  const auto before = DirectoryState(data_dir());
  for (const std::string& listen :
       {std::string("127.0.0.1:0"), "127.0.0.1:" + std::to_string(first->port())}) {
    auto r = RunProgram({HOOKRELAY_BINARY, "serve", "--listen", listen, "--data", data_dir()}, {},
                        30s, {{"HOOKRELAY_TOKEN", kToken}});
    EXPECT_EQ(r.exit_code, 2) << listen << ": " << r.out << r.err;
    EXPECT_NE(
        r.err.find("data directory " + data_dir() + " is in use by hookrelay process " + pid + " "),
        std::string::npos)
        << listen << ": " << r.err;
    EXPECT_EQ(r.err.find("cannot listen"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("listening on"), std::string::npos) << r.out;
  }
  EXPECT_EQ(DirectoryState(data_dir()), before) << "the refused server changed the directory";
  EXPECT_EQ(Send(first->port(), "GET", "/healthz").status, 200);

  first->Kill();
  auto next = Start();
  ASSERT_TRUE(next->ok()) << "a lock left by a killed server blocks the next start";
  EXPECT_EQ(testing::ReadFile(data_dir() + "/hookrelay.lock"), std::to_string(next->pid()) + "\n");
  EXPECT_EQ(Send(next->port(), "GET", "/api/v1/sources", kToken).status, 200);
}

// The store address: --store and [store] postgres_url take a PostgreSQL URL. A server that cannot
// be reached at start is exit 2 with a message that names it without the URL's password; --store
// takes only such a URL, and --data with the file's url keeps the PostgreSQL store.
TEST_F(ServeBinaryTest, AnUnreachablePostgresStoreIsRefusedPrecisely) {
  const std::map<std::string, std::string> env = {{"HOOKRELAY_TOKEN", kToken}};
  auto r = RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:0", "--data", data_dir(),
                       "--store", "postgresql://hr:s3cret-pw@127.0.0.1:1/hookrelay?sslmode=prefer"},
                      {}, 30s, env);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot open the store in postgresql://127.0.0.1:1/hookrelay: cannot "
                       "connect to PostgreSQL at postgresql://127.0.0.1:1/hookrelay"),
            std::string::npos)
      << r.err;
  EXPECT_EQ((r.out + r.err).find("s3cret-pw"), std::string::npos) << r.out << r.err;
  EXPECT_FALSE(fs::exists(data_dir() + "/hookrelay.db")) << "never the embedded store instead";

  r = RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:0", "--store", data_dir()}, {},
                 30s, env);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--store: must be a postgres:// or postgresql:// URL"), std::string::npos)
      << r.err;

  const std::string config_path = dir_.path() + "/pg.toml";
  testing::WriteFile(config_path, "[store]\npostgres_url = \"postgres://127.0.0.1:1/hr\"\n");
  r = RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:0", "--config", config_path},
                 {}, 30s, env);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot open the store in postgres://127.0.0.1:1/hr"), std::string::npos)
      << r.err;

  // --data names the node's directory but never turns the file's PostgreSQL store into the
  // embedded one (a user who configured PostgreSQL must not find the events in SQLite).
  testing::WriteFile(config_path, "[store]\nurl = \"postgres://127.0.0.1:1/hr\"\n");
  r = RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:0", "--config", config_path,
                  "--data", data_dir()},
                 {}, 30s, env);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot open the store in postgres://127.0.0.1:1/hr"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(data_dir() + "/hookrelay.db")) << "never the embedded store instead";
}

// serve --store postgres://…: events are stored in PostgreSQL (a private cluster) and delivered.
TEST_F(ServeBinaryTest, APostgresStoreIngestsAndDelivers) {
  std::string error;
  testing::PgCluster* cluster = testing::SharedPgCluster(&error);
  ASSERT_NE(cluster, nullptr) << error;
  const std::string url = cluster->CreateDatabase(&error);
  ASSERT_FALSE(url.empty()) << error;
  auto server = Start({{"HOOKRELAY_TOKEN", kToken}}, {"--store", url});
  ASSERT_TRUE(server->ok()) << server->output();
  // The start line says which store, not only the node's directory.
  EXPECT_NE(server->output().find("(store: postgres"), std::string::npos) << server->output();
  ASSERT_EQ(Send(server->port(), "POST", "/in/src", "", R"({"a":1})").status, 202);
  ASSERT_TRUE(sink_.WaitForRequests(1, 20s)) << server->output();
  EXPECT_FALSE(fs::exists(data_dir() + "/hookrelay.db")) << "not in the embedded store";
  const std::string db = url.substr(url.rfind('/') + 1);
  // The attempt is recorded just after the sink answered.
  EXPECT_TRUE(test::WaitFor([&] {
    return cluster
        ->Exec(db,
               "DO $$ BEGIN IF (SELECT count(*) FROM events) <> 1 OR (SELECT count(*)"
               " FROM deliveries WHERE status = 'delivered') <> 1 THEN"
               " RAISE EXCEPTION 'not stored and delivered'; END IF; END $$")
        .empty();
  }));
  EXPECT_EQ(server->Stop(), 0);
}

// PostgreSQL ends the server's connections (a restart, an administrator): the request that meets
// the lost connection is answered 503, never 202; the next ones are stored and delivered without
// restarting serve.
TEST_F(ServeBinaryTest, APostgresConnectionLostIs503ThenServeReconnects) {
  std::string error;
  testing::PgCluster* cluster = testing::SharedPgCluster(&error);
  ASSERT_NE(cluster, nullptr) << error;
  const std::string url = cluster->CreateDatabase(&error);
  ASSERT_FALSE(url.empty()) << error;
  const std::string db = url.substr(url.rfind('/') + 1);
  auto server = Start({{"HOOKRELAY_TOKEN", kToken}}, {"--store", url});
  ASSERT_TRUE(server->ok()) << server->output();
  ASSERT_EQ(Send(server->port(), "POST", "/in/src", "", R"({"n":1})").status, 202);
  ASSERT_TRUE(sink_.WaitForRequests(1, 20s));
  ASSERT_EQ(cluster->Exec(
                "postgres",
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = '" +
                    db + "'"),
            "");
  HttpResponse lost = Send(server->port(), "POST", "/in/src", "", R"({"n":2})");
  EXPECT_EQ(lost.status, 503) << "the append that met the lost connection is not acknowledged";
  // The sender is not told where the database is.
  EXPECT_EQ(lost.body.find("postgres"), std::string::npos) << lost.body;
  EXPECT_EQ(lost.body.find("127.0.0.1"), std::string::npos) << lost.body;
  ASSERT_EQ(Send(server->port(), "POST", "/in/src", "", R"({"n":3})").status, 202);
  ASSERT_TRUE(sink_.WaitForRequests(2, 20s)) << server->output();
  EXPECT_EQ(server->output().find(url.substr(0, url.find('@'))), std::string::npos);
  EXPECT_EQ(server->Stop(), 0);
}

// Issue 29: with admin_listen, the ingest listener serves /in/{source} and /healthz alone; every
// management path there is the same 404 as a path that does not exist (nothing says what the
// other listener has), and the management listener serves the rest but not /in/.
TEST_F(ServeBinaryTest, TheManagementPlaneListensApartFromIngest) {
  auto server = Start({{"HOOKRELAY_TOKEN", kToken}}, {"--admin-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server->ok());
  std::smatch m;
  const std::string out = server->stdout_output();
  ASSERT_TRUE(std::regex_search(
      out, m, std::regex(R"(Management \(API, dashboard, metrics\) on http://127\.0\.0\.1:(\d+))")))
      << out;
  const auto admin = static_cast<uint16_t>(std::stoi(m[1]));
  ASSERT_NE(admin, server->port());
  EXPECT_NE(out.find("Dashboard: http://127.0.0.1:" + std::string(m[1]) + "/ui/"),
            std::string::npos)
      << out;

  EXPECT_EQ(Send(server->port(), "POST", "/in/src", "", R"({"a":1})").status, 202);
  EXPECT_EQ(Send(server->port(), "GET", "/healthz").status, 200);
  EXPECT_EQ(Send(admin, "GET", "/healthz").status, 200);
  auto unknown = [](const HttpResponse& r, const std::string& path) {
    return r.status == 404 &&
           r.body == R"({"error":{"code":"not_found","message":"no such path: )" + path + "\"}}";
  };
  for (const std::string path : {"/api/v1/events", "/api/v1", "/api/v1/openapi.json", "/ui/",
                                 "/ui/js/app.js", "/metrics", "/readyz", "/"}) {
    const HttpResponse r = Send(server->port(), "GET", path, kToken);
    EXPECT_TRUE(unknown(r, path)) << path << ": " << r.status << " " << r.body;
    EXPECT_EQ(r.Header("Cache-Control"), "no-store") << path;
    EXPECT_LT(Send(admin, "GET", path, kToken).status, 400) << path << " on the management one";
  }
  EXPECT_TRUE(
      unknown(Send(server->port(), "POST", "/api/v1/replays", kToken, "{}"), "/api/v1/replays"));
  EXPECT_TRUE(unknown(Send(admin, "POST", "/in/src", "", R"({"a":1})"), "/in/src"));
  EXPECT_EQ(Send(admin, "GET", "/api/v1/events", kToken).status, 200);
  EXPECT_EQ(server->Stop(), 0);
}

// An admin_listen that cannot be bound is refused before anything is stored; an empty one too.
TEST_F(ServeBinaryTest, AnAdminListenerThatCannotBeBoundIsRefused) {
  HeldPort held;
  testing::RunResult r =
      RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:0", "--admin-listen",
                  "127.0.0.1:" + std::to_string(held.port()), "--data", data_dir()},
                 {}, 30s, {{"HOOKRELAY_TOKEN", kToken}});
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("admin_listen: "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(data_dir() + "/hookrelay.db"));
  r = RunProgram({HOOKRELAY_BINARY, "serve", "--admin-listen", "", "--data", data_dir()}, {}, 30s,
                 {{"HOOKRELAY_TOKEN", kToken}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--admin-listen: is empty"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hookrelay
