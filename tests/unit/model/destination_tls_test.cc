#include "model/destination_tls.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

#include "common/crypto.h"
#include "delivery/outgoing_headers.h"
#include "model/destination.h"
#include "support/tls_responder.h"

namespace hookrelay::model {
namespace {

namespace json = boost::json;
using hookrelay::testing::TlsResponder;

// The PEM texts of one test CA and its certificates (made once: key generation is not free).
const TlsResponder& Pems() {
  static const TlsResponder* pems = new TlsResponder(TlsResponder::Mode::kClientCertificate);
  return *pems;
}

json::object Dest(json::object tls) {
  return json::object{{"name", "d"}, {"url", "https://example.com/hook"}, {"tls", std::move(tls)}};
}

Status ParseError(const json::value& v) {
  auto d = ParseDestination(v);
  return d.ok() ? Status::Ok() : d.status();
}

TEST(DestinationTlsTest, ParsesCertificateKeyAndCa) {
  auto d = ParseDestination(Dest({{"client_cert", Pems().client_cert_pem()},
                                  {"client_key", Pems().client_key_pem()},
                                  {"ca_file", Pems().ca_pem()}}));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->tls.client_cert, Pems().client_cert_pem());
  EXPECT_EQ(d->tls.client_key, Pems().client_key_pem());
  EXPECT_EQ(d->tls.ca, Pems().ca_pem());
  EXPECT_EQ(d->tls.cert.subject, "CN=hookrelay-client");
  EXPECT_EQ(d->tls.cert.issuer, "CN=hookrelay test CA");
  EXPECT_EQ(d->tls.cert.sha256.size(), 64u);
  EXPECT_GT(d->tls.cert.not_after, SystemClock::Instance().Now());
  EXPECT_EQ(d->tls.ca_subjects, std::vector<std::string>{"CN=hookrelay test CA"});
}

TEST(DestinationTlsTest, CaAloneIsEnough) {
  auto d = ParseDestination(Dest({{"ca_file", Pems().ca_pem() + Pems().untrusted_cert_pem()}}));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->tls.client_cert.empty());
  EXPECT_EQ(d->tls.ca_subjects.size(), 2u);
}

TEST(DestinationTlsTest, NullOrEmptyTlsIsNone) {
  json::object o = Dest({});
  auto d = ParseDestination(o);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->tls.empty());
  o["tls"] = nullptr;
  d = ParseDestination(o);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->tls.empty());
  EXPECT_TRUE(DestinationToJson(*d).at("tls").is_null());
}

TEST(DestinationTlsTest, ErrorsNameTheFieldAndNeverQuoteTheValue) {
  const std::string cert = Pems().client_cert_pem();
  const std::string key = Pems().client_key_pem();
  struct Case {
    json::object tls;
    std::string field;
    std::string says;
  };
  const std::string damaged =
      "-----BEGIN CERTIFICATE-----\nMIIBnotreallyacertificate\n-----END CERTIFICATE-----\n";
  const Case cases[] = {
      {{{"client_cert", cert}}, "tls.client_key", "is required with client_cert"},
      {{{"client_key", key}}, "tls.client_cert", "is required with client_key"},
      {{{"client_cert", cert}, {"client_key", Pems().untrusted_key_pem()}},
       "tls.client_key",
       "does not match client_cert"},
      {{{"client_cert", damaged}, {"client_key", key}}, "tls.client_cert", "no PEM certificate"},
      {{{"client_cert", cert + damaged}, {"client_key", key}},
       "tls.client_cert",
       "certificate 2 does not parse"},
      {{{"client_cert", "MIIBjustbase64"}, {"client_key", key}},
       "tls.client_cert",
       "must be PEM text"},
      {{{"client_cert", cert}, {"client_key", cert}}, "tls.client_key", "no PEM private key"},
      {{{"client_cert", cert},
        {"client_key",
         "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIsecret\n-----END ENCRYPTED "
         "PRIVATE KEY-----\n"}},
       "tls.client_key",
       "is encrypted"},
      {{{"client_cert", "@client.pem"}, {"client_key", key}}, "tls.client_cert", "names a file"},
      {{{"ca_file", key}}, "tls.ca_file", "no PEM certificate"},
      {{{"ca_file", 42}}, "tls.ca_file", "must be a string"},
      {{{"client_certificate", cert}}, "tls.client_certificate", "unknown field"},
  };
  for (const Case& c : cases) {
    Status st = ParseError(Dest(c.tls));
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << json::serialize(c.tls);
    EXPECT_EQ(st.field(), c.field) << st.ToString();
    EXPECT_NE(st.message().find(c.says), std::string::npos) << st.ToString();
    EXPECT_EQ(st.message().find("MII"), std::string::npos) << st.ToString();
  }
  json::object o = Dest({});
  o["tls"] = "client.pem";
  EXPECT_EQ(ParseError(o).field(), "tls");
}

