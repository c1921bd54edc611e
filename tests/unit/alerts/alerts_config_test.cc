#include "alerts/alerts_config.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace hookrelay::alerts {
namespace {

namespace json = boost::json;
using std::chrono::minutes;
using std::chrono::seconds;

Result<AlertsConfig> Parse(std::string_view text) { return ParseAlertsConfig(json::parse(text)); }

// The field a parse error names ("" when it parsed).
std::string ErrorField(std::string_view text) {
  auto r = Parse(text);
  return r.ok() ? std::string() : r.status().field();
}

TEST(AlertsConfigTest, EmptyIsValidAndDisabled) {
  auto c = Parse("{}");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->enabled());
  EXPECT_EQ(c->window, minutes(5));
}

TEST(AlertsConfigTest, FullConfig) {
  auto c = Parse(R"({"smtp_url": "smtp://mail.example.com:587", "from": "hookrelay@example.com",
                     "to": ["ops@example.com", "oncall@example.com"], "username": "relay",
                     "password": "s3cret", "starttls": true,
                     "webhook_url": "https://chat.example.com/hooks/abc", "window": "90s"})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->smtp_url, "smtp://mail.example.com:587");
  EXPECT_EQ(c->from, "hookrelay@example.com");
  EXPECT_EQ(c->to, (std::vector<std::string>{"ops@example.com", "oncall@example.com"}));
  EXPECT_EQ(c->username, "relay");
  EXPECT_EQ(c->password, "s3cret");
  EXPECT_TRUE(c->starttls);
  EXPECT_EQ(c->webhook_url, "https://chat.example.com/hooks/abc");
  EXPECT_EQ(c->window, seconds(90));
  EXPECT_TRUE(c->email_enabled());
  EXPECT_TRUE(c->webhook_enabled());
  EXPECT_TRUE(c->enabled());
}

// A password goes over TLS or not at all: STARTTLS required, or smtps://.
TEST(AlertsConfigTest, CredentialsNeedTls) {
  const std::string mail = R"("from": "a@example.com", "to": "b@example.com")";
  auto plain = Parse(R"({"smtp_url": "smtp://m.example.com", "username": "u", "password": "p", )" +
                     mail + "}");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.status().field(), "starttls");
  EXPECT_NE(plain.status().message().find("only sent over TLS"), std::string::npos);
  EXPECT_TRUE(Parse(R"({"smtp_url": "smtp://m.example.com", "username": "u", "password": "p", )"
                    R"("starttls": true, )" +
                    mail + "}")
                  .ok());
  EXPECT_TRUE(Parse(R"({"smtp_url": "smtps://m.example.com", "username": "u", "password": "p", )" +
                    mail + "}")
                  .ok());
  // Without credentials, plain smtp:// stays allowed (a relay on the same host).
  EXPECT_TRUE(Parse(R"({"smtp_url": "smtp://127.0.0.1:25", )" + mail + "}").ok());
}

TEST(AlertsConfigTest, CaFileIsKeptAndShown) {
  auto c = Parse(R"({"smtp_url": "smtps://m.example.com", "from": "a@example.com",
                     "to": "b@example.com", "ca_file": "/etc/hookrelay/mail-ca.pem"})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->ca_file, "/etc/hookrelay/mail-ca.pem");
  EXPECT_EQ(AlertsConfigToJson(*c).at("ca_file"), "/etc/hookrelay/mail-ca.pem");
}

TEST(AlertsConfigTest, WebhookOnlyAndSmtpsAndSingleRecipient) {
  auto w = Parse(R"({"webhook_url": "http://127.0.0.1:9000/alerts"})");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE(w->enabled());
  EXPECT_FALSE(w->email_enabled());

  auto s = Parse(R"({"smtp_url": "smtps://mail.example.com", "from": "a@example.com",
                     "to": "ops@example.com"})");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->to, (std::vector<std::string>{"ops@example.com"}));
  EXPECT_FALSE(s->starttls);
}

