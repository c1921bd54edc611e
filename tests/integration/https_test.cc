// The listeners over TLS and behind a trusted reverse proxy (issue 29), on the real binary: curl
// and openssl s_client against `[server] tls`, a certificate renewed under the same file names
// and read again on SIGHUP without dropping an open connection, unusable files refused at start
// naming them, webhooks ingested and delivered over HTTPS, and `trusted_proxies` making the
// per-client auth throttle follow X-Forwarded-For from the proxy only.

#include <signal.h>

#include <filesystem>
#include <fstream>

#include "support/integration_test.h"
#include "support/test_pki.h"
#include "support/tls_client.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::RunProgram;
using testing::RunResult;
using testing::TestPki;
using testing::TlsClientOptions;
using testing::TlsConnection;

size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class HttpsTest : public testing::IntegrationTest {
 protected:
  // The certificate serve is started with, under fixed names in the config's directory (a
  // relative path in the config is relative to it).
  void Install(const TestPki::Issued& issued) {
    fs::copy_file(issued.chain_file, dir_.path() + "/cert.pem",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(issued.key_file, dir_.path() + "/key.pem", fs::copy_options::overwrite_existing);
    fs::permissions(dir_.path() + "/key.pem", fs::perms::owner_read | fs::perms::owner_write);
  }
  testing::Config WithTls() {
    return testing::Config()
        .Source("src")
        .Destination("d", sink_.url("/hooks"))
        .Route("src", "d")
        .Set("server.tls", testing::TomlInline({{"cert", testing::TomlValue("cert.pem")},
                                                {"key", testing::TomlValue("key.pem")}}));
  }
  RunResult Curl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/curl", "-sS",          "--max-time", "10",
                                     "--cacert",      ca_.cert_file()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, {}, seconds(20));
  }
  std::string Https(const std::string& path) {
    return "https://127.0.0.1:" + std::to_string(server_->port()) + path;
  }

  TestPki ca_{"hookrelay https test CA"};
};

TEST_F(HttpsTest, IngestsAndServesTheApiOverTlsAndRefusesOldProtocols) {
  Install(ca_.Issue("first"));
  StartServer(WithTls());
  EXPECT_EQ(server_->url().rfind("https://127.0.0.1:", 0), 0u) << server_->output();
  RunResult health =
      Curl({"-o", "/dev/null", "-w", "%{http_code} %{http_version}", Https("/healthz")});
  EXPECT_EQ(health.out, "200 1.1") << health.err;
  RunResult ingest =
      Curl({"-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/json",
            "--data", R"({"over":"tls"})", Https("/in/src")});
  EXPECT_EQ(ingest.out, "202") << ingest.err;
  ASSERT_TRUE(test::WaitFor([&] { return sink_.RequestCount() == 1; }));
  EXPECT_EQ(sink_.Requests()[0].body, R"({"over":"tls"})");
  RunResult api = Curl({"-o", "/dev/null", "-w", "%{http_code}", "-H",
                        "Authorization: Bearer " + admin_token_, Https("/api/v1/events")});
  EXPECT_EQ(api.out, "200") << api.err;
  // Plain HTTP to the HTTPS port gets no answer; TLS 1.0 is refused; a name the certificate
  // does not have is refused by curl.
  RunResult plain = RunProgram({"/usr/bin/curl", "-sS", "--max-time", "5",
                                "http://127.0.0.1:" + std::to_string(server_->port()) + "/healthz"},
                               {}, seconds(10));
  EXPECT_NE(plain.exit_code, 0) << plain.out;
  RunResult tls10 =
      testing::RunOpenssl({"s_client", "-connect", "127.0.0.1:" + std::to_string(server_->port()),
                           "-tls1", "-cipher", "DEFAULT@SECLEVEL=0"});
  EXPECT_NE(tls10.exit_code, 0) << tls10.out;
  RunResult wrong_name =
      Curl({"--resolve", "relay.example.com:" + std::to_string(server_->port()) + ":127.0.0.1",
            "https://relay.example.com:" + std::to_string(server_->port()) + "/healthz"});
  EXPECT_TRUE(wrong_name.exit_code == 60 || wrong_name.exit_code == 51) << wrong_name.exit_code;
  const std::string metrics =
      Curl({"-H", "Authorization: Bearer " + admin_token_, Https("/metrics")}).out;
  EXPECT_EQ(metrics.find("hookrelay_http_tls_handshake_failures_total 0\n"), std::string::npos)
      << "the refused handshakes are counted";
  EXPECT_NE(metrics.find("hookrelay_http_tls_handshake_failures_total "), std::string::npos)
      << metrics;
  StopServer();
}

