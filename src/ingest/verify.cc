#include "ingest/verify.h"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <vector>

#include "common/crypto.h"
#include "common/standard_webhooks.h"
#include "common/units.h"

namespace hookrelay::ingest {
namespace {

using model::VerifyConfig;
using model::VerifyScheme;
using Secrets = std::vector<std::string_view>;

// Where the verifiers record which kind of failure they found (Reason below).
struct Why {
  RejectReason* out;
  Status Set(RejectReason r, Status st) const {
    if (out) *out = r;
    return st;
  }
};

Status Missing(std::string_view header) {
  return Status::Unauthenticated("missing " + std::string(header) + " header");
}

Status Mismatch() {
  return Status::Unauthenticated("signature does not match any configured secret");
}

std::optional<int64_t> ParseUnixSeconds(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

Status CheckTimestamp(int64_t unix_seconds, TimePoint now, Duration tolerance) {
  // The timestamp comes from the request, so it can be any int64: an absurd one is simply far
  // outside the tolerance (and must not overflow on the way).
  int64_t skew_ms = 0;
  if (__builtin_mul_overflow(unix_seconds, int64_t{1000}, &skew_ms) ||
      __builtin_sub_overflow(ToUnixMillis(now), skew_ms, &skew_ms) ||
      skew_ms == std::numeric_limits<int64_t>::min()) {
    return Status::Unauthenticated("timestamp is outside the tolerance of " +
                                   FormatDuration(tolerance));
  }
  if (std::llabs(skew_ms) > tolerance.count()) {
    return Status::Unauthenticated("timestamp is " +
                                   FormatDurationRounded(Duration(std::llabs(skew_ms))) +
                                   (skew_ms > 0 ? " old" : " in the future") +
                                   ", outside the tolerance of " + FormatDuration(tolerance));
  }
  return Status::Ok();
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    size_t cut = s.find(sep);
    std::string_view part = s.substr(0, cut);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty()) out.push_back(part);
    if (cut == std::string_view::npos) break;
    s.remove_prefix(cut + 1);
  }
  return out;
}

bool AnyMatch(const std::vector<std::string>& expected, std::string_view got) {
  bool match = false;
  // Check every candidate (no early exit) so timing does not reveal which secret matched.
  for (const std::string& e : expected) match |= ConstantTimeEqual(e, got);
  return match;
}

Status VerifyGithub(const Secrets& secrets, const HeaderLookup& header, std::string_view body,
                    Why why) {
  auto sig = header("X-Hub-Signature-256");
  if (!sig) return why.Set(RejectReason::kMissingSignature, Missing("X-Hub-Signature-256"));
  std::vector<std::string> expected;
  for (std::string_view s : secrets) expected.push_back("sha256=" + HexEncode(HmacSha256(s, body)));
  return AnyMatch(expected, *sig) ? Status::Ok()
                                  : why.Set(RejectReason::kSignatureMismatch, Mismatch());
}

Status VerifyStripe(const VerifyConfig& c, const Secrets& secrets, const HeaderLookup& header,
                    std::string_view body, TimePoint now, Why why) {
  auto sig = header("Stripe-Signature");
  if (!sig) return why.Set(RejectReason::kMissingSignature, Missing("Stripe-Signature"));
  std::optional<int64_t> t;
  std::vector<std::string_view> v1;
  for (std::string_view part : Split(*sig, ',')) {
    size_t eq = part.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view k = part.substr(0, eq), v = part.substr(eq + 1);
    if (k == "t") t = ParseUnixSeconds(v);
    if (k == "v1") v1.push_back(v);
  }
  if (!t) {
    return why.Set(RejectReason::kMalformedSignature,
                   Status::Unauthenticated("Stripe-Signature has no valid t= timestamp"));
  }
  if (v1.empty()) {
    return why.Set(RejectReason::kMalformedSignature,
                   Status::Unauthenticated("Stripe-Signature has no v1= signature"));
  }
  if (Status st = CheckTimestamp(*t, now, c.tolerance); !st.ok()) {
    return why.Set(RejectReason::kTimestampOutsideTolerance, std::move(st));
  }
  std::string payload = std::to_string(*t) + "." + std::string(body);
  std::vector<std::string> expected;
  for (std::string_view s : secrets) expected.push_back(HexEncode(HmacSha256(s, payload)));
  bool match = false;
  for (std::string_view got : v1) match |= AnyMatch(expected, got);
  return match ? Status::Ok() : why.Set(RejectReason::kSignatureMismatch, Mismatch());
}

Status VerifyShopify(const Secrets& secrets, const HeaderLookup& header, std::string_view body,
                     Why why) {
  auto sig = header("X-Shopify-Hmac-Sha256");
  if (!sig) return why.Set(RejectReason::kMissingSignature, Missing("X-Shopify-Hmac-Sha256"));
  std::vector<std::string> expected;
  for (std::string_view s : secrets) expected.push_back(Base64Encode(HmacSha256(s, body)));
  return AnyMatch(expected, *sig) ? Status::Ok()
                                  : why.Set(RejectReason::kSignatureMismatch, Mismatch());
}

Status VerifyStandard(const VerifyConfig& c, const Secrets& secrets, const HeaderLookup& header,
                      std::string_view body, TimePoint now, Why why) {
  auto id = header("webhook-id");
  auto ts = header("webhook-timestamp");
  auto sig = header("webhook-signature");
  if (!id) return why.Set(RejectReason::kMissingSignature, Missing("webhook-id"));
  if (!ts) return why.Set(RejectReason::kMissingSignature, Missing("webhook-timestamp"));
  if (!sig) return why.Set(RejectReason::kMissingSignature, Missing("webhook-signature"));
  auto t = ParseUnixSeconds(*ts);
  if (!t) {
    return why.Set(RejectReason::kMalformedSignature,
                   Status::Unauthenticated("webhook-timestamp is not a Unix time in seconds"));
  }
  if (Status st = CheckTimestamp(*t, now, c.tolerance); !st.ok()) {
    return why.Set(RejectReason::kTimestampOutsideTolerance, std::move(st));
  }
  std::vector<std::string> expected;
  for (std::string_view s : secrets) {
    // Checked when the source was configured (model/source.cc): each is a whsec_ secret.
    Result<std::string> key = standard_webhooks::DecodeSecret(s);
    if (!key.ok()) continue;
    expected.push_back(standard_webhooks::Signature(*key, *id, *ts, body));
  }
  bool match = false;
  for (std::string_view entry : Split(*sig, ' ')) {
    if (entry.substr(0, 3) != "v1,") continue;
    match |= AnyMatch(expected, entry.substr(3));
  }
  return match ? Status::Ok() : why.Set(RejectReason::kSignatureMismatch, Mismatch());
}

Status VerifyHmac(const VerifyConfig& c, const Secrets& secrets, const HeaderLookup& header,
                  std::string_view body, Why why) {
  auto sig = header(c.header);
  if (!sig) return why.Set(RejectReason::kMissingSignature, Missing(c.header));
  std::vector<std::string> expected;
  for (std::string_view s : secrets) {
    std::string mac = c.algorithm == "sha1"     ? HmacSha1(s, body)
                      : c.algorithm == "sha512" ? HmacSha512(s, body)
                                                : HmacSha256(s, body);
    expected.push_back(c.prefix + (c.encoding == "base64" ? Base64Encode(mac) : HexEncode(mac)));
  }
  return AnyMatch(expected, *sig) ? Status::Ok()
                                  : why.Set(RejectReason::kSignatureMismatch, Mismatch());
}

}  // namespace

