// The HTTP server over TLS (ServerOptions::tls), tested with real clients: curl, `openssl
// s_client`, and an OpenSSL client (support/tls_client.h). Certificates are made at test time
// with the openssl command-line tool (support/test_pki.h).

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http/server.h"
#include "http/tls_context.h"
#include "support/http_client.h"
#include "support/log_capture.h"
#include "support/process.h"
#include "support/test_pki.h"
#include "support/tls_client.h"
#include "support/wait.h"

namespace hookrelay::http {
namespace {

using hookrelay::testing::FindProgram;
using hookrelay::testing::HttpResponse;
using hookrelay::testing::LogCapture;
using hookrelay::testing::RawConnection;
using hookrelay::testing::ReadFile;
using hookrelay::testing::RunOpenssl;
using hookrelay::testing::RunProgram;
using hookrelay::testing::RunResult;
using hookrelay::testing::SendRaw;
using hookrelay::testing::StatusOf;
using hookrelay::testing::TempDir;
using hookrelay::testing::TestPki;
using hookrelay::testing::TlsClientOptions;
using hookrelay::testing::TlsConnection;
using hookrelay::testing::WriteFile;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Answers every request with its path as the body; while `hold` is set, keeps the Responders
// instead (answered by ReleaseHeld or at destruction, as a 500).
class PathHandler : public Handler {
 public:
  HeadDecision OnHead(const RequestHead&) override { return {}; }
  void OnRequest(Request request, Responder respond) override {
    requests.fetch_add(1);
    if (hold.load()) {
      std::lock_guard<std::mutex> lock(mu_);
      held_.push_back(std::move(respond));
      return;
    }
    Response r;
    r.content_type = "text/plain";
    r.body = request.path;
    respond(std::move(r));
  }
  size_t held() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_.size();
  }

  std::atomic<bool> hold{false};
  std::atomic<int> requests{0};

 private:
  std::mutex mu_;
  std::vector<Responder> held_;
};

class ServerTlsTest : public ::testing::Test {
 protected:
  ServerOptions Options(const TestPki::Issued& cert) const {
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.threads = 2;
    o.tls = TlsFiles{cert.chain_file, cert.key_file};
    return o;
  }
  ServerOptions Options() const { return Options(cert_); }
  void StartServer(const ServerOptions& options) {
    auto started = Server::Start(options, handler_);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server_ = std::move(started).value();
  }
  uint16_t port() const { return server_->port(); }
  std::string Url(const std::string& host, const std::string& path) const {
    return "https://" + host + ":" + std::to_string(port()) + path;
  }
  TlsClientOptions Trusting(const TestPki& ca) const {
    TlsClientOptions o;
    o.ca_file = ca.cert_file();
    return o;
  }

