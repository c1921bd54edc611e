#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "model/destination_kind.h"
#include "model/destination_tls.h"
#include "model/expiring_secret.h"
#include "model/transform_spec.h"
#include "policy/breaker.h"
#include "policy/retry_policy.h"

namespace hookrelay::model {

// Which of the headers an event arrived with are sent on to a destination ("forward_headers").
// Whatever the mode, headers that are hop-by-hop, framing (Host, Content-Length, Expect) or
// credentials meant for hookrelay (Authorization, Cookie, Proxy-*) are never forwarded; see
// delivery::OutgoingHeaders.
struct ForwardHeaders {
  enum class Mode { kAll, kNone, kList };
  Mode mode = Mode::kAll;
  std::vector<std::string> names;  // kList: the names, as given (matched case-insensitively)
  bool operator==(const ForwardHeaders&) const = default;
};

// Where an ordered destination's order key comes from ("order_key"): a request header, or a
// dotted path into a JSON object body ("data.object.customer"). kNone: one order for the whole
// destination (when `ordered` is true).
struct OrderKey {
  enum class Kind { kNone, kHeader, kJson };
  Kind kind = Kind::kNone;
  std::string name;  // kHeader: the header name; kJson: the dotted path
  bool operator==(const OrderKey&) const = default;
};

struct Destination {
  std::string name;
  // Which transport carries its deliveries ("kind", model/destination_kind.h): kHttpKind (the
  // default) or kRedisKind. Its own settings are in the member of that kind's name below.
  std::string kind = std::string(kHttpKind);
  std::string url;  // http(s) for kind http; redis:// for kind redis (ParseRedisUrl)
  // Kind redis: the stream and its trimming; set exactly when kind is "redis".
  std::optional<RedisSettings> redis;
  std::vector<std::pair<std::string, std::string>> headers;
  ForwardHeaders forward_headers;
  // Header names (besides those IsCredentialHeader recognizes) whose values are secrets: shown
  // as kRedacted in API and CLI output, sent as they are.
  std::vector<std::string> secret_headers;
  policy::RetryPolicy policy;  // replay_window lives here (the destination's own or the preset's)
  std::optional<std::string> signing_secret;              // "whsec_" + base64; write-only
  std::optional<ExpiringSecret> signing_secret_previous;  // needs signing_secret
  int max_concurrency = 16;
  std::optional<double> rate_limit;  // requests per second
  policy::BreakerConfig breaker;
  // Ordered delivery (docs/delivery.md, "Ordered delivery"): an event is sent only once the
  // ones received before it for the same key are delivered or have failed for good. `ordered`
  // without an order key: one order for the whole destination; with one: an order per key value.
  bool ordered = false;
  OrderKey order_key;
  bool paused = false;
  // Send to loopback/private addresses even without --allow-private-destinations.
  bool allow_private = false;
  // 410 Gone pauses the destination (Standard Webhooks' recommendation).
  bool pause_on_gone = true;
  DestinationTls tls;    // client certificate and key, private CA ("tls"); key write-only
  DestinationAuth auth;  // sent as the Authorization header ("auth"); write-only
  // Run on each request before it is sent (docs/transforms.md); a route's own replaces it.
  std::optional<TransformSpec> transform;
  // Where it was defined: "config" (the config file) or "api"; set by the catalog, not parsed.
  std::string origin;
};

// The destination JSON of docs/api.md ("Changing the catalog") (plus "paused", "allow_private",
// "pause_on_gone", "secret_headers", "auth"). Errors name the field ("url", "policy.cap",
// "breaker.open[1]", "forward_headers[0]", "tls.client_key", "order_key.json"). "auth" and a
// configured Authorization header exclude each other. "kind" ("http" when absent) decides how
// "url" is checked and which kind's fields may appear (CheckKindFields: "stream: only for kind
// redis").
Result<Destination> ParseDestination(const boost::json::value& v);
// Secrets are never included: "signing_secret" becomes "signing_secret_set": true|false, and
// "signing_secret_previous" becomes "signing_secret_rotation": {"old_expires_at": …} (null when
// there is none); "tls"
// and "auth" are summaries (DestinationTlsToJson, DestinationAuthToJson; null when unset), the
// values of headers that carry credentials (IsCredentialHeader, or named in secret_headers) are
// shown as kRedacted, and so are the URL's user-info and credential-like query values
// (RedactUrl: "redis://***@host:6379/0"). "kind" is always there, and the kind's own fields
// ("stream", "maxlen") with it.
boost::json::object DestinationToJson(const Destination& d);

// {"header": name}, {"json": path}, or null (kNone).
boost::json::value OrderKeyToJson(const OrderKey& k);

// "all", "none", or an array of names.
boost::json::value ForwardHeadersToJson(const ForwardHeaders& f);

inline constexpr std::string_view kRedacted = "(redacted)";
// Names (of headers or URL query parameters) whose values are credentials, by pattern
// (case-insensitive): any name containing auth, token, secret, pass, key, session, credential,
// signature, hmac or cookie, and names with a part "sig", "pw" or "pwd" (split at '-', '_', '.'):
// Authorization, X-Api-Key, X-Pass, X-Session, X-Credential, X-Hub-Signature-256,
// Stripe-Signature, sig, pw, db_pwd, …
bool IsCredentialName(std::string_view name);
// A header whose value is a credential: IsCredentialName, or one of `secret_headers`
// (case-insensitive).
bool IsCredentialHeader(std::string_view name, const std::vector<std::string>& secret_headers = {});
// `url` with the value of every query parameter whose name IsCredentialName replaced by
// kRedacted ("https://h/x?token=(redacted)&a=1"); unchanged when there is none or it does not
// parse.
std::string RedactUrl(std::string_view url);
// The secrets a destination's requests carry, as sent: the values of its credential headers
// (IsCredentialHeader; for "Bearer X"-style values also X alone), of its "auth" (the header
// value, the token, the password), of its URL's user-info password (a redis:// URL's) and of its
// URL's credential-named query, fragment and path parameters. For removing them from what the
// destination answers (an endpoint may echo its request), see RedactDestinationSecrets.
std::vector<std::string> DestinationSecretValues(const Destination& d);
// `text` (a response snippet) with DestinationSecretValues(d) replaced by kRedacted.
std::string RedactDestinationSecrets(const Destination& d, std::string text);
// Credentials sent *to hookrelay* (never forwarded, stored redacted): Authorization, Cookie,
// Proxy-Authorization (case-insensitive).
bool IsHookrelayCredential(std::string_view name);
// Received headers never sent on to a destination, whatever forward_headers says: hop-by-hop
// ones (Connection, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade), Host,
// Content-Length, Expect, and IsHookrelayCredential ones.
bool IsNeverForwarded(std::string_view name);
// The hop-by-hop and framing part of IsNeverForwarded (no credentials): Connection, Keep-Alive,
// Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade, Host, Content-Length, Expect. The HTTP client
// sets these, so a destination's `headers` may not name them either.
bool IsHopByHopOrFraming(std::string_view name);
// webhook-id, webhook-timestamp, webhook-signature (case-insensitive): hookrelay's own, never
// set by a destination's `headers`.
bool IsSignatureHeader(std::string_view name);

// Checks a kind http destination's URL: absolute http or https with a host; no user-info
// (credentials in URLs end up in logs). The address itself is checked at connect time (SSRF
// guard). Kind redis's URL is checked by ParseRedisUrl.
Status ValidateDestinationUrl(std::string_view url);

// The HMAC key of a "whsec_…" signing secret (its base64-decoded bytes), or an error.
Result<std::string> SigningKey(std::string_view secret);

// The HMAC keys a request sent at `now` is signed with, in the order of its webhook-signature:
// the current secret's, then the previous one's while `now` is before its expiry. Empty when the
// destination does not sign.
std::vector<std::string> SigningKeys(const Destination& d, TimePoint now);

}  // namespace hookrelay::model
