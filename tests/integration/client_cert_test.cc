// Client certificates and credentials for destinations (issue 17), against the real `hookrelay
// serve` binary and a local TLS server that requires a client certificate signed by its CA
// (TlsResponder::kClientCertificate): delivered with the right certificate, given as files in
// the config ("@client.pem", relative to the config file) and inline through the API; refused as
// a TLS error with a reason without one, with an untrusted one, and when the server's own
// certificate is not trusted; the API never shows the key or the credential, and the log never
// holds them; bad input is a 400 naming the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "support/config_builder.h"
#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/integration_test.h"
#include "support/process.h"
#include "support/tls_responder.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing::HookrelayServer;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::TempDir;
using testing::TlsResponder;

const std::string kToken = "client-cert-test-admin-token-0123";
const std::string kBearer = "bearer-secret-0123456789abcdef";
const std::string kPassword = "basic-password-0123456789abcdef";

// The base64 body of a PEM key (the lines between BEGIN and END, joined): what must never show.
std::vector<std::string> KeyLines(const std::string& pem) {
  std::vector<std::string> lines;
  std::istringstream in(pem);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("-----", 0) != 0 && line.size() >= 16) lines.push_back(line);
  }
  return lines;
}

class ClientCertTest : public testing::IntegrationTest {
 protected:
  // The server stops before the TLS server it delivers to goes.
  ~ClientCertTest() override { server_.reset(); }

  void SetUp() override {
    admin_token_ = kToken;
    testing::WriteFile(dir_.path() + "/client.pem", tls_.client_cert_pem());
    testing::WriteFile(dir_.path() + "/client.key", tls_.client_key_pem());
    testing::WriteFile(dir_.path() + "/ca.pem", tls_.ca_pem());
    StartServer(testing::Config()
                    .Set("delivery.poll_interval", "100ms")
                    .Source("src")
                    .Destination("from-files", tls_.url() + "files",
                                 {{"policy", testing::TomlInline({{"strategy", "exponential"},
                                                                  {"jitter", "none"},
                                                                  {"base", "50ms"},
                                                                  {"cap", "100ms"},
                                                                  {"max_attempts", 2},
                                                                  {"max_duration", "1m"},
                                                                  {"timeout", "5s"}})},
                                  {"tls", testing::TomlInline({{"client_cert", "@client.pem"},
                                                               {"client_key", "@client.key"},
                                                               {"ca_file", "ca.pem"}})}})
                    .Route("src", "from-files"),
                {"--log-level", "debug"});
  }

  HttpResponse Api(const std::string& method, const std::string& target,
                   const std::string& body = "") {
    HttpConnection conn(server_->port());
    testing::HeaderList headers{{"Authorization", "Bearer " + kToken}};
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    HttpResponse r = conn.Send(method, target, headers, body);
    answers_.push_back(method + " " + target + " → " + std::to_string(r.status) + "\n" + r.body);
    return r;
  }

  // A destination created through the API, to the TLS server's `path`, routed from "src".
  void AddDestination(const std::string& name, json::object extra) {
    json::object body{{"name", name},
                      {"url", tls_.url() + name},
                      {"allow_private", true},
                      {"policy", json::parse(kFastJson)}};
    for (auto& kv : extra) body[kv.key()] = kv.value();
    HttpResponse r = Api("POST", "/api/v1/destinations", json::serialize(body));
    ASSERT_EQ(r.status, 201) << r.body;
    r = Api("POST", "/api/v1/routes",
            json::serialize(json::object{{"source", "src"}, {"destination", name}}));
    ASSERT_EQ(r.status, 201) << r.body;
  }

  // The 400 a bad destination gets: its error's field and message.
  std::pair<std::string, std::string> Refused(json::object tls) {
    json::object body{{"name", "bad"}, {"url", tls_.url()}, {"allow_private", true}};
    body["tls"] = std::move(tls);
    HttpResponse r = Api("POST", "/api/v1/destinations", json::serialize(body));
    EXPECT_EQ(r.status, 400) << r.body;
    if (r.status != 400) return {};
    const json::value e = json::parse(r.body).at("error");
    return {std::string(e.at("field").as_string()), std::string(e.at("message").as_string())};
  }

  static constexpr const char* kFastJson =
      R"({"strategy": "exponential", "jitter": "none", "base": "50ms", "cap": "100ms",
          "max_attempts": 2, "max_duration": "1m", "timeout": "5s"})";

  TlsResponder tls_{TlsResponder::Mode::kClientCertificate};
  std::vector<std::string> answers_;
};

