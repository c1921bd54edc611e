#include <algorithm>
#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/handler_util.h"
#include "api/request_params.h"
#include "api/tokens_json.h"
#include "common/crypto.h"
#include "http/json_text.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

constexpr size_t kTokenBytes = 32;  // 256 bits
constexpr char kBootstrap[] = "bootstrap";

}  // namespace

http::Response ApiHandler::ListTokens() const {
  auto tokens = store_.ListTokens();
  if (!tokens.ok()) return FromStatus(tokens.status());
  return Json(TokenListToJson(*tokens, clock_.Now()));
}

http::Response ApiHandler::CreateToken(const http::Request& request) const {
  auto body = ParseCreateTokenBody(request.body);
  if (!body.ok()) return FromStatus(body.status());
  const std::string token =
      std::string(access::TokenRegistry::kTokenPrefix) + HexEncode(RandomBytes(kTokenBytes));
  const TimePoint now = clock_.Now();
  store::ApiToken t;
  t.name = body->name;
  t.hash = HexEncode(Sha256(token));
  t.role = std::string(access::RoleName(body->role));
  t.created_at = now;
  if (body->expires) t.expires_at = now + *body->expires;
  if (body->scope) t.scope = access::ScopeToText(*body->scope);
  t.created_by = Actor(request);
  if (Status s = store_.CreateToken(t); !s.ok()) return FromStatus(s);
  if (controls_.tokens_changed) controls_.tokens_changed();
  json::object detail{{"role", t.role}};
  if (t.expires_at) detail["expires_at"] = TokenToJson(t, now).at("expires_at");
  if (body->scope) detail["scope"] = access::ScopeToJson(*body->scope);
  if (Status s = Audit(request, "token_create", t.name, 1, http::SerializeJson(detail)); !s.ok()) {
    return FromStatus(s);
  }
  json::object o = TokenToJson(t, now);
  // The token, this once: only its hash is kept.
  o["token"] = token;
  http::Response r = Json(std::move(o));
  r.status = 201;
  r.headers.emplace_back("Location", "/api/v1/tokens/" + http::PercentEncode(t.name));
  return r;
}

http::Response ApiHandler::DeleteToken(const http::Request& request,
                                       const std::string& name) const {
  if (Status s = ParseEmptyBody(request.body); !s.ok()) return FromStatus(s);
  auto tokens = store_.ListTokens();
  if (!tokens.ok()) return FromStatus(tokens.status());
  auto it = std::find_if(tokens->begin(), tokens->end(),
                         [&name](const store::ApiToken& t) { return t.name == name; });
  if (it == tokens->end() || it->revoked) return NotFound("token", name);
  store::ApiToken gone = *it;
  if (name == kBootstrap) {
    // The bootstrap token goes only when an admin could still make the next one.
    const TimePoint now = clock_.Now();
    const bool another_admin =
        std::any_of(tokens->begin(), tokens->end(), [&](const store::ApiToken& t) {
          return t.name != kBootstrap && !t.revoked && t.role == "admin" &&
                 (!t.expires_at || now < *t.expires_at);
        });
    if (!another_admin) {
      return FromStatus(Status::FailedPrecondition(
          "the bootstrap token is the only admin token: create another admin token first "
          "(hookrelay tokens create NAME --role admin, or POST /api/v1/tokens)"));
    }
    auto revoked = store_.RevokeToken(name);
    if (!revoked.ok()) return FromStatus(revoked.status());
  } else {
    auto deleted = store_.DeleteToken(name);
    if (!deleted.ok()) return FromStatus(deleted.status());
    if (!*deleted) return NotFound("token", name);
  }
  gone.revoked = true;
  if (controls_.tokens_changed) controls_.tokens_changed();
  if (Status s = Audit(request, "token_revoke", name, 1, ""); !s.ok()) return FromStatus(s);
  return Json(TokenToJson(gone, clock_.Now()));
}

http::Response ApiHandler::WhoAmI(const http::Request& request) const {
  return Json(PrincipalToJson(PrincipalOf(request)));
}

}  // namespace hookrelay::api
