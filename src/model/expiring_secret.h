#pragma once

#include <boost/json/value.hpp>
#include <string>

#include "common/clock.h"
#include "common/result.h"

namespace hookrelay::model {

// A secret being rotated out: it still counts (signs a destination's requests, or verifies a
// source's) until `expires_at`, beside the current one, so the other side can move to the new
// secret during a grace period (docs/security.md, "Rotating secrets").
struct ExpiringSecret {
  std::string secret;  // write-only
  TimePoint expires_at;
  bool ValidAt(TimePoint now) const { return now < expires_at; }
  bool operator==(const ExpiringSecret&) const = default;
};

// The longest grace period of a rotation, as Svix and Outpost allow.
inline constexpr Duration kMaxSecretGrace = std::chrono::hours(24 * 7);

// {"secret": "…", "expires_at": "<RFC 3339 time>"}. Errors name `field` ("signing_secret_previous",
// "secrets_previous[0].expires_at"). The secret's format is the caller's to check.
Result<ExpiringSecret> ParseExpiringSecret(const boost::json::value& v, const std::string& field);

}  // namespace hookrelay::model
