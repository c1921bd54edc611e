#include "ingest/verify.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "common/crypto.h"

namespace hookrelay::ingest {
namespace {

using model::VerifyConfig;
using model::VerifyScheme;

struct Headers {
  std::map<std::string, std::string> values;  // lower-case names
  HeaderLookup Lookup() const {
    return [this](std::string_view name) -> std::optional<std::string_view> {
      std::string lower(name);
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto it = values.find(lower);
      if (it == values.end()) return std::nullopt;
      return std::string_view(it->second);
    };
  }
};

VerifyConfig Config(VerifyScheme scheme, std::vector<std::string> secrets) {
  VerifyConfig c;
  c.scheme = scheme;
  c.secrets = std::move(secrets);
  return c;
}

TimePoint AtUnix(int64_t seconds) { return FromUnixMillis(seconds * 1000); }

// GitHub's documented example: secret "It's a Secret to Everybody", payload "Hello, World!".
TEST(VerifyTest, GithubDocumentedVector) {
  Headers h{{{"x-hub-signature-256",
              "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"}}};
  auto c = Config(VerifyScheme::kGithub, {"It's a Secret to Everybody"});
  EXPECT_TRUE(VerifySignature(c, h.Lookup(), "Hello, World!", AtUnix(0)).ok());
  EXPECT_EQ(VerifySignature(c, h.Lookup(), "Hello, World?", AtUnix(0)).code(),
            Status::Code::kUnauthenticated);
  Headers none;
  Status missing = VerifySignature(c, none.Lookup(), "Hello, World!", AtUnix(0));
  EXPECT_NE(missing.message().find("X-Hub-Signature-256"), std::string::npos);
}

TEST(VerifyTest, RotatedSecretsEitherMatches) {
  Headers h{{{"x-hub-signature-256",
              "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"}}};
  auto c = Config(VerifyScheme::kGithub, {"new-secret", "It's a Secret to Everybody"});
  EXPECT_TRUE(VerifySignature(c, h.Lookup(), "Hello, World!", AtUnix(0)).ok());
  auto wrong = Config(VerifyScheme::kGithub, {"new-secret"});
  Status st = VerifySignature(wrong, h.Lookup(), "Hello, World!", AtUnix(0));
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.message().find("new-secret"), std::string::npos) << "never echo secrets";
}

// A rotated-out secret (verify.secrets_previous) verifies until its expiry, for every scheme (the
// list is built once, in VerifySignature): GitHub's and Stripe's here.
TEST(VerifyTest, ARotatedOutSecretVerifiesUntilItExpires) {
  Headers h{{{"x-hub-signature-256",
              "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"}}};
  auto c = Config(VerifyScheme::kGithub, {"new-secret"});
  c.secrets_previous = {{"It's a Secret to Everybody", AtUnix(100)}};
  EXPECT_TRUE(VerifySignature(c, h.Lookup(), "Hello, World!", AtUnix(99)).ok());
  RejectReason why{};
  Status st = VerifySignature(c, h.Lookup(), "Hello, World!", AtUnix(100), &why);
  EXPECT_EQ(st.code(), Status::Code::kUnauthenticated);
  EXPECT_EQ(why, RejectReason::kSignatureMismatch);

  const std::string body = R"({"id":"evt_1"})";
  const int64_t t = 1700000000;
  const std::string v1 = HexEncode(HmacSha256("whsec_old", std::to_string(t) + "." + body));
  Headers stripe{{{"stripe-signature", "t=" + std::to_string(t) + ",v1=" + v1}}};
  auto s = Config(VerifyScheme::kStripe, {"whsec_new"});
  s.secrets_previous = {{"whsec_gone", AtUnix(t + 5)}, {"whsec_old", AtUnix(t + 60)}};
  EXPECT_TRUE(VerifySignature(s, stripe.Lookup(), body, AtUnix(t + 30)).ok());
  EXPECT_FALSE(VerifySignature(s, stripe.Lookup(), body, AtUnix(t + 60)).ok());
}

// The Standard Webhooks specification's published example.
TEST(VerifyTest, StandardWebhooksSpecVector) {
  Headers h{{{"webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek"},
             {"webhook-timestamp", "1614265330"},
             {"webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}}};
  auto c = Config(VerifyScheme::kStandard, {"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"});
  const std::string body = R"({"test": 2432232314})";
  EXPECT_TRUE(VerifySignature(c, h.Lookup(), body, AtUnix(1614265330)).ok());
  // Several signatures, one valid.
  h.values["webhook-signature"] = "v1,bm90IHRoaXM= v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
  EXPECT_TRUE(VerifySignature(c, h.Lookup(), body, AtUnix(1614265330)).ok());
  // Outside the 5-minute tolerance either way.
  Status old = VerifySignature(c, h.Lookup(), body, AtUnix(1614265330 + 301));
  EXPECT_EQ(old.code(), Status::Code::kUnauthenticated);
  EXPECT_NE(old.message().find("tolerance"), std::string::npos);
  // The skew is shown rounded: "10m0s old", not "10m458ms old".
  Status older = VerifySignature(c, h.Lookup(), body, FromUnixMillis(1614265330LL * 1000 + 600458));
  EXPECT_NE(older.message().find("timestamp is 10m0s old"), std::string::npos) << older.message();
  EXPECT_FALSE(VerifySignature(c, h.Lookup(), body, AtUnix(1614265330 - 301)).ok());
  EXPECT_TRUE(VerifySignature(c, h.Lookup(), body, AtUnix(1614265330 + 299)).ok());
  // Tampered body.
  EXPECT_FALSE(VerifySignature(c, h.Lookup(), body + " ", AtUnix(1614265330)).ok());
}

TEST(VerifyTest, StripeTimestampedSignature) {
  const std::string secret = "whsec_stripe_test";
  const std::string body = R"({"id":"evt_1","object":"event"})";
  const int64_t t = 1700000000;
  std::string v1 = HexEncode(HmacSha256(secret, std::to_string(t) + "." + body));
  Headers h{{{"stripe-signature", "t=" + std::to_string(t) + ",v1=" + v1 + ",v0=deadbeef"}}};
  auto c = Config(VerifyScheme::kStripe, {secret});
  EXPECT_TRUE(VerifySignature(c, h.Lookup(), body, AtUnix(t + 10)).ok());
  EXPECT_FALSE(VerifySignature(c, h.Lookup(), body, AtUnix(t + 3600)).ok());
  h.values["stripe-signature"] = "v1=" + v1;
  EXPECT_NE(VerifySignature(c, h.Lookup(), body, AtUnix(t)).message().find("t="),
            std::string::npos);
}

TEST(VerifyTest, ShopifyBase64) {
  const std::string body = R"({"id":820982911946154500})";
  Headers h{{{"x-shopify-hmac-sha256", Base64Encode(HmacSha256("shpss_x", body))}}};
  auto c = Config(VerifyScheme::kShopify, {"shpss_x"});
  EXPECT_TRUE(VerifySignature(c, h.Lookup(), body, AtUnix(0)).ok());
  EXPECT_FALSE(
      VerifySignature(Config(VerifyScheme::kShopify, {"other"}), h.Lookup(), body, AtUnix(0)).ok());
}

TEST(VerifyTest, GenericHmacWithPrefixAndEncoding) {
  VerifyConfig c = Config(VerifyScheme::kHmac, {"k"});
  c.header = "X-Signature";
  c.algorithm = "sha512";
  c.encoding = "base64";
  c.prefix = "sha512=";
  Headers h{{{"x-signature", "sha512=" + Base64Encode(HmacSha512("k", "payload"))}}};
  EXPECT_TRUE(VerifySignature(c, h.Lookup(), "payload", AtUnix(0)).ok());
  c.prefix = "";
  EXPECT_FALSE(VerifySignature(c, h.Lookup(), "payload", AtUnix(0)).ok());
  c.algorithm = "sha1";
  c.encoding = "hex";
  h.values["x-signature"] = HexEncode(HmacSha1("k", "payload"));
  EXPECT_TRUE(VerifySignature(c, h.Lookup(), "payload", AtUnix(0)).ok());
}

}  // namespace
}  // namespace hookrelay::ingest

namespace hookrelay::ingest {
namespace {

// Found by verify_fuzzer: a timestamp near INT64_MAX overflowed when scaled to milliseconds.
TEST(VerifyTest, AbsurdTimestampsAreRejectedNotOverflowed) {
  auto c = Config(VerifyScheme::kStandard, {"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"});
  for (const char* ts : {"9223372036854775807", "-9223372036854775808", "99999999999999"}) {
    Headers h{{{"webhook-id", "msg"}, {"webhook-timestamp", ts}, {"webhook-signature", "v1,x"}}};
    Status st = VerifySignature(c, h.Lookup(), "{}", AtUnix(1614265330));
    EXPECT_EQ(st.code(), Status::Code::kUnauthenticated) << ts;
  }
}

}  // namespace
}  // namespace hookrelay::ingest

namespace hookrelay::ingest {
namespace {

RejectReason ReasonOf(const VerifyConfig& c, const Headers& h, std::string_view body,
                      TimePoint now) {
  const RejectReason unset = static_cast<RejectReason>(99);  // no reason of the set
  RejectReason reason = unset;
  Status st = VerifySignature(c, h.Lookup(), body, now, &reason);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(reason, unset) << st.ToString();
  return reason;
}

// Every failure names one of the fixed reasons (a metrics label, an API field).
TEST(VerifyTest, FailuresSayWhichReason) {
  auto gh = Config(VerifyScheme::kGithub, {"s"});
  EXPECT_EQ(ReasonOf(gh, {}, "{}", AtUnix(0)), RejectReason::kMissingSignature);
  EXPECT_EQ(ReasonOf(gh, {{{"x-hub-signature-256", "sha256=00"}}}, "{}", AtUnix(0)),
            RejectReason::kSignatureMismatch);

  auto stripe = Config(VerifyScheme::kStripe, {"s"});
  const int64_t t = 1614265330;
  const std::string v1 = HexEncode(HmacSha256("s", std::to_string(t) + ".{}"));
  Headers good{{{"stripe-signature", "t=" + std::to_string(t) + ",v1=" + v1}}};
  RejectReason untouched = RejectReason::kMalformedSignature;
  EXPECT_TRUE(VerifySignature(stripe, good.Lookup(), "{}", AtUnix(t), &untouched).ok());
  EXPECT_EQ(untouched, RejectReason::kMalformedSignature) << "left alone on success";
  EXPECT_EQ(ReasonOf(stripe, good, "{}", AtUnix(t + 3600)),
            RejectReason::kTimestampOutsideTolerance);
  EXPECT_EQ(ReasonOf(stripe, good, "{} ", AtUnix(t)), RejectReason::kSignatureMismatch);
  EXPECT_EQ(ReasonOf(stripe, {{{"stripe-signature", "v1=" + v1}}}, "{}", AtUnix(t)),
            RejectReason::kMalformedSignature);
  EXPECT_EQ(ReasonOf(stripe, {{{"stripe-signature", "t=" + std::to_string(t)}}}, "{}", AtUnix(t)),
            RejectReason::kMalformedSignature);

  auto standard = Config(VerifyScheme::kStandard, {"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"});
  EXPECT_EQ(
      ReasonOf(standard,
               {{{"webhook-id", "m"}, {"webhook-timestamp", "x"}, {"webhook-signature", "v1,x"}}},
               "{}", AtUnix(t)),
      RejectReason::kMalformedSignature);
  EXPECT_EQ(
      ReasonOf(standard,
               {{{"webhook-id", "m"}, {"webhook-timestamp", "1"}, {"webhook-signature", "v1,x"}}},
               "{}", AtUnix(t)),
      RejectReason::kTimestampOutsideTolerance);
  EXPECT_EQ(ReasonOf(standard, {{{"webhook-id", "m"}}}, "{}", AtUnix(t)),
            RejectReason::kMissingSignature);

  auto hmac = Config(VerifyScheme::kHmac, {"s"});
  hmac.header = "X-Sig";
  EXPECT_EQ(ReasonOf(hmac, {}, "{}", AtUnix(0)), RejectReason::kMissingSignature);
  EXPECT_EQ(ReasonOf(Config(VerifyScheme::kShopify, {"s"}), {{{"x-shopify-hmac-sha256", "x"}}},
                     "{}", AtUnix(0)),
            RejectReason::kSignatureMismatch);

  std::set<std::string_view> names;
  for (RejectReason r : kRejectReasons) names.insert(RejectReasonName(r));
  EXPECT_EQ(names,
            (std::set<std::string_view>{"missing_signature", "malformed_signature",
                                        "timestamp_outside_tolerance", "signature_mismatch"}));
}

}  // namespace
}  // namespace hookrelay::ingest
