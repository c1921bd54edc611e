#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "model/source.h"

namespace hookrelay::ingest {

// Returns a request header's value by case-insensitive name.
using HeaderLookup = std::function<std::optional<std::string_view>(std::string_view name)>;

// Why a request failed verification: a fixed, small set (a metrics label, an API field).
enum class RejectReason {
  kMissingSignature,           // the scheme's header (or one of them) is absent
  kMalformedSignature,         // present but unreadable (no t=, no v1=, a timestamp not a number)
  kTimestampOutsideTolerance,  // stripe, standard: the signed time is too old or in the future
  kSignatureMismatch,          // no configured secret gives the signature sent
};
inline constexpr RejectReason kRejectReasons[] = {
    RejectReason::kMissingSignature, RejectReason::kMalformedSignature,
    RejectReason::kTimestampOutsideTolerance, RejectReason::kSignatureMismatch};
// "missing_signature", "malformed_signature", "timestamp_outside_tolerance", "signature_mismatch".
std::string_view RejectReasonName(RejectReason r);

// Checks a request's signature with the source's scheme. Pure: no I/O, time is passed in.
//   github:   X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>
//   stripe:   Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>[,v1=…]
//             and |now - t| <= tolerance
//   shopify:  X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256(secret, body)>
//   standard: webhook-id, webhook-timestamp, webhook-signature: "v1,<base64>" (space-separated
//             list) of HMAC-SHA256(key, "id.timestamp.body"), key = base64 of the secret after
//             "whsec_" (a secret without the prefix is used as raw bytes); timestamp within
//             tolerance
//   hmac:     <header>: <prefix><hex|base64 HMAC-<algorithm>(secret, body)>
// Any of the configured secrets may match, and a rotated-out one (verify.secrets_previous) until
// it expires at `now` (VerifyConfig::SecretsAt). Comparisons are constant-time.
// Returns OK or Unauthenticated with a reason that never contains a secret; on failure, sets
// *reason (when not null) to the kind of failure.
Status VerifySignature(const model::VerifyConfig& config, const HeaderLookup& header,
                       std::string_view body, TimePoint now, RejectReason* reason = nullptr);

}  // namespace hookrelay::ingest
