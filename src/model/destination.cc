#include "model/destination.h"

#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <cctype>

#include "common/crypto.h"
#include "common/units.h"
#include "model/json_fields.h"

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
  if (parsed->has_userinfo()) {
    return Status::InvalidArgument(
        "must not carry credentials; put them in the destination's headers", "url");
  }
  return Status::Ok();
}

Result<std::string> SigningKey(std::string_view secret) {
  constexpr std::string_view kPrefix = "whsec_";
  if (secret.substr(0, kPrefix.size()) != kPrefix) {
    return Status::InvalidArgument("must start with \"whsec_\" followed by base64",
                                   "signing_secret");
  }
  auto key = Base64Decode(secret.substr(kPrefix.size()));
  if (!key || key->size() < 16 || key->size() > 64) {
    return Status::InvalidArgument(
        "must be \"whsec_\" followed by the base64 of 16 to 64 random bytes", "signing_secret");
  }
  return *key;
}

Result<Destination> ParseDestination(const json::value& v) {
  if (!v.is_object()) return Status::InvalidArgument("a destination must be a JSON object");
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(CheckKnownFields(
      o, {"name", "url", "headers", "policy", "signing_secret", "max_concurrency", "rate_limit",
          "breaker", "ordered", "replay_window", "paused", "allow_private", "pause_on_gone"}));
  Destination d;
  const json::value* name = o.if_contains("name");
  if (!name) return Status::InvalidArgument("is required", "name");
  auto n = GetString(*name, "name");
  if (!n.ok()) return n.status();
  HR_RETURN_IF_ERROR(ValidateName(*n));
  d.name = *n;

  const json::value* url = o.if_contains("url");
  if (!url) return Status::InvalidArgument("is required", "url");
  auto u = GetString(*url, "url");
  if (!u.ok()) return u.status();
  HR_RETURN_IF_ERROR(ValidateDestinationUrl(*u));
  d.url = *u;

  if (const json::value* h = o.if_contains("headers"); h && !h->is_null()) {
    if (!h->is_object()) return Status::InvalidArgument("must be an object of strings", "headers");
    for (const auto& kv : h->as_object()) {
      std::string field = "headers." + std::string(kv.key());
      auto value = GetString(kv.value(), field);
      if (!value.ok()) return value.status();
      std::string_view key = kv.key();
      if (key.empty() || key.find_first_of(" :\r\n\t") != std::string_view::npos ||
          value->find_first_of("\r\n") != std::string::npos) {
        return Status::InvalidArgument("is not a valid HTTP header", field);
      }
      d.headers.emplace_back(std::string(key), *value);
    }
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
      auto b = GetBool(*f, field);
      if (!b.ok()) return b.status();
      *target = *b;
    }
  }
  if (d.ordered) {
    // Refused rather than silently ignored: a user asking for ordering must not get reordering.
    return Status::InvalidArgument(
        "ordered delivery is not implemented yet; remove it (deliveries are unordered)", "ordered");
  }
  return d;
}

bool IsCredentialHeader(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "cookie") return true;
  for (std::string_view part : {"auth", "token", "secret", "key", "password", "signature"}) {
    if (lower.find(part) != std::string::npos) return true;
  }
  return false;
}

json::object DestinationToJson(const Destination& d) {
  json::object headers;
  for (const auto& [k, v] : d.headers) headers[k] = IsCredentialHeader(k) ? kRedacted : v;
  json::object o{
      {"name", d.name},
      {"url", d.url},
      {"headers", std::move(headers)},
      {"policy", policy::PolicyToJson(d.policy)},
      {"signing_secret_set", d.signing_secret.has_value()},
      {"max_concurrency", d.max_concurrency},
      {"breaker", policy::BreakerConfigToJson(d.breaker)},
      {"ordered", d.ordered},
      {"replay_window", FormatDuration(d.policy.replay_window)},
      {"paused", d.paused},
      {"allow_private", d.allow_private},
      {"pause_on_gone", d.pause_on_gone},
  };
  if (!d.origin.empty()) o["origin"] = d.origin;
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
