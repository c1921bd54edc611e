#include "model/source.h"

#include <boost/json.hpp>

#include "common/units.h"
#include "model/destination.h"
#include "model/json_fields.h"

namespace hookrelay::model {

namespace json = boost::json;

std::string_view VerifySchemeName(VerifyScheme s) {
  switch (s) {
    case VerifyScheme::kGithub: return "github";
    case VerifyScheme::kStripe: return "stripe";
    case VerifyScheme::kShopify: return "shopify";
    case VerifyScheme::kStandard: return "standard";
    case VerifyScheme::kHmac: return "hmac";
  }
  return "hmac";
}

DedupRule DefaultDedup(const std::optional<VerifyConfig>& verify) {
  if (!verify) return {};
  switch (verify->scheme) {
    case VerifyScheme::kGithub: return {DedupRule::Kind::kHeader, "X-GitHub-Delivery"};
    case VerifyScheme::kStripe: return {DedupRule::Kind::kJson, "id"};
    case VerifyScheme::kShopify: return {DedupRule::Kind::kHeader, "X-Shopify-Webhook-Id"};
    case VerifyScheme::kStandard: return {DedupRule::Kind::kHeader, "webhook-id"};
    case VerifyScheme::kHmac: return {};
  }
  return {};
}

std::vector<std::string_view> VerifyConfig::SecretsAt(TimePoint now) const {
  std::vector<std::string_view> out(secrets.begin(), secrets.end());
  for (const ExpiringSecret& e : secrets_previous) {
    if (e.ValidAt(now)) out.push_back(e.secret);
  }
  return out;
}

Status CheckSourceSecret(VerifyScheme scheme, std::string_view secret, const std::string& field) {
  if (scheme != VerifyScheme::kStandard) return Status::Ok();
  // The Standard Webhooks key is the base64-decoded part after "whsec_"; a secret without the
  // prefix would be used as raw bytes and never match what the sender computes.
  auto key = SigningKey(secret);
  if (!key.ok()) {
    return Status::InvalidArgument(key.status().message() + " (Standard Webhooks secret)", field);
  }
  return Status::Ok();
}

namespace {

Result<VerifyConfig> ParseVerify(const json::value& v) {
  if (!v.is_object()) return Status::InvalidArgument("must be an object", "");
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(CheckKnownFields(o, {"scheme", "secrets", "secrets_previous", "tolerance",
                                          "header", "algorithm", "encoding", "prefix"}));
  VerifyConfig c;
  const json::value* scheme = o.if_contains("scheme");
  if (!scheme) return Status::InvalidArgument("is required", "scheme");
  auto name = GetString(*scheme, "scheme");
  if (!name.ok()) return name.status();
  if (*name == "github") {
    c.scheme = VerifyScheme::kGithub;
  } else if (*name == "stripe") {
    c.scheme = VerifyScheme::kStripe;
  } else if (*name == "shopify") {
    c.scheme = VerifyScheme::kShopify;
  } else if (*name == "standard") {
    c.scheme = VerifyScheme::kStandard;
  } else if (*name == "hmac") {
    c.scheme = VerifyScheme::kHmac;
  } else {
    return Status::InvalidArgument(
        "unknown scheme \"" + *name + "\" (known: github, stripe, shopify, standard, hmac)",
        "scheme");
  }
  const json::value* secrets = o.if_contains("secrets");
  if (!secrets || !secrets->is_array() || secrets->as_array().empty()) {
    return Status::InvalidArgument("must be a non-empty array of strings", "secrets");
  }
  for (size_t i = 0; i < secrets->as_array().size(); ++i) {
    const std::string field = "secrets[" + std::to_string(i) + "]";
    auto s = GetString(secrets->as_array()[i], "");
    if (!s.ok() || s->empty()) return Status::InvalidArgument("must be a non-empty string", field);
    HR_RETURN_IF_ERROR(CheckSourceSecret(c.scheme, *s, field));
    c.secrets.push_back(*s);
  }
  if (const json::value* p = o.if_contains("secrets_previous"); p && !p->is_null()) {
    if (!p->is_array()) {
      return Status::InvalidArgument(
          "must be an array of {\"secret\": \"…\", \"expires_at\": \"<RFC 3339 time>\"}",
          "secrets_previous");
    }
    for (size_t i = 0; i < p->as_array().size(); ++i) {
      const std::string field = "secrets_previous[" + std::to_string(i) + "]";
      HR_ASSIGN_OR_RETURN(ExpiringSecret e, ParseExpiringSecret(p->as_array()[i], field));
      HR_RETURN_IF_ERROR(CheckSourceSecret(c.scheme, e.secret, field + ".secret"));
      c.secrets_previous.push_back(std::move(e));
    }
  }
  if (const json::value* t = o.if_contains("tolerance")) {
    HR_ASSIGN_OR_RETURN(c.tolerance, GetDuration(*t, "tolerance"));
  }
  for (auto [field, target] :
       {std::pair{"header", &c.header}, std::pair{"algorithm", &c.algorithm},
        std::pair{"encoding", &c.encoding}, std::pair{"prefix", &c.prefix}}) {
    if (const json::value* f = o.if_contains(field)) {
      HR_ASSIGN_OR_RETURN(*target, GetString(*f, field));
    }
  }
  if (c.algorithm != "sha256" && c.algorithm != "sha1" && c.algorithm != "sha512") {
    return Status::InvalidArgument("must be sha256, sha1 or sha512", "algorithm");
  }
  if (c.encoding != "hex" && c.encoding != "base64") {
    return Status::InvalidArgument("must be hex or base64", "encoding");
  }
  if (c.scheme == VerifyScheme::kHmac && c.header.empty()) {
    return Status::InvalidArgument("is required for the hmac scheme (the signature's header)",
                                   "header");
  }
  return c;
}

Result<DedupRule> ParseDedup(const json::value& v) {
  if (!v.is_object() || v.as_object().size() != 1) {
    return Status::InvalidArgument("must be {\"header\": \"X-Delivery-Id\"} or {\"json\": \"id\"}",
                                   "");
  }
  const auto& [key, value] = *v.as_object().begin();
  auto name = GetString(value, std::string(key));
  if (!name.ok()) return name.status();
  if (name->empty()) return Status::InvalidArgument("must not be empty", std::string(key));
  if (key == "header") return DedupRule{DedupRule::Kind::kHeader, *name};
  if (key == "json") return DedupRule{DedupRule::Kind::kJson, *name};
  return Status::InvalidArgument(
      "unknown dedup rule \"" + std::string(key) + "\" (use \"header\" or \"json\")",
      std::string(key));
}

}  // namespace

Result<Source> ParseSource(const json::value& v) {
  if (!v.is_object()) return Status::InvalidArgument("a source must be a JSON object");
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(CheckKnownFields(o, {"name", "verify", "dedup", "max_body", "type"}));
  Source s;
  const json::value* name = o.if_contains("name");
  if (!name) return Status::InvalidArgument("is required", "name");
  auto n = GetString(*name, "name");
  if (!n.ok()) return n.status();
  HR_RETURN_IF_ERROR(ValidateName(*n));
  s.name = *n;
  if (const json::value* verify = o.if_contains("verify"); verify && !verify->is_null()) {
    auto c = ParseVerify(*verify);
    if (!c.ok()) return c.status().WithFieldPrefix("verify");
    s.verify = std::move(*c);
  }
  s.dedup = DefaultDedup(s.verify);
  if (const json::value* dedup = o.if_contains("dedup"); dedup && !dedup->is_null()) {
    auto d = ParseDedup(*dedup);
    if (!d.ok()) return d.status().WithFieldPrefix("dedup");
    s.dedup = *d;
  }
  if (const json::value* mb = o.if_contains("max_body")) {
    auto b = GetByteSize(*mb, "max_body");
    if (!b.ok()) return b.status();
    if (*b == 0 || *b > (256ull << 20)) {
      return Status::InvalidArgument("must be between 1B and 256MiB", "max_body");
    }
    s.max_body = *b;
  }
  if (const json::value* type = o.if_contains("type"); type && !type->is_null()) {
    HR_ASSIGN_OR_RETURN(s.type, routing::ParseTypeRule(*type, "type"));
  }
  return s;
}

std::optional<std::string> EventTypeOf(const Source& s, routing::HeaderSpan headers,
                                       const json::value* body) {
  const std::string_view scheme = s.verify ? VerifySchemeName(s.verify->scheme) : "";
  return routing::DeriveEventType(scheme, s.type, headers, body);
}

bool TypeNeedsBody(const Source& s) {
  if (s.type) return s.type->kind == routing::TypeRule::Kind::kJson;
  if (!s.verify) return false;
  switch (s.verify->scheme) {
    case VerifyScheme::kStripe:
    case VerifyScheme::kStandard:
    case VerifyScheme::kGithub: return true;
    case VerifyScheme::kShopify:
    case VerifyScheme::kHmac: return false;
  }
  return false;
}

json::object SourceToJson(const Source& s) {
  json::object o{{"name", s.name}, {"max_body", FormatByteSize(s.max_body)}};
  if (s.verify) {
    const VerifyConfig& c = *s.verify;
    json::object v{{"scheme", VerifySchemeName(c.scheme)},
                   {"secrets_set", c.secrets.size()},
                   {"tolerance", FormatDuration(c.tolerance)}};
    if (c.scheme == VerifyScheme::kHmac) {
      v["header"] = c.header;
      v["algorithm"] = c.algorithm;
      v["encoding"] = c.encoding;
      v["prefix"] = c.prefix;
    }
    o["verify"] = std::move(v);
  } else {
    o["verify"] = nullptr;
  }
  switch (s.dedup.kind) {
    case DedupRule::Kind::kNone: o["dedup"] = nullptr; break;
    case DedupRule::Kind::kHeader: o["dedup"] = json::object{{"header", s.dedup.key}}; break;
    case DedupRule::Kind::kJson: o["dedup"] = json::object{{"json", s.dedup.key}}; break;
  }
  o["type"] = s.type ? json::value(routing::TypeRuleToJson(*s.type)) : json::value(nullptr);
  if (!s.origin.empty()) o["origin"] = s.origin;
  return o;
}

}  // namespace hookrelay::model