TEST_F(ClientCertTest, DeliversWithTheRightCertificateAndSaysWhyOthersAreRefused) {
  AddDestination("inline", {{"tls",
                             {{"client_cert", tls_.client_cert_pem()},
                              {"client_key", tls_.client_key_pem()},
                              {"ca_file", tls_.ca_pem()}}},
                            {"auth", {{"bearer", kBearer}}}});
  AddDestination("api-files",
                 {{"tls",
                   {{"client_cert", "@" + dir_.path() + "/client.pem"},
                    {"client_key", "@" + dir_.path() + "/client.key"},
                    {"ca_file", "@" + dir_.path() + "/ca.pem"}}},
                  {"auth", {{"basic", {{"username", "relay"}, {"password", kPassword}}}}}});
  AddDestination("no-cert", {{"tls", {{"ca_file", tls_.ca_pem()}}}});
  AddDestination("untrusted", {{"tls",
                                {{"client_cert", tls_.untrusted_cert_pem()},
                                 {"client_key", tls_.untrusted_key_pem()},
                                 {"ca_file", tls_.ca_pem()}}}});
  AddDestination(
      "no-ca",
      {{"tls", {{"client_cert", tls_.client_cert_pem()}, {"client_key", tls_.client_key_pem()}}}});
  if (HasFatalFailure()) return;

  HttpConnection conn(server_->port());
  HttpResponse in = conn.Send("POST", "/in/src", {{"Content-Type", "application/json"}}, "{}");
  ASSERT_EQ(in.status, 202) << in.body;
  const std::string id(json::parse(in.body).at("id").as_string());

  // Every delivery final: two attempts each for the refused ones.
  json::object by_name;
  ASSERT_TRUE(test::WaitFor(
      [&] {
        HttpResponse r = Api("GET", "/api/v1/events/" + id);
        if (r.status != 200) return false;
        by_name.clear();
        const json::value event = json::parse(r.body);
        for (const json::value& d : event.at("deliveries").as_array()) {
          const std::string status(d.at("status").as_string());
          if (status != "delivered" && status != "failed") return false;
          by_name[d.at("destination").as_string()] = d;
        }
        return by_name.size() == 6;
      },
      60s, 100ms))
      << server_->output();

  for (const char* name : {"from-files", "inline", "api-files"}) {
    EXPECT_EQ(by_name.at(name).at("status"), "delivered") << name << ": " << by_name.at(name);
  }
  const std::pair<const char*, const char*> refused[] = {
      {"no-cert", "the server requires a client certificate; set tls.client_cert"},
      {"untrusted", "the server does not trust the client certificate (unknown CA)"},
      {"no-ca", "(certificate verify failed: "},
  };
  for (const auto& [name, why] : refused) {
    const json::value& d = by_name.at(name);
    EXPECT_EQ(d.at("status"), "failed") << name;
    EXPECT_THAT(std::string(d.at("reason").as_string()), HasSubstr(why)) << name;
    EXPECT_THAT(std::string(d.at("reason").as_string()), HasSubstr("TLS error")) << name;
    const json::array& attempts = d.at("attempts").as_array();
    EXPECT_EQ(attempts.size(), 2u) << name;  // TLS errors are retryable
    for (const json::value& a : attempts) {
      EXPECT_EQ(a.at("error"), "tls") << name;
      EXPECT_TRUE(a.at("status_code").is_null()) << name;
    }
  }

  // The server saw the certificate on exactly the three that were delivered, and the credentials.
  EXPECT_EQ(tls_.client_names(), (std::vector<std::string>(3, "hookrelay-client")));
  std::string heads;
  for (const std::string& h : tls_.request_heads()) heads += h + "\n\n";
  EXPECT_THAT(heads, HasSubstr("POST /inline HTTP/1.1\r\n"));
  EXPECT_THAT(heads, HasSubstr("\r\nAuthorization: Bearer " + kBearer));
  EXPECT_THAT(heads, HasSubstr("\r\nAuthorization: Basic "));

  // What the API shows: a summary of the certificate, never the key or the credentials.
  HttpResponse got = Api("GET", "/api/v1/destinations/inline");
  ASSERT_EQ(got.status, 200);
  const json::value d = json::parse(got.body);
  EXPECT_EQ(d.at("tls").at("client_cert").at("subject"), "CN=hookrelay-client");
  EXPECT_EQ(d.at("tls").at("client_key_set"), true);
  EXPECT_EQ(d.at("tls").at("ca_file").at("subjects").at(0), "CN=hookrelay test CA");
  EXPECT_EQ(d.at("auth"), (json::object{{"type", "bearer"}}));
  got = Api("GET", "/api/v1/destinations/api-files");
  EXPECT_EQ(json::parse(got.body).at("auth"),
            (json::object{{"type", "basic"}, {"username", "relay"}}));
  Api("GET", "/api/v1/destinations");
  Api("GET", "/api/v1/destinations/from-files");
  Api("GET", "/api/v1/audit");
  Api("GET", "/api/v1/events/" + id);
  // A PATCH replacing the key keeps the certificate; one without tls keeps both.
  EXPECT_EQ(Api("PATCH", "/api/v1/destinations/inline", R"({"max_concurrency": 4})").status, 200);
  EXPECT_EQ(Api("PATCH", "/api/v1/destinations/inline",
                json::serialize(
                    json::object{{"tls", {{"client_key", "@" + dir_.path() + "/client.key"}}}}))
                .status,
            200);
  EXPECT_EQ(Api("PATCH", "/api/v1/destinations/inline",
                R"({"auth": {"bearer": null, "basic": {"username": "u", "password": ")" +
                    kPassword + R"("}}})")
                .status,
            200);

  ASSERT_EQ(server_->Stop(), 0) << server_->output();
  std::vector<std::string> secrets = KeyLines(tls_.client_key_pem());
  for (const std::string& s : KeyLines(tls_.untrusted_key_pem())) secrets.push_back(s);
  ASSERT_GE(secrets.size(), 2u);
  secrets.push_back(kBearer);
  secrets.push_back(kPassword);
  const std::string log = server_->output();
  for (const std::string& s : secrets) {
    EXPECT_EQ(log.find(s), std::string::npos) << "the log holds " << s;
    for (const std::string& answer : answers_) {
      EXPECT_EQ(answer.find(s), std::string::npos) << "an answer holds " << s << ":\n" << answer;
    }
  }
  EXPECT_THAT(log, HasSubstr("requires a client certificate"));  // the log says why, at least
}