std::string_view RejectReasonName(RejectReason r) {
  switch (r) {
    case RejectReason::kMissingSignature: return "missing_signature";
    case RejectReason::kMalformedSignature: return "malformed_signature";
    case RejectReason::kTimestampOutsideTolerance: return "timestamp_outside_tolerance";
    case RejectReason::kSignatureMismatch: return "signature_mismatch";
  }
  return "signature_mismatch";
}

Status VerifySignature(const VerifyConfig& config, const HeaderLookup& header,
                       std::string_view body, TimePoint now, RejectReason* reason) {
  const Why why{reason};
  const Secrets secrets = config.SecretsAt(now);  // a rotated-out secret until it expires
  switch (config.scheme) {
    case VerifyScheme::kGithub: return VerifyGithub(secrets, header, body, why);
    case VerifyScheme::kStripe: return VerifyStripe(config, secrets, header, body, now, why);
    case VerifyScheme::kShopify: return VerifyShopify(secrets, header, body, why);
    case VerifyScheme::kStandard: return VerifyStandard(config, secrets, header, body, now, why);
    case VerifyScheme::kHmac: return VerifyHmac(config, secrets, header, body, why);
  }
  return why.Set(RejectReason::kSignatureMismatch, Mismatch());
}

}  // namespace hookrelay::ingest
