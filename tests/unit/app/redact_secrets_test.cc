#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "common/redact.h"
#include "model/destination.h"

namespace hookrelay {
namespace {

using ::testing::UnorderedElementsAre;

TEST(RedactSecretValuesTest, ReplacesEveryOccurrenceLongestFirst) {
  EXPECT_EQ(RedactSecretValues("a s3cretvalue b s3cretvalue-long c",
                               {"s3cretvalue", "s3cretvalue-long"}, "(x)"),
            "a (x) b (x) c");
}

TEST(RedactSecretValuesTest, IgnoresShortSecretsAndEmptyText) {
  EXPECT_EQ(RedactSecretValues("token 1234567 here", {"1234567", ""}, "(x)"), "token 1234567 here");
  EXPECT_EQ(RedactSecretValues("", {"long-enough-secret"}, "(x)"), "");
}

TEST(RedactSecretValuesTest, ReplacementContainingTheSecretDoesNotLoop) {
  EXPECT_EQ(RedactSecretValues("abcdefgh abcdefgh", {"abcdefgh"}, "[abcdefgh]"),
            "[abcdefgh] [abcdefgh]");
}

model::Destination Parse(const char* json) {
  auto d = model::ParseDestination(boost::json::parse(json));
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : model::Destination{};
}

TEST(DestinationSecretValuesTest, CredentialHeadersAndUrlParameters) {
  // Built directly: the URL a destination may hold has no fragment, but a URL shown may.
  model::Destination d;
  d.url =
      "https://h.example.com/x;jsessionid=sess-value-1?a=plain-value&api_token=tok%2Fen-value"
      "#access_token=frag-value-1";
  d.headers = {{"Authorization", "Bearer bearer-value-1"},
               {"X-Custom", "custom-value-1"},
               {"X-Env", "production"}};
  d.secret_headers = {"X-Custom"};
  EXPECT_THAT(model::DestinationSecretValues(d),
              UnorderedElementsAre("Bearer bearer-value-1", "bearer-value-1", "custom-value-1",
                                   "sess-value-1", "sess-value-1", "tok%2Fen-value", "tok/en-value",
                                   "frag-value-1", "frag-value-1"));
}

TEST(DestinationSecretValuesTest, RedactsAnEchoedRequest) {
  model::Destination d =
      Parse(R"({"name": "d", "url": "https://h.example.com/in?token=url-token-value",
      "headers": {"X-Api-Key": "api-key-value-1"}})");
  EXPECT_EQ(model::RedactDestinationSecrets(
                d, "POST /in?token=url-token-value\nX-Api-Key: api-key-value-1\nX-Env: prod"),
            "POST /in?token=(redacted)\nX-Api-Key: (redacted)\nX-Env: prod");
}

TEST(IsCredentialNameTest, PasswordAbbreviationsAreCredentials) {
  for (const char* name : {"pw", "PW", "pwd", "db_pwd", "X-Pw", "user.pw"}) {
    EXPECT_TRUE(model::IsCredentialName(name)) << name;
  }
  for (const char* name : {"pwa", "X-Pwn", "spw", "type"}) {
    EXPECT_FALSE(model::IsCredentialName(name)) << name;
  }
  EXPECT_EQ(model::RedactUrl("https://h.example.com/in?user=u&pw=hunter2secret&a=1"),
            "https://h.example.com/in?user=u&pw=(redacted)&a=1");
}

}  // namespace
}  // namespace hookrelay
