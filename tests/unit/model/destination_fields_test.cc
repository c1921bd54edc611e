#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "model/destination.h"

namespace hookrelay::model {
namespace {

namespace json = boost::json;

Status ParseError(json::object o) {
  o.emplace("name", "d");
  if (!o.contains("url")) o.emplace("url", "https://example.com/hook");
  auto d = ParseDestination(o);
  return d.ok() ? Status::Ok() : d.status();
}

// Issue 32.19: a header value with a NUL was accepted and then silently not sent (libcurl cuts a
// value there); every control character but a tab is refused, as CR and LF were.
TEST(DestinationFieldsTest, HeaderValuesWithControlCharactersAreRefused) {
  for (const std::string& value :
       {std::string("a\0Injected: b", 13), std::string("a\x01"), std::string("\x1b[2J"),
        std::string("a\x7f"), std::string("a\r\nX: y")}) {
    Status s = ParseError(json::object{{"headers", json::object{{"X-Env", value}}}});
    ASSERT_FALSE(s.ok()) << json::serialize(json::value(value));
    EXPECT_EQ(s.field(), "headers.X-Env");
    EXPECT_NE(s.message().find("not a valid HTTP header"), std::string::npos) << s.ToString();
  }
  EXPECT_TRUE(ParseError(json::object{{"headers", json::object{{"X-Env", "a\tb c"}}}}).ok());
}

TEST(DestinationFieldsTest, UrlPortsOutsideOneTo65535AreRefused) {
  for (const char* url : {"http://example.com:0/h", "http://example.com:99999/h",
                          "http://example.com:65536/", "http://example.com:000/"}) {
    Status s = ParseError(json::object{{"url", url}});
    ASSERT_FALSE(s.ok()) << url;
    EXPECT_EQ(s.field(), "url");
    EXPECT_NE(s.message().find("not a TCP port (1 to 65535)"), std::string::npos) << s.ToString();
  }
  for (const char* url : {"http://example.com:1/h", "https://example.com:65535/",
                          "http://example.com/h", "http://[::1]:8080/h"}) {
    EXPECT_TRUE(ParseError(json::object{{"url", url}}).ok()) << url;
  }
}

// Issue 28: signing-secret rotation. The previous secret is parsed, checked and never shown; it
// signs (SigningKeys) only before its expiry, after the current secret.
constexpr char kNewSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr char kOldSecret[] = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

json::object Rotating(std::string_view expires_at) {
  return json::object{{"name", "d"},
                      {"url", "https://example.com/hook"},
                      {"signing_secret", kNewSecret},
                      {"signing_secret_previous",
                       json::object{{"secret", kOldSecret}, {"expires_at", expires_at}}}};
}

TEST(DestinationFieldsTest, PreviousSigningSecretSignsUntilItsExpiryAfterTheCurrentOne) {
  auto d = ParseDestination(Rotating("2026-12-06T10:00:00Z"));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE(d->signing_secret_previous.has_value());
  const TimePoint expiry = d->signing_secret_previous->expires_at;
  const std::string current = *SigningKey(kNewSecret);
  const std::string previous = *SigningKey(kOldSecret);
  EXPECT_EQ(SigningKeys(*d, expiry - std::chrono::seconds(1)),
            (std::vector<std::string>{current, previous}));
  EXPECT_EQ(SigningKeys(*d, expiry), std::vector<std::string>{current});
  EXPECT_EQ(SigningKeys(*d, expiry + std::chrono::hours(1)), std::vector<std::string>{current});

  d->signing_secret.reset();
  d->signing_secret_previous.reset();
  EXPECT_TRUE(SigningKeys(*d, expiry).empty());
}

TEST(DestinationFieldsTest, PreviousSigningSecretIsShownAsItsExpiryOnly) {
  auto d = ParseDestination(Rotating("2026-12-06T10:00:00Z"));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  const json::object o = DestinationToJson(*d);
  const std::string text = json::serialize(o);
  EXPECT_EQ(text.find("whsec_"), std::string::npos) << text;
  EXPECT_FALSE(o.contains("signing_secret_previous"));
  ASSERT_TRUE(o.at("signing_secret_rotation").is_object()) << text;
  EXPECT_EQ(o.at("signing_secret_rotation").at("old_expires_at"), "2026-12-06T10:00:00.000Z");

  d->signing_secret_previous.reset();
  EXPECT_TRUE(DestinationToJson(*d).at("signing_secret_rotation").is_null());
}

TEST(DestinationFieldsTest, BadPreviousSigningSecretsNameTheirField) {
  struct Case {
    json::value previous;
    std::string field;
    std::string message;
  };
  const Case cases[] = {
      {"whsec_x", "signing_secret_previous", "must be an object"},
      {json::object{{"expires_at", "2026-12-06T10:00:00Z"}}, "signing_secret_previous.secret",
       "is required"},
      {json::object{{"secret", "nope"}, {"expires_at", "2026-12-06T10:00:00Z"}},
       "signing_secret_previous.secret", "whsec_"},
      {json::object{{"secret", kOldSecret}}, "signing_secret_previous.expires_at", "is required"},
      {json::object{{"secret", kOldSecret}, {"expires_at", "tomorrow"}},
       "signing_secret_previous.expires_at", "RFC 3339"},
      {json::object{{"secret", kOldSecret}, {"expires_at", "2026-12-06T10:00:00Z"}, {"x", 1}},
       "signing_secret_previous.x", "unknown"},
  };
  for (const Case& c : cases) {
    json::object o = Rotating("2026-12-06T10:00:00Z");
    o["signing_secret_previous"] = c.previous;
    auto d = ParseDestination(o);
    ASSERT_FALSE(d.ok()) << json::serialize(c.previous);
    EXPECT_EQ(d.status().field(), c.field) << d.status().ToString();
    EXPECT_NE(d.status().message().find(c.message), std::string::npos) << d.status().ToString();
  }
  // Without a current secret there is nothing to rotate from.
  json::object o = Rotating("2026-12-06T10:00:00Z");
  o.erase("signing_secret");
  auto d = ParseDestination(o);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().field(), "signing_secret_previous");
  EXPECT_NE(d.status().message().find("needs signing_secret"), std::string::npos);
}

}  // namespace
}  // namespace hookrelay::model
