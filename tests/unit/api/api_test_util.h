#pragma once

#include <boost/json.hpp>
#include <memory>
#include <string>

#include "common/crypto.h"
#include "model/registry.h"

// Catalog fixtures shared by the API unit tests.
namespace hookrelay::api::test {

// Secrets that must never appear in any API response.
inline const std::string kSigningSecret =
    "whsec_" + Base64Encode("signing-key-material-0123456789");
inline const std::string kVerifySecret = "verify-secret-do-not-show";

// Sources "github" (github scheme, one secret) and "plain"; destinations "billing" (with a
// signing secret) and "crm" (paused in config); routes github:billing, github:crm.
inline model::Catalog MakeCatalog() {
  namespace json = boost::json;
  model::Catalog c;
  auto github = model::ParseSource(
      json::parse(R"({"name": "github", "verify": {"scheme": "github", "secrets": [")" +
                  kVerifySecret + R"("]}})"));
  auto plain = model::ParseSource(json::parse(R"({"name": "plain"})"));
  auto billing = model::ParseDestination(json::parse(
      R"({"name": "billing", "url": "https://billing.example.com/hooks", "signing_secret": ")" +
      kSigningSecret + R"(", "max_concurrency": 8})"));
  auto crm = model::ParseDestination(
      json::parse(R"({"name": "crm", "url": "https://crm.example.com/in", "paused": true})"));
  if (!github.ok() || !plain.ok() || !billing.ok() || !crm.ok()) return c;
  c.sources.emplace("github", *github);
  c.sources.emplace("plain", *plain);
  c.destinations.emplace("billing", *billing);
  c.destinations.emplace("crm", *crm);
  c.routes.push_back({"github:billing", "github", "billing"});
  c.routes.push_back({"github:crm", "github", "crm"});
  return c;
}

}  // namespace hookrelay::api::test
