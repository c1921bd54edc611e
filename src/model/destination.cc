#include "model/destination.h"

#include <algorithm>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <cctype>
#include <charconv>

#include "common/ascii.h"
#include "common/crypto.h"
#include "common/redact.h"
#include "common/standard_webhooks.h"
#include "common/time_format.h"
#include "common/units.h"
#include "model/json_fields.h"
#include "model/transform_spec.h"
#include "policy/breaker_json.h"

namespace hookrelay::model {

namespace json = boost::json;

Status ValidateDestinationUrl(std::string_view url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) return Status::InvalidArgument("must be an absolute http(s) URL", "url");
  std::string scheme(parsed->scheme());
  if (scheme != "http" && scheme != "https") {
    return Status::InvalidArgument("must be http(s), not " + scheme, "url");
  }
  if (!parsed->has_authority() || parsed->encoded_host().empty()) {
    return Status::InvalidArgument("must name a host", "url");
  }
  // RFC 1035 §2.3.4: a host name has at most 253 characters (an IP literal fewer); a longer one
  // could never be resolved, so every delivery would fail.
  if (parsed->encoded_host().size() > 253) {
    return Status::InvalidArgument("host name is longer than 253 characters", "url");
  }
  // Port 0 cannot be connected to and one above 65535 does not exist: every delivery would fail.
  if (parsed->has_port() && !parsed->port().empty()) {
    const std::string_view port = parsed->port();
    unsigned long number = 0;
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (error != std::errc() || end != port.data() + port.size() || number == 0 || number > 65535) {
      return Status::InvalidArgument(
          "port " + std::string(port) + " is not a TCP port (1 to 65535)", "url");
    }
  }
  if (parsed->has_userinfo()) {
    return Status::InvalidArgument(
        "must not carry credentials; put them in the destination's headers", "url");
  }
  return Status::Ok();
}

Result<std::string> SigningKey(std::string_view secret) {
  Result<std::string> key = standard_webhooks::DecodeSecret(secret);
  if (!key.ok()) return Status::InvalidArgument(key.status().message(), "signing_secret");
  return key;
}

std::vector<std::string> SigningKeys(const Destination& d, TimePoint now) {
  std::vector<std::string> keys;
  if (!d.signing_secret) return keys;
  // Both were checked when the destination was parsed; a key that fails here is left out.
  if (auto k = standard_webhooks::DecodeSecret(*d.signing_secret); k.ok()) {
    keys.push_back(std::move(*k));
  }
  if (d.signing_secret_previous && d.signing_secret_previous->ValidAt(now)) {
    if (auto k = standard_webhooks::DecodeSecret(d.signing_secret_previous->secret); k.ok()) {
      keys.push_back(std::move(*k));
    }
  }
  return keys;
}

