// A source's verification secrets being rotated out (issue 28): "verify.secrets_previous".
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "common/time_format.h"
#include "model/source.h"

namespace hookrelay::model {
namespace {

namespace json = boost::json;

constexpr char kStandardOld[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr char kStandardNew[] = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";

json::object Source(std::string_view scheme, std::string_view current, json::value previous) {
  return json::object{{"name", "s"},
                      {"verify", json::object{{"scheme", scheme},
                                              {"secrets", json::array{current}},
                                              {"secrets_previous", std::move(previous)}}}};
}

TEST(SourceFieldsTest, RotatedOutSecretsVerifyUntilTheirExpiryAfterTheCurrentOnes) {
  auto s = ParseSource(Source(
      "github", "new",
      json::array{json::object{{"secret", "old"}, {"expires_at", "2026-12-06T10:00:00Z"}},
                  json::object{{"secret", "older"}, {"expires_at", "2026-12-06T09:00:00Z"}}}));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const VerifyConfig& v = *s->verify;
  ASSERT_EQ(v.secrets_previous.size(), 2u);
  const TimePoint ten = *ParseRfc3339("2026-12-06T10:00:00Z");
  const TimePoint nine = *ParseRfc3339("2026-12-06T09:00:00Z");
  using Views = std::vector<std::string_view>;
  EXPECT_EQ(v.SecretsAt(nine - std::chrono::seconds(1)), (Views{"new", "old", "older"}));
  EXPECT_EQ(v.SecretsAt(nine), (Views{"new", "old"}));
  EXPECT_EQ(v.SecretsAt(ten), Views{"new"});

  // Never shown, not even their number: the API shows the valid ones' expiry (sources_json.h).
  const std::string text = json::serialize(SourceToJson(*s));
  EXPECT_EQ(text.find("old"), std::string::npos) << text;
  EXPECT_EQ(text.find("secrets_previous"), std::string::npos) << text;

  // null or absent: none.
  auto plain = ParseSource(Source("standard", kStandardNew, nullptr));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(plain->verify->secrets_previous.empty());
}

TEST(SourceFieldsTest, BadRotatedOutSecretsNameTheirField) {
  struct Case {
    std::string scheme;
    json::value previous;
    std::string field;
    std::string message;
  };
  const Case cases[] = {
      {"github", "old", "verify.secrets_previous", "must be an array"},
      {"github", json::array{"old"}, "verify.secrets_previous[0]", "must be an object"},
      {"github", json::array{json::object{{"expires_at", "2026-12-06T10:00:00Z"}}},
       "verify.secrets_previous[0].secret", "is required"},
      {"github", json::array{json::object{{"secret", ""}, {"expires_at", "2026-12-06T10:00:00Z"}}},
       "verify.secrets_previous[0].secret", "must not be empty"},
      {"github", json::array{json::object{{"secret", "old"}}},
       "verify.secrets_previous[0].expires_at", "is required"},
      {"github", json::array{json::object{{"secret", "old"}, {"expires_at", "soon"}}},
       "verify.secrets_previous[0].expires_at", "RFC 3339"},
      {"github",
       json::array{json::object{{"secret", "old"}, {"expires_at", "2026-12-06T10:00:00Z"}},
                   json::object{{"secret", "x"}, {"expires_at", "2026-12-06T10:00:00Z"}, {"y", 1}}},
       "verify.secrets_previous[1].y", "unknown"},
      // A standard source's secrets, old ones included, are whsec_ + base64.
      {"standard",
       json::array{json::object{{"secret", "plain"}, {"expires_at", "2026-12-06T10:00:00Z"}}},
       "verify.secrets_previous[0].secret", "whsec_"},
  };
  for (const Case& c : cases) {
    const std::string current = c.scheme == "standard" ? kStandardNew : "new";
    auto s = ParseSource(Source(c.scheme, current, c.previous));
    ASSERT_FALSE(s.ok()) << json::serialize(c.previous);
    EXPECT_EQ(s.status().field(), c.field) << s.status().ToString();
    EXPECT_NE(s.status().message().find(c.message), std::string::npos) << s.status().ToString();
  }
  auto ok = ParseSource(Source(
      "standard", kStandardNew,
      json::array{json::object{{"secret", kStandardOld}, {"expires_at", "2026-12-06T10:00:00Z"}}}));
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
}

}  // namespace
}  // namespace hookrelay::model
