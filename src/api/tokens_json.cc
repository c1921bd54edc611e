#include "api/tokens_json.h"

#include <boost/json.hpp>

#include "api/json_util.h"
#include "common/time_format.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

// A row's scope as an object; null for none (or, never written by this version, one that cannot
// be read: such a token grants nothing, see TokenRegistry::Replace).
json::value ScopeOrNull(const std::string& text) {
  Result<std::optional<access::Scope>> scope = access::ScopeFromText(text);
  if (!scope.ok() || !scope->has_value()) return nullptr;
  return access::ScopeToJson(**scope);
}

}  // namespace

json::object TokenToJson(const store::ApiToken& t, TimePoint now) {
  auto time_or_null = [](const std::optional<TimePoint>& at) {
    return at ? json::value(FormatRfc3339(*at)) : json::value(nullptr);
  };
  return {{"name", t.name},
          {"role", t.role},
          {"created_at", FormatRfc3339(t.created_at)},
          {"created_by", t.created_by.empty() ? json::value(nullptr) : json::value(t.created_by)},
          {"expires_at", time_or_null(t.expires_at)},
          {"expired", t.expires_at.has_value() && now >= *t.expires_at},
          {"last_used_at", time_or_null(t.last_used_at)},
          {"last_used_addr",
           t.last_used_addr.empty() ? json::value(nullptr) : json::value(t.last_used_addr)},
          {"revoked", t.revoked},
          {"scope", ScopeOrNull(t.scope)}};
}

json::object TokenListToJson(const std::vector<store::ApiToken>& tokens, TimePoint now) {
  json::array items;
  for (const store::ApiToken& t : tokens) items.push_back(TokenToJson(t, now));
  return List(std::move(items));
}

json::object PrincipalToJson(const access::Principal& p) {
  return {{"name", p.name},
          {"role", access::RoleName(p.role)},
          {"scope", p.scope ? json::value(access::ScopeToJson(*p.scope)) : json::value(nullptr)}};
}

}  // namespace hookrelay::api
