#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "policy/breaker.h"
#include "policy/retry_policy.h"

namespace hookrelay::model {

struct Destination {
  std::string name;
  std::string url;  // http(s)
  std::vector<std::pair<std::string, std::string>> headers;
  policy::RetryPolicy policy;  // replay_window lives here (the destination's own or the preset's)
  std::optional<std::string> signing_secret;  // "whsec_" + base64; write-only
  int max_concurrency = 16;
  std::optional<double> rate_limit;  // requests per second
  policy::BreakerConfig breaker;
  bool ordered = false;
  bool paused = false;
  // Send to loopback/private addresses even without --allow-private-destinations.
  bool allow_private = false;
  // 410 Gone pauses the destination (Standard Webhooks' recommendation).
  bool pause_on_gone = true;
  // Where it was defined: "config" (the config file) or "api"; set by the catalog, not parsed.
  std::string origin;
};

// The destination JSON of ARCHITECTURE.md section 3 (plus "paused", "allow_private",
// "pause_on_gone"). Errors name the field ("url", "policy.cap", "breaker.open[1]").
Result<Destination> ParseDestination(const boost::json::value& v);
// Secrets are never included: "signing_secret" becomes "signing_secret_set": true|false, and the
// values of headers that carry credentials (IsCredentialHeader) are shown as kRedacted.
boost::json::object DestinationToJson(const Destination& d);

inline constexpr std::string_view kRedacted = "(redacted)";
// Header names whose values are credentials: Cookie, and any name containing auth, token,
// secret, key, password or signature (case-insensitive): Authorization, X-Api-Key, …
bool IsCredentialHeader(std::string_view name);

// Checks a destination URL: absolute http or https with a host; no user-info (credentials in
// URLs end up in logs). The address itself is checked at connect time (SSRF guard).
Status ValidateDestinationUrl(std::string_view url);

// The HMAC key of a "whsec_…" signing secret (its base64-decoded bytes), or an error.
Result<std::string> SigningKey(std::string_view secret);

}  // namespace hookrelay::model
