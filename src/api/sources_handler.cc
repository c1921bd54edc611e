#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/audit_json.h"
#include "api/handler_util.h"
#include "api/request_params.h"
#include "api/sources_json.h"
#include "catalog/catalog_service.h"
#include "common/crypto.h"
#include "common/standard_webhooks.h"
#include "common/time_format.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

constexpr size_t kGeneratedSecretBytes = 32;  // a generated verification secret's randomness

// A new secret for a source's sender to sign with, or nullopt for the schemes whose provider
// makes the secret (Stripe, Shopify: it is pasted from their dashboard).
std::optional<std::string> GenerateSourceSecret(model::VerifyScheme scheme) {
  switch (scheme) {
    case model::VerifyScheme::kStandard:
      return std::string(standard_webhooks::kSecretPrefix) +
             Base64Encode(RandomBytes(kGeneratedSecretBytes));
    case model::VerifyScheme::kGithub:
    case model::VerifyScheme::kHmac: return HexEncode(RandomBytes(kGeneratedSecretBytes));
    case model::VerifyScheme::kStripe:
    case model::VerifyScheme::kShopify: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

http::Response ApiHandler::ListSources(const model::Catalog& catalog) const {
  return Json(SourceListToJson(catalog, clock_.Now()));
}

http::Response ApiHandler::GetSource(const std::string& name, const model::Catalog& catalog) const {
  const model::Source* s = catalog.FindSource(name);
  if (!s) return NotFound("source", name);
  return SourceView(*s);
}

ingest::RejectionCounts ApiHandler::RejectionCountsOf(const std::string& source) const {
  return controls_.rejection_counts ? controls_.rejection_counts(source)
                                    : ingest::RejectionCounts{};
}

json::object ApiHandler::SourceViewObject(const model::Source& s) const {
  json::object o = SourceViewToJson(s, clock_.Now());
  o["rejections"] = RejectionCountsToJson(RejectionCountsOf(s.name));
  return o;
}

http::Response ApiHandler::SourceView(const model::Source& s) const {
  return Json(SourceViewObject(s));
}

http::Response ApiHandler::RotateSourceSecret(const http::Request& request,
                                              const std::string& name) const {
  auto body = ParseRotateSecretBody(request.body);
  if (!body.ok()) return FromStatus(body.status());
  std::shared_ptr<const model::Catalog> catalog = registry_.Get();
  const model::Source* s = catalog->FindSource(name);
  if (!s) return NotFound("source", name);
  if (!controls_.catalog) return NoControl("changing the catalog");
  if (!s->verify) {
    return FromStatus(Status::FailedPrecondition(
        "source " + name +
        " verifies no signature: set its verify (scheme and secrets) with PATCH first"));
  }
  const model::VerifyConfig& v = *s->verify;
  const std::string_view scheme = model::VerifySchemeName(v.scheme);
  std::optional<std::string> secret = body->secret;
  if (!secret) secret = GenerateSourceSecret(v.scheme);
  if (!secret) {
    return FromStatus(Status::InvalidArgument(
        "secret: is required for a " + std::string(scheme) + " source (" + std::string(scheme) +
            " makes the secret: copy the new one from its dashboard)",
        "secret"));
  }
  if (Status st = model::CheckSourceSecret(v.scheme, *secret, "secret"); !st.ok()) {
    return FromStatus(Status::InvalidArgument("secret: " + st.message(), "secret"));
  }
  for (const std::string& current : v.secrets) {
    if (ConstantTimeEqual(current, *secret)) {
      return FromStatus(Status::InvalidArgument(
          "secret: is one of the source's current secrets; give a new one", "secret"));
    }
  }
  // The current secrets become the previous ones until now + grace (an earlier rotation's old
  // secrets go), unless no grace is wanted.
  json::value previous = nullptr;
  if (body->grace.count() > 0) {
    const std::string expires = FormatRfc3339(clock_.Now() + body->grace);
    json::array old;
    for (const std::string& current : v.secrets) {
      old.push_back(json::object{{"secret", current}, {"expires_at", expires}});
    }
    previous = std::move(old);
  }
  json::object patch{{"verify", json::object{{"secrets", json::array{json::string(*secret)}},
                                             {"secrets_previous", std::move(previous)}}}};
  const std::string actor = Actor(request);
  if (Status st = controls_.catalog->Update(store::CatalogKind::kSource, name, patch, actor);
      !st.ok()) {
    return FromStatus(st);
  }
  catalog = registry_.Get();
  s = catalog->FindSource(name);
  if (!s) return NotFound("source", name);  // deleted meanwhile
  json::object o = SourceViewObject(*s);
  // The new secret, this once: it is write-only from now on.
  o["secret"] = *secret;
  return Json(std::move(o));
}

http::Response ApiHandler::ListRejections(const http::Request& request,
                                          const std::string& source) const {
  auto q = ParsePageQuery(request);
  if (!q.ok()) return FromStatus(q.status());
  if (!registry_.Get()->FindSource(source)) return NotFound("source", source);
  auto page = store_.ListRejections(source, q->cursor, q->limit);
  if (!page.ok()) return FromStatus(page.status());
  return Json(RejectionPageToJson(*page, RejectionCountsOf(source)));
}

}  // namespace hookrelay::api