TEST_F(HttpsTest, ARenewedCertificateIsReadOnSighupAndOpenConnectionsStay) {
  Install(ca_.Issue("first", {.common_name = "first"}));
  StartServer(WithTls());
  TlsClientOptions trust;
  trust.ca_file = ca_.cert_file();
  TlsConnection open(server_->port(), trust);
  ASSERT_TRUE(open.handshake_ok()) << open.handshake_error();
  EXPECT_EQ(open.peer_common_name(), "first");
  EXPECT_EQ(open.Send("GET", "/healthz").status, 200);

  // Renewed in place, then SIGHUP.
  Install(ca_.Issue("second", {.common_name = "second"}));
  ASSERT_EQ(::kill(server_->pid(), SIGHUP), 0);
  ASSERT_TRUE(test::WaitFor([&] {
    return server_->output().find("TLS certificate and key of https://127.0.0.1:") !=
           std::string::npos;
  })) << server_->output();
  TlsConnection renewed(server_->port(), trust);
  ASSERT_TRUE(renewed.handshake_ok()) << renewed.handshake_error();
  EXPECT_EQ(renewed.peer_common_name(), "second");
  EXPECT_EQ(open.Send("GET", "/healthz").status, 200) << "the open connection was kept";

  // A broken renewal: the reload is refused as a whole, the current certificate stays.
  std::ofstream(dir_.path() + "/key.pem", std::ios::trunc) << "not a key\n";
  ASSERT_EQ(::kill(server_->pid(), SIGHUP), 0);
  ASSERT_TRUE(test::WaitFor([&] {
    return server_->output().find("config reload refused") != std::string::npos;
  })) << server_->output();
  EXPECT_NE(server_->output().find("server.tls.key " + dir_.path() + "/key.pem"), std::string::npos)
      << server_->output();
  TlsConnection after(server_->port(), trust);
  ASSERT_TRUE(after.handshake_ok()) << after.handshake_error();
  EXPECT_EQ(after.peer_common_name(), "second");
  StopServer();
}

TEST_F(HttpsTest, UnusableFilesStopTheStartNamingThem) {
  Install(ca_.Issue("first"));
  fs::remove(dir_.path() + "/key.pem");
  std::ofstream(data_dir() + ".toml") << std::string(WithTls());
  RunResult start = RunProgram({HOOKRELAY_BINARY, "serve", "--config", data_dir() + ".toml",
                                "--data", data_dir(), "--listen", "127.0.0.1:0"},
                               {}, seconds(30));
  EXPECT_EQ(start.exit_code, 2) << start.out << start.err;
  EXPECT_NE(start.err.find("server.tls.key " + dir_.path() + "/key.pem: cannot read"),
            std::string::npos)
      << start.err;
  EXPECT_FALSE(fs::exists(data_dir() + "/hookrelay.db")) << "nothing was created";
  RunResult check =
      RunProgram({HOOKRELAY_BINARY, "check-config", data_dir() + ".toml"}, {}, seconds(30));
  EXPECT_EQ(check.exit_code, 2);
  EXPECT_NE(check.err.find("server.tls.key " + dir_.path() + "/key.pem: cannot read"),
            std::string::npos)
      << check.err;
}

// Wrong tokens block the address they come from (app/auth_throttle.h). Behind a trusted proxy
// that address is the forwarded client's: one client's mistakes do not block the others behind
// the same proxy. From an address that is not a trusted proxy, X-Forwarded-For is ignored.
TEST_F(HttpsTest, TrustedProxiesMakeTheThrottleFollowTheForwardedClient) {
  auto wrong = [&](const std::string& forwarded_for) {
    HttpConnection conn(server_->port());
    return conn
        .Send("GET", "/api/v1/events",
              {{"Authorization", "Bearer wrong-token"}, {"X-Forwarded-For", forwarded_for}})
        .status;
  };
  auto right = [&](const std::string& forwarded_for) {
    HttpConnection conn(server_->port());
    return conn
        .Send("GET", "/api/v1/events",
              {{"Authorization", "Bearer " + admin_token_}, {"X-Forwarded-For", forwarded_for}})
        .status;
  };
  StartServer(testing::Config().Set("server.trusted_proxies",
                                    testing::TomlValue::Raw(R"(["127.0.0.1/32"])")));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(wrong("198.51.100.7"), 401);
  EXPECT_EQ(wrong("198.51.100.7"), 429) << "the forwarded client is blocked";
  EXPECT_EQ(right("198.51.100.8"), 200) << "another client behind the same proxy is not";
  EXPECT_NE(server_->output().find("198.51.100.7"), std::string::npos)
      << "the log names the forwarded client: " << server_->output();
  // A forged left part does not help: the right-most untrusted address counts.
  EXPECT_EQ(wrong("203.0.113.1, 198.51.100.7"), 429);
  StopServer();

  // Not trusted: every request is 127.0.0.1's, whatever it forwards.
  fs::remove_all(data_dir());
  StartServer(testing::Config());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(wrong("198.51.100." + std::to_string(i)), 401);
  EXPECT_EQ(wrong("198.51.100.99"), 429);
  EXPECT_EQ(Occurrences(server_->output(), "198.51.100."), 0u) << server_->output();
  StopServer();
}

}  // namespace
}  // namespace hookrelay
