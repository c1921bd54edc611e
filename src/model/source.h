#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "model/expiring_secret.h"
#include "routing/event_type.h"

namespace hookrelay::model {

// How a source's requests are authenticated (401 when the signature does not match).
enum class VerifyScheme { kGithub, kStripe, kShopify, kStandard, kHmac };
std::string_view VerifySchemeName(VerifyScheme s);

struct VerifyConfig {
  VerifyScheme scheme = VerifyScheme::kHmac;
  std::vector<std::string> secrets;  // several while rotating; write-only
  // Rotated out ("secrets_previous"): each still verifies until its expiry.
  std::vector<ExpiringSecret> secrets_previous;
  Duration tolerance = std::chrono::minutes(5);  // timestamp schemes (stripe, standard)
  // Generic "hmac" scheme: signature in `header`, `algorithm` sha1|sha256|sha512 over the raw
  // body, `encoding` hex|base64, optional `prefix` (e.g. "sha256=").
  std::string header;
  std::string algorithm = "sha256";
  std::string encoding = "hex";
  std::string prefix;

  // The secrets that verify a request at `now`: the current ones, then the rotated-out ones not
  // yet expired.
  std::vector<std::string_view> SecretsAt(TimePoint now) const;
};

// Which part of a request identifies a provider's retry of the same webhook.
struct DedupRule {
  enum class Kind { kNone, kHeader, kJson };
  Kind kind = Kind::kNone;
  std::string key;  // header name, or top-level JSON field
};

constexpr uint64_t kDefaultMaxBody = 5ull << 20;

struct Source {
  std::string name;
  std::optional<VerifyConfig> verify;
  DedupRule dedup;  // defaults from the verify scheme when not given
  uint64_t max_body = kDefaultMaxBody;
  // Where its events' type is, when not where its scheme puts it (routing/event_type.h).
  std::optional<routing::TypeRule> type;
  // Where it was defined: "config" (the config file) or "api"; set by the catalog, not parsed.
  std::string origin;
};

// InvalidArgument naming `field` when `secret` cannot verify requests of `scheme` (a standard
// source's must be "whsec_" + base64); other schemes take any non-empty string.
Status CheckSourceSecret(VerifyScheme scheme, std::string_view secret, const std::string& field);

// {"name", "verify": {...}, "dedup": {"header": "X"} | {"json": "id"}, "max_body": "5MiB",
//  "type": {"header": "X-Event"} | {"json": "meta.kind"}}.
// Errors name the field ("verify.scheme", "dedup", "max_body", "type.json").
Result<Source> ParseSource(const boost::json::value& v);
// Secrets are never included: "verify.secrets" becomes a count ("secrets_set": 2), and
// "verify.secrets_previous" is left out (the API shows the rotations still valid, with their
// expiry only: api/sources_json.h).
boost::json::object SourceToJson(const Source& s);

// The default dedup key of each scheme: github X-GitHub-Delivery, stripe JSON "id", shopify
// X-Shopify-Webhook-Id, standard webhook-id; none for hmac or no verification.
DedupRule DefaultDedup(const std::optional<VerifyConfig>& verify);

// The type of an event received by `s` (routing::DeriveEventType with its scheme and rule).
// `body` is the parsed JSON body, nullptr when it is not JSON.
std::optional<std::string> EventTypeOf(const Source& s, routing::HeaderSpan headers,
                                       const boost::json::value* body);
// True when EventTypeOf reads the body (so the caller must parse it first).
bool TypeNeedsBody(const Source& s);

}  // namespace hookrelay::model