TEST_F(ClientCertTest, BadInputIsA400NamingTheField) {
  const std::string cert = tls_.client_cert_pem();
  const std::string key = tls_.client_key_pem();
  using Case = std::pair<json::object, std::pair<std::string, std::string>>;
  const std::vector<Case> cases = {
      {{{"client_cert", cert}, {"client_key", tls_.untrusted_key_pem()}},
       {"tls.client_key", "does not match client_cert"}},
      {{{"client_cert", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"},
        {"client_key", key}},
       {"tls.client_cert", "no PEM certificate"}},
      {{{"client_cert", "@" + dir_.path() + "/nope.pem"}, {"client_key", key}},
       {"tls.client_cert", "cannot read " + dir_.path() + "/nope.pem: No such file"}},
      {{{"client_cert", "@client.pem"}, {"client_key", key}}, {"tls.client_cert", "relative path"}},
      {{{"client_cert", cert}, {"client_key", "@" + dir_.path()}},
       {"tls.client_key", "not a regular file"}},
      {{{"ca_file", "/etc/hostname-does-not-exist"}}, {"tls.ca_file", "No such file"}},
      {{{"client_cert", cert}}, {"tls.client_key", "is required with client_cert"}},
  };
  for (const auto& [tls, want] : cases) {
    auto [field, message] = Refused(tls);
    EXPECT_EQ(field, want.first) << json::serialize(tls);
    EXPECT_THAT(message, HasSubstr(want.second));
    EXPECT_THAT(message, ::testing::Not(HasSubstr("MII")));  // no PEM quoted back
  }
  HttpResponse r = Api("POST", "/api/v1/destinations",
                       R"({"name": "both", "url": "https://example.com/",
                           "headers": {"Authorization": "Bearer x"}, "auth": {"bearer": "y"}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body, HasSubstr(R"("field":"auth")"));
  // A PATCH that breaks the key of a working destination is refused the same way.
  r = Api("PATCH", "/api/v1/destinations/from-files", R"({"tls": null})");
  EXPECT_EQ(r.status, 409) << r.body;  // defined in the config file
  ASSERT_EQ(
      Api("POST", "/api/v1/destinations",
          json::serialize(json::object{{"name", "p"},
                                       {"url", tls_.url()},
                                       {"allow_private", true},
                                       {"tls", {{"client_cert", cert}, {"client_key", key}}}}))
          .status,
      201);
  r = Api("PATCH", "/api/v1/destinations/p",
          json::serialize(json::object{{"tls", {{"client_key", tls_.untrusted_key_pem()}}}}));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(r.body, HasSubstr(R"("field":"tls.client_key")"));
  EXPECT_THAT(r.body, HasSubstr("tls.client_key: does not match client_cert"));
}

}  // namespace
}  // namespace hookrelay