TEST(DestinationTlsTest, ApiJsonShowsASummaryNeverTheKey) {
  auto d = ParseDestination(Dest({{"client_cert", Pems().client_cert_pem()},
                                  {"client_key", Pems().client_key_pem()},
                                  {"ca_file", Pems().ca_pem()}}));
  ASSERT_TRUE(d.ok());
  json::object o = DestinationToJson(*d);
  const json::object& tls = o.at("tls").as_object();
  EXPECT_EQ(tls.at("client_cert").at("subject"), "CN=hookrelay-client");
  EXPECT_EQ(tls.at("client_cert").at("sha256"), json::value(d->tls.cert.sha256));
  EXPECT_EQ(tls.at("client_key_set"), true);
  EXPECT_EQ(tls.at("ca_file").at("certificates"), 1);
  const std::string text = json::serialize(o);
  EXPECT_EQ(text.find("PRIVATE KEY"), std::string::npos) << text;
  EXPECT_EQ(text.find("BEGIN"), std::string::npos) << text;  // no PEM at all, not even the cert
}

TEST(DestinationAuthTest, BearerBecomesTheAuthorizationHeader) {
  json::object o{{"name", "d"}, {"url", "https://example.com/"}};
  o["auth"] = json::object{{"bearer", "tok-123456789"}};
  auto d = ParseDestination(o);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->auth.header_value, "Bearer tok-123456789");
  EXPECT_EQ(DestinationToJson(*d).at("auth"), (json::object{{"type", "bearer"}}));
  EXPECT_EQ(json::serialize(DestinationToJson(*d)).find("tok-123456789"), std::string::npos);
  auto secrets = DestinationSecretValues(*d);
  EXPECT_NE(std::find(secrets.begin(), secrets.end(), "tok-123456789"), secrets.end());

  // Sent after the configured headers; a received Authorization is never forwarded.
  auto headers = delivery::OutgoingHeaders({{"Authorization", "Bearer from-provider"}},
                                           "application/json", *d, {});
  int found = 0;
  for (const auto& [name, value] : headers) {
    if (name == "Authorization") {
      ++found;
      EXPECT_EQ(value, "Bearer tok-123456789");
    }
  }
  EXPECT_EQ(found, 1);
}

TEST(DestinationAuthTest, BasicIsEncodedAndTheUsernameShown) {
  json::object o{{"name", "d"}, {"url", "https://example.com/"}};
  o["auth"] = json::object{{"basic", {{"username", "relay"}, {"password", "pa ss:wörd"}}}};
  auto d = ParseDestination(o);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->auth.header_value, "Basic " + Base64Encode("relay:pa ss:wörd"));
  EXPECT_EQ(DestinationToJson(*d).at("auth"),
            (json::object{{"type", "basic"}, {"username", "relay"}}));
  const std::string text = json::serialize(DestinationToJson(*d));
  EXPECT_EQ(text.find("wörd"), std::string::npos);
  EXPECT_EQ(text.find(Base64Encode("relay:pa ss:wörd")), std::string::npos);
  auto secrets = DestinationSecretValues(*d);
  EXPECT_NE(std::find(secrets.begin(), secrets.end(), "pa ss:wörd"), secrets.end());
  EXPECT_NE(std::find(secrets.begin(), secrets.end(), Base64Encode("relay:pa ss:wörd")),
            secrets.end());
}

TEST(DestinationAuthTest, ErrorsNameTheField) {
  struct Case {
    json::value auth;
    std::string field;
  };
  const Case cases[] = {
      {json::object{{"bearer", "a"}, {"basic", {{"username", "u"}, {"password", "p"}}}}, "auth"},
      {json::object{}, "auth"},
      {"token", "auth"},
      {json::object{{"bearer", ""}}, "auth.bearer"},
      {json::object{{"bearer", "Bearer abc"}}, "auth.bearer"},
      {json::object{{"bearer", "a\r\nX-Evil: 1"}}, "auth.bearer"},
      {json::object{{"basic", {{"username", "a:b"}, {"password", "p"}}}}, "auth.basic.username"},
      {json::object{{"basic", {{"username", "u"}}}}, "auth.basic.password"},
      {json::object{{"basic", {{"username", "u"}, {"password", "p\n"}}}}, "auth.basic.password"},
      {json::object{{"basic", {{"user", "u"}, {"password", "p"}}}}, "auth.basic.user"},
      {json::object{{"digest", "x"}}, "auth.digest"},
  };
  for (const Case& c : cases) {
    json::object o{{"name", "d"}, {"url", "https://example.com/"}, {"auth", c.auth}};
    Status st = ParseError(o);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << json::serialize(c.auth);
    EXPECT_EQ(st.field(), c.field) << json::serialize(c.auth) << ": " << st.ToString();
  }
  // A bearer in a PATCH replacing a basic: the other set to null.
  json::object o{{"name", "d"}, {"url", "https://example.com/"}};
  o["auth"] = json::object{{"basic", nullptr}, {"bearer", "tok"}};
  EXPECT_TRUE(ParseDestination(o).ok());
  o["auth"] = nullptr;
  auto none = ParseDestination(o);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->auth.kind, DestinationAuth::Kind::kNone);
  EXPECT_TRUE(DestinationToJson(*none).at("auth").is_null());
}

TEST(DestinationAuthTest, ConflictsWithAConfiguredAuthorizationHeader) {
  json::object o{{"name", "d"}, {"url", "https://example.com/"}};
  o["headers"] = json::object{{"authorization", "Token x"}};
  o["auth"] = json::object{{"bearer", "tok"}};
  Status st = ParseError(o);
  EXPECT_EQ(st.field(), "auth") << st.ToString();
  EXPECT_NE(st.message().find("headers.Authorization"), std::string::npos);
}

}  // namespace
}  // namespace hookrelay::model