TEST(AlertsConfigTest, ErrorsNameTheField) {
  const std::string mail = R"("from": "a@example.com", "to": ["ops@example.com"])";
  EXPECT_EQ(ErrorField(R"({"smtp": "x"})"), "smtp");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "http://mail.example.com", )" + mail + "}"), "smtp_url");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "mail.example.com", )" + mail + "}"), "smtp_url");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "smtp://user:pw@mail.example.com", )" + mail + "}"),
            "smtp_url");
  EXPECT_EQ(ErrorField(R"({"smtp_url": 25, )" + mail + "}"), "smtp_url");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "smtp://m.example.com", "to": ["o@example.com"]})"), "from");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "smtp://m.example.com", "from": "a@example.com"})"), "to");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "smtp://m.example.com", "from": "a@example.com",
                           "to": []})"),
            "to");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "smtp://m.example.com", "from": "a@example.com",
                           "to": ["ok@example.com", "not-an-address"]})"),
            "to[1]");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "smtp://m.example.com", "from": "a@example.com",
                           "to": ["ok@example.com", 7]})"),
            "to[1]");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "smtp://m.example.com", "from": "a@example.com",
                           "to": ["x@example.com>, evil@example.com"]})"),
            "to[0]");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "smtp://m.example.com", "from": "a@example.com",
                           "to": {"a": 1}})"),
            "to");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "smtp://m.example.com", "from": "a@example.com\r\nBcc: x@y",
                           "to": ["o@example.com"]})"),
            "from");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "smtp://m.example.com", "from": "nobody",
                           "to": ["o@example.com"]})"),
            "from");
  EXPECT_EQ(ErrorField(R"({"from": "a@example.com"})"), "smtp_url");
  EXPECT_EQ(ErrorField(R"({"to": ["o@example.com"]})"), "smtp_url");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "smtp://m.example.com", "password": "pw", )" + mail + "}"),
            "username");
  EXPECT_EQ(ErrorField(R"({"smtp_url": "smtp://m.example.com", "starttls": "yes", )" + mail + "}"),
            "starttls");
  EXPECT_EQ(ErrorField(R"({"webhook_url": "ftp://example.com/x"})"), "webhook_url");
  EXPECT_EQ(ErrorField(R"({"webhook_url": "https://"})"), "webhook_url");
  EXPECT_EQ(ErrorField(R"({"window": "0s"})"), "window");
  EXPECT_EQ(ErrorField(R"({"window": 300})"), "window");
  EXPECT_EQ(ErrorField(R"({"window": "5 minutes"})"), "window");
  EXPECT_FALSE(ParseAlertsConfig(json::value(json::array{})).ok());
}

TEST(AlertsConfigTest, ErrorMessagesSayWhatIsExpected) {
  auto r = Parse(R"({"smtp_url": "http://mail.example.com", "from": "a@example.com",
                     "to": ["o@example.com"]})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("smtp://"), std::string::npos) << r.status().message();
  auto w = Parse(R"({"window": "0s"})");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Status::Code::kInvalidArgument);
}

TEST(AlertsConfigTest, ToJsonNeverShowsThePassword) {
  auto c = Parse(R"({"smtp_url": "smtp://mail.example.com:587", "from": "hookrelay@example.com",
                     "to": ["ops@example.com"], "username": "relay",
                     "password": "hunter2-very-secret", "starttls": true, "window": "10m"})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  json::object o = AlertsConfigToJson(*c);
  std::string text = json::serialize(o);
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
  EXPECT_FALSE(o.contains("password"));
  EXPECT_EQ(o.at("password_set"), true);
  EXPECT_EQ(o.at("smtp_url"), "smtp://mail.example.com:587");
  EXPECT_EQ(o.at("to"), (json::array{"ops@example.com"}));
  EXPECT_EQ(o.at("username"), "relay");
  EXPECT_EQ(o.at("starttls"), true);
  EXPECT_EQ(o.at("window"), "10m");

  AlertsConfig none;
  EXPECT_EQ(AlertsConfigToJson(none).at("password_set"), false);
}

TEST(AlertsConfigTest, ToJsonWithoutPasswordFieldsParsesBack) {
  auto c = Parse(R"({"smtp_url": "smtp://mail.example.com:587", "from": "hookrelay@example.com",
                     "to": ["ops@example.com", "b@example.com"], "starttls": true,
                     "webhook_url": "https://x.example.com/h", "window": "1m"})");
  ASSERT_TRUE(c.ok());
  json::object o = AlertsConfigToJson(*c);
  o.erase("password_set");
  auto back = ParseAlertsConfig(o);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->to, c->to);
  EXPECT_EQ(back->window, c->window);
  EXPECT_EQ(back->webhook_url, c->webhook_url);
}

}  // namespace
}  // namespace hookrelay::alerts
