// Secrets encrypted at rest (issue 28, docs/secrets.md), on the real `hookrelay serve` binary:
// a wrong master key refused before anything is decrypted, a store written in plain text (as
// before encryption) encrypted in place without losing an event, a master key rotated while
// events flow and deliveries are signed throughout, and on PostgreSQL no secret in a dump and a
// node with another key refused. (That no secret is in the SQLite file or its WAL, with every kind
// of secret, is checked by the log-secrets scenario, log_secrets_test.cc.)

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "common/crypto.h"
#include "common/standard_webhooks.h"
#include "conformance/store_test_util.h"
#include "store/sqlite/open.h"
#include "support/integration_test.h"
#include "support/pg_cluster.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::HookrelayServer;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::RunProgram;
using testing::RunResult;

std::string NewKey() { return Base64Encode(RandomBytes(32)); }
std::string NewWhsec() { return "whsec_" + Base64Encode(RandomBytes(24)); }

// Every file under `dir`, concatenated (the SQLite file, its WAL and shared memory, the rest).
std::string AllBytes(const std::string& dir) {
  std::string all;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) all += testing::ReadFile(e.path().string());
  }
  return all;
}

// Whether `r` carries a Standard Webhooks signature made with `secret`.
bool SignedWith(const testing::SinkRequest& r, const std::string& secret) {
  auto key = standard_webhooks::DecodeSecret(secret);
  const auto id = r.Header("webhook-id");
  const auto ts = r.Header("webhook-timestamp");
  const auto sig = r.Header("webhook-signature");
  if (!key.ok() || !id || !ts || !sig) return false;
  const std::string want = "v1," + standard_webhooks::Signature(*key, *id, *ts, r.body);
  return (" " + *sig + " ").find(" " + want + " ") != std::string::npos;
}

class SecretsAtRestTest : public testing::IntegrationTest {
 protected:
  std::string Config(const std::string& secret) {
    return testing::Config()
        .Set("delivery.poll_interval", "50ms")
        .Source("src")
        .Destination("d", sink_.url("/hooks"), {{"signing_secret", secret}})
        .Route("src", "d");
  }
  RunResult Serve(const std::map<std::string, std::string>& env) {
    std::map<std::string, std::string> all = env;
    all.emplace("HOOKRELAY_ADMIN_TOKEN", admin_token_);
    return RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:0", "--data", data_dir()},
                      {}, seconds(30), all);
  }
  HttpResponse Ingest(const std::string& body) {
    HttpConnection conn(server_->port());
    return conn.Send("POST", "/in/src", {{"Content-Type", "application/json"}}, body);
  }
};

TEST_F(SecretsAtRestTest, AWrongMasterKeyIsRefusedBeforeAnythingIsDecrypted) {
  const std::string key = NewKey();
  const std::string secret = NewWhsec();
  ASSERT_NO_FATAL_FAILURE(StartServer("", {}, {{"HOOKRELAY_MASTER_KEY", key}}));
  EXPECT_EQ(Api("POST", "/api/v1/sources", R"({"name": "src"})").status, 201);
  EXPECT_EQ(Api("POST", "/api/v1/destinations",
                json::serialize(json::object{{"name", "d"},
                                             {"url", sink_.url("/hooks")},
                                             {"allow_private", true},
                                             {"signing_secret", secret}}))
                .status,
            201);
  EXPECT_EQ(Api("POST", "/api/v1/routes", R"({"source": "src", "destination": "d"})").status, 201);
  StopServer();
  EXPECT_FALSE(std::filesystem::exists(data_dir() + "/master.key"))
      << "a key from the environment is not written anywhere";

  RunResult wrong = Serve({{"HOOKRELAY_MASTER_KEY", NewKey()}});
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out << wrong.err;
  EXPECT_NE(wrong.err.find("master key does not match the store"), std::string::npos) << wrong.err;
  RunResult none = Serve({});  // neither given: a key would be made, and it cannot match either
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_NE(none.err.find("master key does not match the store"), std::string::npos) << none.err;
  std::filesystem::remove(data_dir() + "/master.key");
  for (const std::string bad : {"c2hvcnQ=", "not base64!", ""}) {
    RunResult r = Serve({{"HOOKRELAY_MASTER_KEY", bad}});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("HOOKRELAY_MASTER_KEY: "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(key), std::string::npos);
  }

  // The right key: the secret decrypts and signs.
  ASSERT_NO_FATAL_FAILURE(StartServer("", {}, {{"HOOKRELAY_MASTER_KEY", key}}));
  ASSERT_EQ(Ingest(R"({"n": 1})").status, 202);
  ASSERT_TRUE(sink_.WaitForRequests(1, milliseconds(10000)));
  EXPECT_TRUE(SignedWith(sink_.Requests()[0], secret));
}

