#include "delivery/signer.h"

#include <gtest/gtest.h>

#include <string>

#include "common/clock.h"
#include "common/crypto.h"
#include "support/sink.h"

namespace hookrelay::delivery {
namespace {

using hookrelay::testing::SinkRequest;
using hookrelay::testing::VerifyStandardSignature;

// The example from the Standard Webhooks specification.
constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr char kMessageId[] = "msg_p5jXN8AQM9LWM0D4loKWxJek";
constexpr int64_t kTimestamp = 1614265330;
constexpr char kBody[] = R"({"test": 2432232314})";
constexpr char kSignature[] = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

std::string Key() { return *Base64Decode(std::string(kSecret).substr(6)); }

SinkRequest AsRequest(const std::vector<std::pair<std::string, std::string>>& headers,
                      std::string body) {
  SinkRequest r;
  r.method = "POST";
  r.headers = headers;
  r.body = std::move(body);
  return r;
}

TEST(StandardWebhookHeadersTest, MatchesTheSpecificationExample) {
  auto headers =
      StandardWebhookHeaders(kMessageId, FromUnixMillis(kTimestamp * 1000), kBody, {Key()});
  ASSERT_EQ(headers.size(), 3u);
  EXPECT_EQ(headers[0], std::make_pair(std::string("webhook-id"), std::string(kMessageId)));
  EXPECT_EQ(headers[1],
            std::make_pair(std::string("webhook-timestamp"), std::string("1614265330")));
  EXPECT_EQ(headers[2], std::make_pair(std::string("webhook-signature"), std::string(kSignature)));
}

TEST(StandardWebhookHeadersTest, TimestampIsWholeSecondsRoundedDown) {
  auto headers =
      StandardWebhookHeaders(kMessageId, FromUnixMillis(kTimestamp * 1000 + 999), kBody, {Key()});
  EXPECT_EQ(headers[1].second, "1614265330");
  EXPECT_EQ(headers[2].second, kSignature);
}

TEST(StandardWebhookHeadersTest, NoKeyNoSignature) {
  auto headers = StandardWebhookHeaders("evt_1", FromUnixMillis(kTimestamp * 1000), kBody, {});
  ASSERT_EQ(headers.size(), 2u);
  EXPECT_EQ(headers[0].first, "webhook-id");
  EXPECT_EQ(headers[0].second, "evt_1");
  EXPECT_EQ(headers[1].first, "webhook-timestamp");
}

// While a secret rotates: one "v1,<sig>" per key, space-separated, the new key's first, each the
// signature that key alone gives.
TEST(StandardWebhookHeadersTest, TwoKeysGiveTwoSignaturesNewFirst) {
  const std::string old_key = Key();
  const std::string new_key = "0123456789abcdef0123456789abcdef";
  const TimePoint at = FromUnixMillis(kTimestamp * 1000);
  auto both = StandardWebhookHeaders(kMessageId, at, kBody, {new_key, old_key});
  auto only_new = StandardWebhookHeaders(kMessageId, at, kBody, {new_key});
  ASSERT_EQ(both.size(), 3u);
  EXPECT_EQ(both[2].second, only_new[2].second + " " + kSignature);

  const std::string new_secret = "whsec_" + Base64Encode(new_key);
  std::string why;
  EXPECT_TRUE(VerifyStandardSignature(AsRequest(both, kBody), kSecret, &why)) << why;
  EXPECT_TRUE(VerifyStandardSignature(AsRequest(both, kBody), new_secret, &why)) << why;
  EXPECT_FALSE(VerifyStandardSignature(AsRequest(only_new, kBody), kSecret));
}

TEST(StandardWebhookHeadersTest, SinkVerifierAcceptsWhatTheSignerProduces) {
  // The sink's verifier computes the HMAC itself (OpenSSL directly), so this cross-checks.
  const std::string body("binary\0body\xff with \"json\"", 25);
  auto headers =
      StandardWebhookHeaders("01JABCDEF", FromUnixMillis(1'700'000'123'456), body, {Key()});
  std::string why;
  EXPECT_TRUE(VerifyStandardSignature(AsRequest(headers, body), kSecret, &why)) << why;

  // And rejects a tampered body, a wrong secret, a missing signature.
  EXPECT_FALSE(VerifyStandardSignature(AsRequest(headers, body + "x"), kSecret));
  EXPECT_FALSE(
      VerifyStandardSignature(AsRequest(headers, body), "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
  auto unsigned_headers = StandardWebhookHeaders("01JABCDEF", FromUnixMillis(0), body, {});
  EXPECT_FALSE(VerifyStandardSignature(AsRequest(unsigned_headers, body), kSecret, &why));
  EXPECT_FALSE(why.empty());
}

TEST(StandardWebhookHeadersTest, SinkVerifierAcceptsTheSpecificationExample) {
  SinkRequest r = AsRequest({{"webhook-id", kMessageId},
                             {"webhook-timestamp", std::to_string(kTimestamp)},
                             {"webhook-signature", std::string("v1,bm9wZQ== ") + kSignature}},
                            kBody);
  std::string why;
  EXPECT_TRUE(VerifyStandardSignature(r, kSecret, &why)) << why;
}

}  // namespace
}  // namespace hookrelay::delivery