  // curl, ignoring ~/.curlrc and any proxy; -w output on stdout.
  static RunResult Curl(const std::vector<std::string>& args) {
    std::vector<std::string> argv{FindProgram("curl"), "-q", "-sS", "--noproxy", "*",
                                  "--max-time",        "20"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, {}, seconds(30));
  }
  // `openssl s_client` at security level 0 (so the client itself would accept old protocols and
  // weak suites): what it gets is what the server allows. Ends when its empty stdin does.
  RunResult SClient(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{
        "s_client", "-connect",      "127.0.0.1:" + std::to_string(port()),
        "-CAfile",  ca_.cert_file(), "-verify_return_error"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunOpenssl(argv);
  }

  TestPki ca_;
  TestPki::Issued cert_ = ca_.Issue("server");
  PathHandler handler_;  // outlives server_
  std::unique_ptr<Server> server_;
};

// 1. curl over HTTPS, with keep-alive: the second request goes on the first one's connection.
TEST_F(ServerTlsTest, CurlGetsTheAnswerAndReusesTheConnection) {
  StartServer(Options());
  EXPECT_EQ(server_->url(), "https://127.0.0.1:" + std::to_string(port()));
  RunResult r =
      Curl({"--cacert", ca_.cert_file(), "-w", " %{http_code} %{num_connects} %{http_version}\n",
            Url("127.0.0.1", "/a"), Url("127.0.0.1", "/b")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "/a 200 1 1.1\n/b 200 0 1.1\n");  // /b: no new connection

  // A client offering HTTP/2 first gets HTTP/1.1.
  RunResult h2 = Curl({"--cacert", ca_.cert_file(), "--http2", "-w", " %{http_version}\n",
                       Url("localhost", "/h2")});
  ASSERT_EQ(h2.exit_code, 0) << h2.err;
  EXPECT_EQ(h2.out, "/h2 1.1\n");
  EXPECT_EQ(server_->stats().tls_handshake_failures.load(), 0u);
}

TEST_F(ServerTlsTest, KeepAliveCarriesSeveralRequestsOverOneTlsConnection) {
  StartServer(Options());
  TlsConnection c(port(), Trusting(ca_));
  ASSERT_TRUE(c.handshake_ok()) << c.handshake_error();
  for (const char* path : {"/one", "/two", "/three"}) {
    HttpResponse r = c.Send("POST", path, {}, std::string(20000, 'x'));  // more than a record
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, path);
    EXPECT_TRUE(r.keep_alive);
  }
  EXPECT_EQ(handler_.requests.load(), 3);
}

TEST_F(ServerTlsTest, AlpnSelectsHttp11OrNothingButNeverH2) {
  StartServer(Options());
  TlsClientOptions both = Trusting(ca_);
  both.alpn = {"h2", "http/1.1"};
  TlsConnection a(port(), both);
  ASSERT_TRUE(a.handshake_ok()) << a.handshake_error();
  EXPECT_EQ(a.alpn(), "http/1.1");

  TlsClientOptions h2_only = Trusting(ca_);
  h2_only.alpn = {"h2"};
  TlsConnection b(port(), h2_only);
  ASSERT_TRUE(b.handshake_ok()) << b.handshake_error();
  EXPECT_EQ(b.alpn(), "");
  EXPECT_EQ(b.Send("GET", "/still-http1").body, "/still-http1");
}

// 2. A certificate for another name: curl refuses it (and accepts it under that name).
TEST_F(ServerTlsTest, CurlRefusesACertificateForAnotherName) {
  TestPki::Issued other =
      ca_.Issue("other", {.common_name = "other.example", .san = "DNS:other.example"});
  StartServer(Options(other));
  RunResult wrong = Curl({"--cacert", ca_.cert_file(), Url("localhost", "/")});
  EXPECT_TRUE(wrong.exit_code == 60 || wrong.exit_code == 51) << wrong.exit_code << wrong.err;
  EXPECT_TRUE(Contains(wrong.err, "localhost")) << wrong.err;
  EXPECT_EQ(wrong.out, "");

  RunResult right = Curl({"--cacert", ca_.cert_file(), "--resolve",
                          "other.example:" + std::to_string(port()) + ":127.0.0.1",
                          Url("other.example", "/right")});
  EXPECT_EQ(right.exit_code, 0) << right.err;
  EXPECT_EQ(right.out, "/right");
}

// 3. An expired certificate: served (start does not refuse it), and refused by clients.
TEST_F(ServerTlsTest, ClientsRefuseAnExpiredCertificate) {
  TestPki::Issued expired = ca_.Issue("expired", {.expired = true});
  StartServer(Options(expired));
  RunResult r = Curl({"--cacert", ca_.cert_file(), Url("127.0.0.1", "/")});
  EXPECT_EQ(r.exit_code, 60) << r.err;
  EXPECT_TRUE(Contains(r.err, "expired")) << r.err;

  TlsConnection c(port(), Trusting(ca_));
  EXPECT_FALSE(c.handshake_ok());
  EXPECT_TRUE(Contains(c.handshake_error(), "certificate has expired")) << c.handshake_error();
  // The client's alert ends the server's handshake too.
  EXPECT_TRUE(test::WaitFor([&] { return server_->stats().tls_handshake_failures.load() == 2; }));
}

// 4. TLS 1.0 and 1.1 are refused, 1.2 and 1.3 served; TLS 1.2 only with Mozilla's intermediate
// suites. An RSA certificate, so that RSA key exchange and CBC suites would be possible if the
// server allowed them.
TEST_F(ServerTlsTest, OnlyTls12And13WithStrongCiphers) {
  TestPki::Issued rsa = ca_.Issue("rsa", {.rsa = true});
  StartServer(Options(rsa));
  for (const char* old : {"-tls1", "-tls1_1"}) {
    RunResult r = SClient({old, "-cipher", "DEFAULT@SECLEVEL=0"});
    EXPECT_NE(r.exit_code, 0) << old << "\n" << r.out << r.err;
    EXPECT_TRUE(Contains(r.out, "Cipher is (NONE)")) << old << "\n" << r.out;
    EXPECT_TRUE(Contains(r.err, "alert protocol version")) << old << "\n" << r.err;
  }
  RunResult v12 = SClient({"-tls1_2", "-cipher", "DEFAULT@SECLEVEL=0"});
  EXPECT_EQ(v12.exit_code, 0) << v12.out << v12.err;
  EXPECT_TRUE(Contains(v12.out, "New, TLSv1.2, Cipher is ECDHE-RSA-")) << v12.out;
  EXPECT_TRUE(Contains(v12.out, "Verify return code: 0 (ok)")) << v12.out;
  RunResult v13 = SClient({"-tls1_3"});
  EXPECT_EQ(v13.exit_code, 0) << v13.out << v13.err;
  EXPECT_TRUE(Contains(v13.out, "New, TLSv1.3, Cipher is TLS_")) << v13.out;

  for (const char* weak : {"AES128-SHA", "AES256-SHA256", "ECDHE-RSA-AES128-SHA",
                           "DHE-RSA-AES128-SHA", "ECDHE-RSA-AES256-SHA384"}) {
    RunResult r = SClient({"-tls1_2", "-cipher", std::string(weak) + "@SECLEVEL=0"});
    EXPECT_NE(r.exit_code, 0) << weak << "\n" << r.out << r.err;
  }
  RunResult dhe = SClient({"-tls1_2", "-cipher", "DHE-RSA-AES128-GCM-SHA256"});
  EXPECT_EQ(dhe.exit_code, 0) << dhe.out << dhe.err;  // the DHE suites have their groups

  // The same with the library client: each refused handshake is counted.
  const uint64_t before = server_->stats().tls_handshake_failures.load();
  TlsClientOptions tls11 = Trusting(ca_);
  tls11.max_version = TLS1_1_VERSION;
  TlsConnection old(port(), tls11);
  EXPECT_FALSE(old.handshake_ok());
  EXPECT_TRUE(
      test::WaitFor([&] { return server_->stats().tls_handshake_failures.load() == before + 1; }));
  TlsClientOptions tls12 = Trusting(ca_);
  tls12.max_version = TLS1_2_VERSION;
  TlsConnection good(port(), tls12);
  ASSERT_TRUE(good.handshake_ok()) << good.handshake_error();
  EXPECT_EQ(good.protocol(), "TLSv1.2");
  EXPECT_TRUE(Contains(kTls12Ciphers, good.cipher())) << good.cipher();
}

// A chain file: the server sends the intermediate, so a client trusting only the root verifies.
TEST_F(ServerTlsTest, ServesTheChainFromTheCertFile) {
  TestPki intermediate(ca_, "hookrelay test intermediate");
  TestPki::Issued leaf = intermediate.Issue("leaf");
  StartServer(Options(leaf));
  TlsConnection c(port(), Trusting(ca_));
  ASSERT_TRUE(c.handshake_ok()) << c.handshake_error();
  EXPECT_EQ(c.Send("GET", "/chained").body, "/chained");

  // The leaf alone does not verify against the root: the chain above did the work.
  ServerOptions alone = Options(leaf);
  alone.tls->cert_file = leaf.cert_file;
  PathHandler handler;
  auto second = Server::Start(alone, handler);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  TlsConnection d((*second)->port(), Trusting(ca_));
  EXPECT_FALSE(d.handshake_ok());
  EXPECT_TRUE(Contains(d.handshake_error(), "unable to get local issuer certificate"))
      << d.handshake_error();
}

// 5. Files that cannot be used stop the start, naming the file; CheckTlsFiles says the same.
TEST_F(ServerTlsTest, StartRefusesUnusableFilesNamingThem) {
  TempDir dir;
  const std::string missing = dir.path() + "/missing.pem";
  const std::string not_pem = dir.path() + "/not.pem";
  WriteFile(not_pem, "this is not a certificate\n");
  TestPki::Issued other = ca_.Issue("other");
  const std::string encrypted = dir.path() + "/encrypted.key";
  RunResult enc = RunOpenssl(
      {"pkey", "-in", cert_.key_file, "-aes256", "-passout", "pass:secret", "-out", encrypted});
  ASSERT_EQ(enc.exit_code, 0) << enc.err;

  struct Case {
    TlsFiles files;
    std::string message;
    std::string field;
  };
  const std::string& cert = cert_.chain_file;
  const std::string& key = cert_.key_file;
  const std::vector<Case> cases = {
      {{missing, key}, "tls.cert " + missing + ": cannot read: No such file or directory", "cert"},
      {{cert, missing}, "tls.key " + missing + ": cannot read: No such file or directory", "key"},
      {{dir.path(), key}, "tls.cert " + dir.path() + ": cannot read: Is a directory", "cert"},
      {{not_pem, key},
       "tls.cert " + not_pem +
           ": no PEM certificate in it (expected a -----BEGIN CERTIFICATE----- block)",
       "cert"},
      {{key, key},
       "tls.cert " + key +
           ": no PEM certificate in it (expected a -----BEGIN CERTIFICATE----- block)",
       "cert"},
      {{cert, not_pem},
       "tls.key " + not_pem +
           ": no PEM private key in it (expected a -----BEGIN PRIVATE KEY----- "
           "block)",
       "key"},
      {{cert, cert},
       "tls.key " + cert +
           ": no PEM private key in it (expected a -----BEGIN PRIVATE KEY----- "
           "block)",
       "key"},
      {{cert, other.key_file},
       "tls.key " + other.key_file + " does not match tls.cert " + cert,
       "key"},
      {{cert, encrypted},
       "tls.key " + encrypted +
           ": the key is encrypted and hookrelay cannot ask for its passphrase; store it "
           "unencrypted (openssl pkey -in KEY -out KEY.plain) with mode 0600",
       "key"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.files.cert_file + " / " + c.files.key_file);
    ServerOptions o = Options();
    o.tls = c.files;
    auto started = Server::Start(o, handler_);
    ASSERT_FALSE(started.ok());
    EXPECT_EQ(started.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(started.status().message(), c.message);
    EXPECT_EQ(started.status().field(), c.field);
    Status checked = CheckTlsFiles(c.files);
    EXPECT_EQ(checked.message(), c.message);
    EXPECT_EQ(checked.field(), c.field);
  }
  EXPECT_TRUE(CheckTlsFiles({cert, key}).ok());
  EXPECT_TRUE(CheckTlsFiles({cert_.cert_file, key}).ok());
  // The message never quotes the key.
  const std::string key_text = ReadFile(key);
  const std::string key_line = key_text.substr(key_text.find('\n') + 1, 40);
  for (const Case& c : cases) EXPECT_FALSE(Contains(c.message, key_line));
}

// A key file every user can read is served, with a warning that names it (and not the key).
TEST_F(ServerTlsTest, WarnsAboutAKeyFileEveryoneCanRead) {
  TempDir dir;
  const std::string key = dir.path() + "/open.key";
  WriteFile(key, ReadFile(cert_.key_file));
  namespace fs = std::filesystem;
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                           fs::perms::others_read);
  {
    LogCapture log;
    EXPECT_TRUE(CheckTlsFiles({cert_.chain_file, key}).ok());
    EXPECT_TRUE(Contains(
        log.text(), "tls.key " + key + " can be read by every user of this machine (mode 0644)"))
        << log.text();
    EXPECT_FALSE(Contains(log.text(), "PRIVATE KEY")) << log.text();
  }
  fs::permissions(key, fs::perms::owner_read | fs::perms::group_read);  // 0440: fine
  LogCapture log;
  EXPECT_TRUE(CheckTlsFiles({cert_.chain_file, key}).ok());
  EXPECT_EQ(log.text(), "");
}

// 6. ReloadTls: open connections keep their certificate, new ones get the new one; a broken
// file at reload changes nothing.
TEST_F(ServerTlsTest, ReloadServesTheNewCertificateToNewConnectionsOnly) {
  TestPki other_ca("hookrelay second CA");
  TestPki::Issued first = ca_.Issue("first", {.common_name = "first"});
  TestPki::Issued second = other_ca.Issue("second", {.common_name = "second"});
  TempDir dir;
  const TlsFiles files{dir.path() + "/cert.pem", dir.path() + "/key.pem"};
  auto install = [&](const std::string& cert, const std::string& key) {
    WriteFile(files.cert_file, ReadFile(cert));
    WriteFile(files.key_file, ReadFile(key));
    std::filesystem::permissions(
        files.key_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  };
  install(first.chain_file, first.key_file);
  ServerOptions o = Options();
  o.tls = files;
  StartServer(o);

  TlsConnection before(port(), Trusting(ca_));
  ASSERT_TRUE(before.handshake_ok()) << before.handshake_error();
  EXPECT_EQ(before.peer_common_name(), "first");
  EXPECT_EQ(before.Send("GET", "/before").body, "/before");

  install(second.chain_file, second.key_file);
  Status reloaded = server_->ReloadTls();
  ASSERT_TRUE(reloaded.ok()) << reloaded.ToString();

  // The connection opened before the reload carries on with its certificate.
  EXPECT_EQ(before.Send("GET", "/before-again").body, "/before-again");
  EXPECT_EQ(before.peer_common_name(), "first");
  // New connections get the new certificate: only the second CA verifies it.
  TlsConnection after(port(), Trusting(other_ca));
  ASSERT_TRUE(after.handshake_ok()) << after.handshake_error();
  EXPECT_EQ(after.peer_common_name(), "second");
  EXPECT_EQ(after.Send("GET", "/after").body, "/after");
  TlsConnection old_trust(port(), Trusting(ca_));
  EXPECT_FALSE(old_trust.handshake_ok());

  // Broken files at reload: an error naming the file, and "second" stays.
  WriteFile(files.cert_file, "-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n");
  Status broken = server_->ReloadTls();
  EXPECT_EQ(broken.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(broken.message(), "tls.cert " + files.cert_file + ": ")) << broken.message();
  install(first.chain_file, second.key_file);  // a key that does not match
  Status mismatch = server_->ReloadTls();
  EXPECT_EQ(mismatch.message(),
            "tls.key " + files.key_file + " does not match tls.cert " + files.cert_file);
  std::filesystem::remove(files.key_file);
  EXPECT_EQ(server_->ReloadTls().message(),
            "tls.key " + files.key_file + ": cannot read: No such file or directory");
  TlsConnection still(port(), Trusting(other_ca));
  ASSERT_TRUE(still.handshake_ok()) << still.handshake_error();
  EXPECT_EQ(still.peer_common_name(), "second");
  EXPECT_EQ(still.Send("GET", "/still").body, "/still");
  EXPECT_EQ(before.Send("GET", "/before-last").body, "/before-last");
}

TEST_F(ServerTlsTest, ReloadWithoutTlsIsAFailedPrecondition) {
  ServerOptions o = Options();
  o.tls.reset();
  StartServer(o);
  EXPECT_EQ(server_->url(), "http://127.0.0.1:" + std::to_string(port()));
  EXPECT_EQ(server_->ReloadTls().code(), Status::Code::kFailedPrecondition);
}

// 7. Hostile input over TLS.
TEST_F(ServerTlsTest, PlainHttpOrGarbageOnTheTlsPortIsClosedAndCounted) {
  StartServer(Options());
  std::string reply = SendRaw(port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n", seconds(10));
  EXPECT_FALSE(Contains(reply, "HTTP/1.1")) << reply;
  EXPECT_TRUE(test::WaitFor([&] { return server_->stats().tls_handshake_failures.load() == 1; }));

  // Something that starts like a TLS record, then garbage.
  std::string garbage("\x16\x03\x01\x00\x40", 5);
  for (int i = 0; i < 64; ++i) garbage.push_back(static_cast<char>(i * 37));
  RawConnection g(port());
  g.Write(garbage);
  g.ReadUntilClose(seconds(10));
  EXPECT_TRUE(g.closed());
  EXPECT_TRUE(test::WaitFor([&] { return server_->stats().tls_handshake_failures.load() == 2; }));
  EXPECT_TRUE(test::WaitFor([&] { return server_->stats().connections.load() == 0; }));

  TlsConnection c(port(), Trusting(ca_));  // still serving
  EXPECT_EQ(c.Send("GET", "/fine").body, "/fine");
  EXPECT_EQ(handler_.requests.load(), 1);
}

TEST_F(ServerTlsTest, AClientThatNeverSaysHelloIsClosedAfterHeaderTimeout) {
  ServerOptions o = Options();
  o.header_timeout = milliseconds(300);
  StartServer(o);
  const auto start = SteadyClock::now();
  RawConnection silent(port());
  EXPECT_EQ(silent.ReadUntilClose(seconds(10)), "");
  EXPECT_TRUE(silent.closed());
  EXPECT_GE(SteadyClock::now() - start, milliseconds(300));
  EXPECT_TRUE(test::WaitFor([&] { return server_->stats().tls_handshake_failures.load() == 1; }));

  // The handshake and the first request byte share header_timeout: a client that completes the
  // handshake and then stays silent is closed too, without a response.
  TlsConnection quiet(port(), Trusting(ca_));
  ASSERT_TRUE(quiet.handshake_ok()) << quiet.handshake_error();
  EXPECT_EQ(quiet.ReadUntilClose(seconds(10)), "");
  EXPECT_TRUE(quiet.closed());
  EXPECT_EQ(server_->stats().tls_handshake_failures.load(), 1u);
}

TEST_F(ServerTlsTest, OversizedHeadersGet431OverTls) {
  ServerOptions o = Options();
  o.header_limit = 2048;
  StartServer(o);
  TlsConnection c(port(), Trusting(ca_));
  ASSERT_TRUE(c.handshake_ok()) << c.handshake_error();
  ASSERT_TRUE(
      c.Write("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(8192, 'a') + "\r\n\r\n"));
  std::string raw = c.ReadUntilClose(seconds(10));
  EXPECT_EQ(StatusOf(raw), 431) << raw;
  EXPECT_TRUE(Contains(raw, "Connection: close\r\n"));
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(handler_.requests.load(), 0);
}

TEST_F(ServerTlsTest, ASlowBodyGets408OverTls) {
  ServerOptions o = Options();
  o.body_timeout = milliseconds(300);
  StartServer(o);
  TlsConnection c(port(), Trusting(ca_));
  ASSERT_TRUE(c.handshake_ok()) << c.handshake_error();
  ASSERT_TRUE(c.Write("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly some"));
  std::string raw = c.ReadUntilClose(seconds(10));
  EXPECT_EQ(StatusOf(raw), 408) << raw;
  EXPECT_TRUE(Contains(raw, "request body not received within")) << raw;
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(handler_.requests.load(), 0);
}

// Refusals (429 per client, 503 when full) are answered over TLS after the handshake.
TEST_F(ServerTlsTest, RefusalsAreAnsweredOverTls) {
  ServerOptions o = Options();
  o.max_connections_per_client = 1;
  StartServer(o);
  TlsConnection first(port(), Trusting(ca_));
  ASSERT_EQ(first.Send("GET", "/first").status, 200);
  TlsConnection second(port(), Trusting(ca_));
  ASSERT_TRUE(second.handshake_ok()) << second.handshake_error();
  std::string raw = second.ReadUntilClose(seconds(10));
  EXPECT_EQ(StatusOf(raw), 429) << raw;
  EXPECT_TRUE(Contains(raw, "Retry-After: 1\r\n")) << raw;
  EXPECT_EQ(server_->stats().refused_max_connections_per_client.load(), 1u);
  server_.reset();

  ServerOptions full = Options();
  full.max_connections = 1;
  full.max_connections_per_client = 0;
  StartServer(full);
  handler_.hold = true;  // the first connection's request stays in the handler: not idle
  TlsConnection busy(port(), Trusting(ca_));
  ASSERT_TRUE(busy.Write("GET /busy HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(test::WaitFor([&] { return handler_.held() == 1; }));
  TlsConnection refused(port(), Trusting(ca_));
  ASSERT_TRUE(refused.handshake_ok()) << refused.handshake_error();
  std::string raw503 = refused.ReadUntilClose(seconds(10));
  EXPECT_EQ(StatusOf(raw503), 503) << raw503;
  EXPECT_TRUE(Contains(raw503, "max_connections 1")) << raw503;
}

// A connection still in its handshake counts as idle: it is closed to make room for a new one.
TEST_F(ServerTlsTest, AConnectionStillInItsHandshakeIsEvictedForANewOne) {
  ServerOptions o = Options();
  o.max_connections = 1;
  o.max_connections_per_client = 0;
  // One loop for the acceptor and the connections: the lurker's session starts (and counts as
  // idle) before the next accept completes.
  o.threads = 1;
  StartServer(o);
  RawConnection lurker(port());
  ASSERT_TRUE(test::WaitFor([&] { return server_->stats().connections.load() == 1; }));
  TlsConnection c(port(), Trusting(ca_));
  ASSERT_TRUE(c.handshake_ok()) << c.handshake_error();
  EXPECT_EQ(c.Send("GET", "/room").body, "/room");
  lurker.ReadUntilClose(seconds(10));
  EXPECT_TRUE(lurker.closed());
  EXPECT_EQ(server_->stats().idle_closed.load(), 1u);
  EXPECT_EQ(server_->stats().tls_handshake_failures.load(), 0u);  // the server closed it
}

}  // namespace
}  // namespace hookrelay::http