TEST_F(SecretsAtRestTest, AStoreInPlainTextIsEncryptedInPlaceLosingNoEvent) {
  const std::string secret = NewWhsec();
  // The store as a version before encryption left it: the catalog's specs in plain text, and
  // an event whose delivery is still due.
  {
    auto s = store::OpenSqliteStore({.dir = data_dir()}, SystemClock::Instance());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store::CatalogChange c;
    c.put.push_back({store::CatalogKind::kSource, "src", R"({"name":"src"})", "api"});
    c.put.push_back({store::CatalogKind::kDestination, "d",
                     json::serialize(json::object{{"name", "d"},
                                                  {"url", sink_.url("/hooks")},
                                                  {"allow_private", true},
                                                  {"signing_secret", secret}}),
                     "api"});
    c.put.push_back({store::CatalogKind::kRoute, "src:d",
                     R"({"id":"src:d","source":"src","destination":"d"})", "api"});
    ASSERT_TRUE((*s)->ApplyCatalogChange(c).ok());
    SeededRandom random(1);
    auto e = (*s)->AppendEventSync(store::test::MakeEvent(SystemClock::Instance(), random,
                                                          R"({"before": true})", {"d"}, "src"));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
  }
  ASSERT_NE(AllBytes(data_dir()).find(secret), std::string::npos)
      << "the test must be able to fail";

  ASSERT_NO_FATAL_FAILURE(StartServer(""));
  EXPECT_NE(server_->stdout_output().find("made a master key"), std::string::npos)
      << server_->stdout_output();
  struct stat st {};
  ASSERT_EQ(::stat((data_dir() + "/master.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The event stored before is delivered, signed with the secret read back from the store.
  ASSERT_TRUE(sink_.WaitForRequests(1, milliseconds(10000))) << server_->output();
  EXPECT_EQ(sink_.Requests()[0].body, R"({"before": true})");
  EXPECT_TRUE(SignedWith(sink_.Requests()[0], secret));
  ASSERT_EQ(Ingest(R"({"after": true})").status, 202);
  ASSERT_TRUE(sink_.WaitForRequests(2, milliseconds(10000)));
  EXPECT_TRUE(SignedWith(sink_.Requests()[1], secret));
  EXPECT_NE(server_->stderr_output().find("encrypted the 3 catalog objects"), std::string::npos)
      << server_->stderr_output();
  EXPECT_EQ(AllBytes(data_dir()).find(secret), std::string::npos) << "while it runs";
  StopServer();
  const std::string bytes = AllBytes(data_dir());
  EXPECT_EQ(bytes.find(secret), std::string::npos) << "after it stopped";
  EXPECT_EQ(bytes.find(secret.substr(6)), std::string::npos) << "its base64 part";
  EXPECT_NE(bytes.find("enc:v1:"), std::string::npos);
  // Started again, nothing is left to encrypt.
  ASSERT_NO_FATAL_FAILURE(StartServer(""));
  EXPECT_EQ(server_->stderr_output().find("encrypted the"), std::string::npos);
}

// The master key rotated while events arrive: added (both keys open the store), the node
// restarted with the new key, the old one retired; every event is delivered, and every delivery
// is signed with the destination's secret throughout. The old key no longer opens the store.
TEST_F(SecretsAtRestTest, RotatingTheMasterKeyUnderLoadKeepsEveryDeliverySigned) {
  const std::string old_key = NewKey();
  const std::string new_key = NewKey();
  const std::string secret = NewWhsec();
  ASSERT_NO_FATAL_FAILURE(StartServer(Config(secret), {}, {{"HOOKRELAY_MASTER_KEY", old_key}}));
  std::atomic<bool> stop{false};
  std::atomic<int> accepted{0};
  std::atomic<uint16_t> port{server_->port()};
  std::thread load([&] {
    for (int i = 0; !stop.load(); ++i) {
      try {
        HttpConnection conn(port.load(), "127.0.0.1", milliseconds(2000));
        HttpResponse r = conn.Send("POST", "/in/src", {{"Content-Type", "application/json"}},
                                   "{\"n\": " + std::to_string(i) + "}");
        if (r.status == 202) ++accepted;
      } catch (const std::exception&) {
        // Refused while the node restarts: not acknowledged, so not expected at the sink.
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
  });
  auto at_least = [&](int n) { return test::WaitFor([&] { return accepted.load() >= n; }); };

  ASSERT_TRUE(at_least(50));
  HttpResponse r = Api("POST", "/api/v1/keys", R"({"master_key": ")" + new_key + "\"}");
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string new_id(json::parse(r.body).at("id").as_string());
  const json::value keys = json::parse(Api("GET", "/api/v1/keys").body);
  ASSERT_EQ(keys.at("items").as_array().size(), 2u) << keys;
  const std::string old_id(keys.at("items").at(0).at("id").as_string());
  EXPECT_TRUE(keys.at("items").at(0).at("this_node").as_bool());
  EXPECT_EQ(Api("DELETE", "/api/v1/keys/" + old_id).status, 409) << "this node runs with it";
  EXPECT_EQ(Api("POST", "/api/v1/keys", R"({"master_key": ")" + new_key + "\"}").status, 200);
  EXPECT_EQ(Api("POST", "/api/v1/keys", R"({"master_key": "c2hvcnQ="})").status, 400);

  ASSERT_TRUE(at_least(accepted.load() + 50));
  StopServer();
  ASSERT_NO_FATAL_FAILURE(StartServer(Config(secret), {}, {{"HOOKRELAY_MASTER_KEY", new_key}}));
  port = server_->port();
  ASSERT_TRUE(at_least(accepted.load() + 50));
  r = Api("DELETE", "/api/v1/keys/" + old_id);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Api("DELETE", "/api/v1/keys/" + new_id).status, 409) << "never the last";
  ASSERT_TRUE(at_least(accepted.load() + 50));
  stop = true;
  load.join();

  const size_t want = static_cast<size_t>(accepted.load());
  ASSERT_TRUE(sink_.WaitForRequests(want, milliseconds(30000)))
      << sink_.RequestCount() << "/" << want;
  size_t signed_ok = 0;
  for (const testing::SinkRequest& req : sink_.Requests()) signed_ok += SignedWith(req, secret);
  EXPECT_EQ(signed_ok, sink_.RequestCount());
  const std::string audit = Api("GET", "/api/v1/audit").body;
  EXPECT_NE(audit.find(R"("action":"key_retire","target":")" + old_id), std::string::npos) << audit;
  EXPECT_EQ(audit.find(new_key), std::string::npos);
  StopServer();
  RunResult old_again = Serve({{"HOOKRELAY_MASTER_KEY", old_key}});
  EXPECT_EQ(old_again.exit_code, 2) << old_again.err;
  EXPECT_NE(old_again.err.find("master key does not match the store"), std::string::npos);
}

// PostgreSQL: a dump of the database holds no secret; a node started with another master key is
// refused while the first runs on.
TEST_F(SecretsAtRestTest, OnPostgresNoSecretIsInADumpAndAnotherKeyIsRefused) {
  std::string error;
  testing::PgCluster* pg = testing::SharedPgCluster(&error);
  ASSERT_NE(pg, nullptr) << error;
  const std::string url = pg->CreateDatabase(&error);
  ASSERT_FALSE(url.empty()) << error;
  const std::string secret = NewWhsec();
  const std::string verify_secret = RandomHexToken(20);
  const std::string config =
      testing::Config()
          .Set("delivery.poll_interval", "50ms")
          .Source("gh", {{"verify",
                          testing::TomlInline({{"scheme", "github"},
                                               {"secrets", testing::TomlArray({verify_secret})}})}})
          .Destination("d", sink_.url("/hooks"), {{"signing_secret", secret}})
          .Route("gh", "d");
  ASSERT_NO_FATAL_FAILURE(StartServer(config, {"--store", url}));
  const std::string body = R"({"pg": 1})";
  HttpConnection conn(server_->port());
  HttpResponse r = conn.Send(
      "POST", "/in/gh",
      {{"X-Hub-Signature-256", "sha256=" + HexEncode(HmacSha256(verify_secret, body))}}, body);
  ASSERT_EQ(r.status, 202) << r.body;
  ASSERT_TRUE(sink_.WaitForRequests(1, milliseconds(10000)));
  EXPECT_TRUE(SignedWith(sink_.Requests()[0], secret));

  RunResult dump = RunProgram({pg->bin_dir() + "/pg_dump", "--no-owner", url}, {}, seconds(60));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  ASSERT_NE(dump.out.find("data_keys"), std::string::npos) << "a dump of the right database";
  for (const std::string& s : {secret, secret.substr(6), verify_secret}) {
    EXPECT_EQ(dump.out.find(s), std::string::npos) << "a secret in the dump";
  }
  EXPECT_NE(dump.out.find("enc:v1:"), std::string::npos);

  // Another node, another key (its own data directory would make one): refused, and the first
  // one runs on.
  RunResult other = RunProgram({HOOKRELAY_BINARY, "serve", "--listen", "127.0.0.1:0", "--data",
                                dir_.path() + "/other", "--store", url},
                               {}, seconds(30), {{"HOOKRELAY_ADMIN_TOKEN", admin_token_}});
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_NE(other.err.find("master key does not match the store"), std::string::npos) << other.err;
  EXPECT_EQ(Api("GET", "/api/v1/destinations/d").status, 200);
}

}  // namespace
}  // namespace hookrelay