namespace {

// {"secret": "whsec_…", "expires_at": "2026-12-06T10:00:00Z"}
Result<ExpiringSecret> ParsePreviousSigningSecret(const json::value& v) {
  constexpr char kField[] = "signing_secret_previous";
  HR_ASSIGN_OR_RETURN(ExpiringSecret p, ParseExpiringSecret(v, kField));
  if (auto key = standard_webhooks::DecodeSecret(p.secret); !key.ok()) {
    return Status::InvalidArgument(key.status().message(), std::string(kField) + ".secret");
  }
  return p;
}

// An RFC 9110 token: what a header name may be.
bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// An array of header names (field "forward_headers" or "secret_headers").
Result<std::vector<std::string>> GetHeaderNames(const json::value& v, const std::string& field) {
  if (!v.is_array()) return Status::InvalidArgument("must be an array of header names", field);
  std::vector<std::string> names;
  for (size_t i = 0; i < v.as_array().size(); ++i) {
    const std::string item = field + "[" + std::to_string(i) + "]";
    auto name = GetString(v.as_array()[i], item);
    if (!name.ok()) return name.status();
    if (!IsToken(*name)) return Status::InvalidArgument("is not a valid header name", item);
    names.push_back(*name);
  }
  return names;
}

Result<ForwardHeaders> ParseForwardHeaders(const json::value& v) {
  const std::string field = "forward_headers";
  ForwardHeaders f;
  if (v.is_string()) {
    if (v.as_string() == "all") return f;
    if (v.as_string() == "none") {
      f.mode = ForwardHeaders::Mode::kNone;
      return f;
    }
  } else if (v.is_array()) {
    auto names = GetHeaderNames(v, field);
    if (!names.ok()) return names.status();
    for (size_t i = 0; i < names->size(); ++i) {
      if (IsNeverForwarded((*names)[i])) {
        return Status::InvalidArgument(
            (*names)[i] +
                " is never forwarded (hop-by-hop, framing, or a credential meant for hookrelay); "
                "to send one, set it in the destination's headers",
            field + "[" + std::to_string(i) + "]");
      }
    }
    f.mode = ForwardHeaders::Mode::kList;
    f.names = std::move(*names);
    return f;
  }
  return Status::InvalidArgument(
      "must be \"all\", \"none\" or an array of header names such as [\"X-GitHub-Event\"]", field);
}

// {"header": "X-Shop-Domain"} or {"json": "data.object.customer"}.
Result<OrderKey> ParseOrderKey(const json::value& v) {
  constexpr std::string_view kShape =
      "must be {\"header\": \"X-Shop-Domain\"} or {\"json\": \"data.object.customer\"}";
  if (!v.is_object() || v.as_object().size() != 1) {
    return Status::InvalidArgument(std::string(kShape), "order_key");
  }
  const auto& [key, value] = *v.as_object().begin();
  const std::string field = "order_key." + std::string(key);
  if (key != "header" && key != "json") {
    return Status::InvalidArgument(
        "unknown order key \"" + std::string(key) + "\" (use \"header\" or \"json\")", field);
  }
  auto name = GetString(value, field);
  if (!name.ok()) return name.status();
  if (name->empty()) return Status::InvalidArgument("must not be empty", field);
  if (name->size() > 256) return Status::InvalidArgument("is longer than 256 bytes", field);
  if (key == "header") {
    if (name->find_first_of(" :\r\n\t") != std::string::npos) {
      return Status::InvalidArgument("is not a valid HTTP header name", field);
    }
    return OrderKey{OrderKey::Kind::kHeader, *name};
  }
  // A dotted path of object member names: no empty part ("a..b", ".a", "a.").
  size_t start = 0;
  for (;;) {
    const size_t dot = name->find('.', start);
    const size_t end = dot == std::string::npos ? name->size() : dot;
    if (end == start) {
      return Status::InvalidArgument(
          "must be a dotted path of member names such as \"data.object.customer\" (no empty part)",
          field);
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return OrderKey{OrderKey::Kind::kJson, *name};
}

}  // namespace

json::value OrderKeyToJson(const OrderKey& k) {
  switch (k.kind) {
    case OrderKey::Kind::kHeader: return json::object{{"header", k.name}};
    case OrderKey::Kind::kJson: return json::object{{"json", k.name}};
    case OrderKey::Kind::kNone: break;
  }
  return nullptr;
}

Result<Destination> ParseDestination(const json::value& v) {
  if (!v.is_object()) return Status::InvalidArgument("a destination must be a JSON object");
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(CheckKnownFields(o, {"name",
                                          "kind",
                                          "url",
                                          "stream",
                                          "maxlen",
                                          "headers",
                                          "policy",
                                          "signing_secret",
                                          "signing_secret_previous",
                                          "max_concurrency",
                                          "rate_limit",
                                          "breaker",
                                          "ordered",
                                          "order_key",
                                          "replay_window",
                                          "paused",
                                          "allow_private",
                                          "pause_on_gone",
                                          "forward_headers",
                                          "secret_headers",
                                          "tls",
                                          "auth",
                                          "transform"}));
  Destination d;
  if (const json::value* t = o.if_contains("transform"); t && !t->is_null()) {
    HR_ASSIGN_OR_RETURN(d.transform, ParseTransformSpec(*t, "transform"));
  }
  const json::value* name = o.if_contains("name");
  if (!name) return Status::InvalidArgument("is required", "name");
  auto n = GetString(*name, "name");
  if (!n.ok()) return n.status();
  HR_RETURN_IF_ERROR(ValidateName(*n));
  d.name = *n;

  if (const json::value* k = o.if_contains("kind"); k && !k->is_null()) {
    HR_ASSIGN_OR_RETURN(d.kind, GetString(*k, "kind"));
    bool known = false;
    std::string names;
    for (std::string_view name : DestinationKindNames()) {
      known = known || name == d.kind;
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    if (!known) {
      return Status::InvalidArgument("unknown kind \"" + d.kind + "\" (one of " + names + ")",
                                     "kind");
    }
  }
  HR_RETURN_IF_ERROR(CheckKindFields(o, d.kind));

  const json::value* url = o.if_contains("url");
  if (!url) return Status::InvalidArgument("is required", "url");
  auto u = GetString(*url, "url");
  if (!u.ok()) return u.status();
  if (d.kind == kRedisKind) {
    HR_RETURN_IF_ERROR(ParseRedisUrl(*u).status());
    HR_ASSIGN_OR_RETURN(d.redis, ParseRedisSettings(o));
  } else {
    HR_RETURN_IF_ERROR(ValidateDestinationUrl(*u));
  }
  d.url = *u;

  if (const json::value* h = o.if_contains("headers"); h && !h->is_null()) {
    if (!h->is_object()) return Status::InvalidArgument("must be an object of strings", "headers");
    for (const auto& kv : h->as_object()) {
      std::string field = "headers." + std::string(kv.key());
      auto value = GetString(kv.value(), field);
      if (!value.ok()) return value.status();
      std::string_view key = kv.key();
      if (key.empty() || key.find_first_of(" :\r\n\t") != std::string_view::npos) {
        return Status::InvalidArgument("is not a valid HTTP header", field);
      }
      // RFC 9110 §5.5: no control character but a tab in a field value. libcurl would cut a
      // value at a NUL (and send the rest as nothing), so refuse them all as CR and LF are.
      if (std::find_if(value->begin(), value->end(), [](unsigned char c) {
            return (c < 0x20 && c != '\t') || c == 0x7f;
          }) != value->end()) {
        return Status::InvalidArgument(
            "is not a valid HTTP header value: it contains a control character", field);
      }
      if (IsHopByHopOrFraming(key)) {
        return Status::InvalidArgument(
            "cannot be set: hookrelay's HTTP client sets the framing and connection headers "
            "(Host, Content-Length, Transfer-Encoding, Connection, Keep-Alive, TE, Trailer, "
            "Upgrade, Expect, Proxy-*)",
            field);
      }
      if (IsSignatureHeader(key)) {
        return Status::InvalidArgument(
            "cannot be set: hookrelay sends webhook-id, webhook-timestamp and webhook-signature "
            "itself (set signing_secret to sign)",
            field);
      }
      d.headers.emplace_back(std::string(key), *value);
    }
  }

  if (const json::value* f = o.if_contains("forward_headers"); f && !f->is_null()) {
    HR_ASSIGN_OR_RETURN(d.forward_headers, ParseForwardHeaders(*f));
  }
  if (const json::value* s = o.if_contains("secret_headers"); s && !s->is_null()) {
    HR_ASSIGN_OR_RETURN(d.secret_headers, GetHeaderNames(*s, "secret_headers"));
  }

  auto p = policy::PresetPolicy("default");
  if (const json::value* pv = o.if_contains("policy")) {
    p = policy::ParsePolicy(*pv);
    if (!p.ok()) return p.status().WithFieldPrefix("policy");
  }
  d.policy = *p;
  if (const json::value* rw = o.if_contains("replay_window")) {
    auto w = GetDuration(*rw, "replay_window");
    if (!w.ok()) return w.status();
    if (w->count() <= 0) return Status::InvalidArgument("must be greater than 0", "replay_window");
    d.policy.replay_window = *w;
  }

  if (const json::value* s = o.if_contains("signing_secret"); s && !s->is_null()) {
    auto secret = GetString(*s, "signing_secret");
    if (!secret.ok()) return secret.status();
    auto key = SigningKey(*secret);
    if (!key.ok()) return key.status();
    d.signing_secret = *secret;
  }
  if (const json::value* p = o.if_contains("signing_secret_previous"); p && !p->is_null()) {
    HR_ASSIGN_OR_RETURN(d.signing_secret_previous, ParsePreviousSigningSecret(*p));
    if (!d.signing_secret) {
      return Status::InvalidArgument(
          "needs signing_secret: the previous secret signs beside the current one",
          "signing_secret_previous");
    }
  }
  if (const json::value* mc = o.if_contains("max_concurrency")) {
    auto c = GetInt(*mc, "max_concurrency", 1, 1024);
    if (!c.ok()) return c.status();
    d.max_concurrency = static_cast<int>(*c);
  }
  if (const json::value* rl = o.if_contains("rate_limit"); rl && !rl->is_null()) {
    auto text = GetString(*rl, "rate_limit");
    if (!text.ok()) return text.status();
    auto rate = ParseRate(*text);
    if (!rate.ok()) return Status::InvalidArgument(rate.status().message(), "rate_limit");
    d.rate_limit = *rate;
  }
  if (const json::value* b = o.if_contains("breaker")) {
    auto c = policy::ParseBreakerConfig(*b);
    if (!c.ok()) return c.status().WithFieldPrefix("breaker");
    d.breaker = *c;
  }
  for (auto [field, target] : {std::pair{"ordered", &d.ordered}, std::pair{"paused", &d.paused},
                               std::pair{"allow_private", &d.allow_private},
                               std::pair{"pause_on_gone", &d.pause_on_gone}}) {
    if (const json::value* f = o.if_contains(field)) {
      HR_ASSIGN_OR_RETURN(*target, GetBool(*f, field));
    }
  }
  if (const json::value* t = o.if_contains("tls"); t && !t->is_null()) {
    auto tls = ParseDestinationTls(*t);
    if (!tls.ok()) return tls.status().WithFieldPrefix("tls");
    d.tls = std::move(*tls);
  }
  if (const json::value* a = o.if_contains("auth"); a && !a->is_null()) {
    auto auth = ParseDestinationAuth(*a);
    if (!auth.ok()) return auth.status().WithFieldPrefix("auth");
    for (const auto& [name, value] : d.headers) {
      if (AsciiEqualsIgnoreCase(name, "authorization")) {
        return Status::InvalidArgument(
            "cannot be set together with headers.Authorization; keep one of them", "auth");
      }
    }
    d.auth = std::move(*auth);
  }
  if (const json::value* k = o.if_contains("order_key"); k && !k->is_null()) {
    HR_ASSIGN_OR_RETURN(d.order_key, ParseOrderKey(*k));
    if (const json::value* f = o.if_contains("ordered"); f && f->is_bool() && !f->as_bool()) {
      return Status::InvalidArgument(
          "cannot be set with \"ordered\": false (an order key orders the destination per key; "
          "remove one of them)",
          "order_key");
    }
    d.ordered = true;
  }
  return d;
}

bool IsCredentialName(std::string_view name) {
  const std::string lower = AsciiLower(name);
  for (std::string_view part : {"auth", "token", "secret", "pass", "key", "session", "credential",
                                "signature", "cookie", "hmac"}) {
    if (lower.find(part) != std::string::npos) return true;
  }
  // "sig", "pw" and "pwd" only as a whole part ("sig", "X-Sig", "sig_v2", "pw", "db_pwd"), so
  // "X-Design" stays visible.
  size_t start = 0;
  while (start <= lower.size()) {
    size_t end = lower.find_first_of("-_.", start);
    if (end == std::string::npos) end = lower.size();
    const std::string_view part = std::string_view(lower).substr(start, end - start);
    if (part == "sig" || part == "pw" || part == "pwd") return true;
    start = end + 1;
  }
  return false;
}

bool IsCredentialHeader(std::string_view name, const std::vector<std::string>& secret_headers) {
  if (IsCredentialName(name)) return true;
  const std::string lower = AsciiLower(name);
  for (const std::string& s : secret_headers) {
    if (AsciiLower(s) == lower) return true;
  }
  return false;
}

// These run for every received header of every attempt (delivery/outgoing_headers): they compare
// without a lowered copy.
bool IsHookrelayCredential(std::string_view name) {
  return AsciiEqualsIgnoreCase(name, "authorization") || AsciiEqualsIgnoreCase(name, "cookie") ||
         AsciiEqualsIgnoreCase(name, "proxy-authorization");
}

bool IsHopByHopOrFraming(std::string_view name) {
  for (std::string_view n : {"connection", "keep-alive", "te", "trailer", "transfer-encoding",
                             "upgrade", "host", "content-length", "expect"}) {
    if (AsciiEqualsIgnoreCase(name, n)) return true;
  }
  return name.size() >= 6 && AsciiEqualsIgnoreCase(name.substr(0, 6), "proxy-");
}

bool IsSignatureHeader(std::string_view name) {
  const std::string lower = AsciiLower(name);
  return lower == "webhook-id" || lower == "webhook-timestamp" || lower == "webhook-signature";
}

bool IsNeverForwarded(std::string_view name) {
  return IsHopByHopOrFraming(name) || IsHookrelayCredential(name);
}

namespace {

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() &&
               std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// `part` (a query, a fragment, or a path segment's parameters) with the value of every
// credential-named parameter redacted. Pairs are separated by '&' or ';' (both are in use, and
// servers split on either).
std::string RedactParams(std::string_view part) {
  std::string out;
  size_t start = 0;
  for (;;) {
    size_t end = part.find_first_of("&;", start);
    if (end == std::string_view::npos) end = part.size();
    std::string_view pair = part.substr(start, end - start);
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && eq + 1 < pair.size() && pair.substr(eq + 1) != kRedacted &&
        IsCredentialName(PercentDecode(pair.substr(0, eq)))) {
      out.append(pair.substr(0, eq + 1)).append(kRedacted);
    } else {
      out.append(pair);
    }
    if (end == part.size()) break;
    out += part[end];
    start = end + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> DestinationSecretValues(const Destination& d) {
  std::vector<std::string> out;
  for (const auto& [name, value] : d.headers) {
    if (!IsCredentialHeader(name, d.secret_headers)) continue;
    out.push_back(value);
    // "Bearer X", "Basic X", "Token X": an endpoint may quote X alone.
    if (size_t space = value.find(' '); space != std::string::npos) {
      out.push_back(value.substr(space + 1));
    }
  }
  if (d.auth.kind != DestinationAuth::Kind::kNone) {
    out.push_back(d.auth.header_value);
    out.push_back(d.auth.header_value.substr(d.auth.header_value.find(' ') + 1));
    if (!d.auth.password.empty()) out.push_back(d.auth.password);
  }
  // Credential-named parameters of the query, the fragment and the path ("/x;jsessionid=…").
  auto collect = [&out](std::string_view part) {
    size_t start = 0;
    for (;;) {
      size_t end = part.find_first_of("&;", start);
      if (end == std::string_view::npos) end = part.size();
      std::string_view pair = part.substr(start, end - start);
      const size_t eq = pair.find('=');
      if (eq != std::string_view::npos && eq + 1 < pair.size() &&
          IsCredentialName(PercentDecode(pair.substr(0, eq)))) {
        out.emplace_back(pair.substr(eq + 1));
        out.push_back(PercentDecode(pair.substr(eq + 1)));
      }
      if (end == part.size()) break;
      start = end + 1;
    }
  };
  if (d.kind == kRedisKind) {
    if (auto endpoint = ParseRedisUrl(d.url); endpoint.ok() && !endpoint->password.empty()) {
      out.push_back(endpoint->password);
    }
  }
  std::string_view url(d.url);
  const size_t scheme = url.find("://");
  const size_t path = scheme == std::string_view::npos ? 0 : url.find('/', scheme + 3);
  if (path != std::string_view::npos) {
    const size_t tail = url.find_first_of("?#", path);
    std::string_view p = url.substr(path, tail == std::string_view::npos ? url.npos : tail - path);
    if (size_t semi = p.find(';'); semi != std::string_view::npos) collect(p.substr(semi + 1));
  }
  if (size_t q = url.find('?'); q != std::string_view::npos) {
    const size_t hash = url.find('#', q);
    collect(url.substr(q + 1, hash == std::string_view::npos ? url.npos : hash - q - 1));
  }
  if (size_t hash = url.find('#'); hash != std::string_view::npos) collect(url.substr(hash + 1));
  return out;
}

std::string RedactDestinationSecrets(const Destination& d, std::string text) {
  return RedactSecretValues(std::move(text), DestinationSecretValues(d), kRedacted);
}

std::string RedactUrl(std::string_view url) {
  // Credentials in the user-info (refused for destinations, but a URL shown may be older).
  const std::string text = RedactUrlCredentials(url);
  std::string_view u(text);
  size_t pos = 0;
  if (size_t scheme = u.find("://"); scheme != std::string_view::npos) {
    pos = u.find_first_of("/?#", scheme + 3);
    if (pos == std::string_view::npos) return text;
  }
  std::string out(u.substr(0, pos));
  const size_t query = u.find_first_of("?#", pos);
  std::string_view path = u.substr(pos, query == std::string_view::npos ? u.npos : query - pos);
  // Path parameters: "/x;jsessionid=abc/y".
  size_t seg = 0;
  while (seg < path.size()) {
    size_t next = path.find('/', seg + 1);
    if (next == std::string_view::npos) next = path.size();
    std::string_view segment = path.substr(seg, next - seg);
    const size_t semi = segment.find(';');
    if (semi == std::string_view::npos) {
      out.append(segment);
    } else {
      out.append(segment.substr(0, semi + 1)).append(RedactParams(segment.substr(semi + 1)));
    }
    seg = next;
  }
  if (query == std::string_view::npos) return out;
  const size_t hash = u.find('#', query);
  if (u[query] == '?') {
    out += '?';
    out += RedactParams(
        u.substr(query + 1, hash == std::string_view::npos ? u.npos : hash - query - 1));
  }
  if (hash != std::string_view::npos) {
    out += '#';
    out += RedactParams(u.substr(hash + 1));  // "#access_token=…" (OAuth's implicit flow)
  }
  return out;
}

boost::json::value ForwardHeadersToJson(const ForwardHeaders& f) {
  switch (f.mode) {
    case ForwardHeaders::Mode::kAll: return "all";
    case ForwardHeaders::Mode::kNone: return "none";
    case ForwardHeaders::Mode::kList: break;
  }
  json::array names;
  for (const std::string& n : f.names) names.emplace_back(n);
  return names;
}

json::object DestinationToJson(const Destination& d) {
  json::object headers;
  for (const auto& [k, v] : d.headers) {
    headers[k] = IsCredentialHeader(k, d.secret_headers) ? kRedacted : v;
  }
  json::array secret_headers;
  for (const std::string& s : d.secret_headers) secret_headers.emplace_back(s);
  json::object o{
      {"name", d.name},
      {"kind", d.kind},
      {"url", RedactUrl(d.url)},
      {"headers", std::move(headers)},
      {"forward_headers", ForwardHeadersToJson(d.forward_headers)},
      {"secret_headers", std::move(secret_headers)},
      {"policy", policy::PolicyToJson(d.policy)},
      {"signing_secret_set", d.signing_secret.has_value()},
      {"signing_secret_rotation",
       d.signing_secret_previous
           ? json::value(json::object{
                 {"old_expires_at", FormatRfc3339(d.signing_secret_previous->expires_at)}})
           : json::value(nullptr)},
      {"max_concurrency", d.max_concurrency},
      {"breaker", policy::BreakerConfigToJson(d.breaker)},
      {"ordered", d.ordered},
      {"order_key", OrderKeyToJson(d.order_key)},
      {"replay_window", FormatDuration(d.policy.replay_window)},
      {"paused", d.paused},
      {"allow_private", d.allow_private},
      {"pause_on_gone", d.pause_on_gone},
  };
  if (d.redis) {
    o["stream"] = d.redis->stream;
    o["maxlen"] = d.redis->maxlen ? json::value(*d.redis->maxlen) : json::value(nullptr);
  }
  if (!d.origin.empty()) o["origin"] = d.origin;
  o["transform"] =
      d.transform ? json::value(TransformSpecToJson(*d.transform)) : json::value(nullptr);
  o["tls"] = d.tls.empty() ? json::value(nullptr) : json::value(DestinationTlsToJson(d.tls));
  o["auth"] = d.auth.kind == DestinationAuth::Kind::kNone
                  ? json::value(nullptr)
                  : json::value(DestinationAuthToJson(d.auth));
  if (d.rate_limit) {
    double per_s = *d.rate_limit;
    if (per_s >= 1 && per_s == static_cast<double>(static_cast<int64_t>(per_s))) {
      o["rate_limit"] = std::to_string(static_cast<int64_t>(per_s)) + "/s";
    } else {
      o["rate_limit"] = std::to_string(static_cast<int64_t>(per_s * 3600 + 0.5)) + "/h";
    }
  } else {
    o["rate_limit"] = nullptr;
  }
  return o;
}

}  // namespace hookrelay::model
