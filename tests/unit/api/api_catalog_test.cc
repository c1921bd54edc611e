// Contract tests of the catalog endpoints: POST/PATCH/DELETE of sources, destinations and routes,
// against a real SQLite store (behind the fault injector) and a real CatalogService.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/api_routes.h"
#include "catalog/catalog_service.h"
#include "common/crypto.h"
#include "common/time_format.h"
#include "ingest/verify.h"
#include "store/sqlite/open.h"
#include "support/fault_injecting_store.h"
#include "support/process.h"
#include "unit/api/api_test_util.h"

namespace hookrelay::api {
namespace {

namespace json = boost::json;

constexpr std::string_view kToken = "Bearer catalog-token-0123456789";
const std::string kHeaderSecret = "Bearer header-credential-do-not-show";

class ApiCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::OpenSqliteStore({.dir = dir_.path()}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::make_unique<store::FaultInjectingStore>(std::move(*s));
    catalog_ =
        std::make_unique<catalog::CatalogService>(*store_, registry_, clock_, [this] { ++wakes_; });
    // The config file defines source "github" and destination "billing".
    std::vector<store::CatalogObject> config;
    for (auto [kind, name, spec] :
         {std::tuple{store::CatalogKind::kSource, "github",
                     R"({"name": "github", "verify": {"scheme": "github", "secrets": [")" +
                         test::kVerifySecret + R"("]}})"},
          std::tuple{store::CatalogKind::kDestination, "billing",
                     std::string(R"({"name": "billing", "url": "https://billing.example/h"})")}}) {
      config.push_back({.kind = kind, .name = name, .spec = spec, .origin = "config"});
    }
    auto loaded = catalog_->Load(config);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ApiHandler::Controls controls;
    controls.catalog = catalog_.get();
    handler_ = std::make_unique<ApiHandler>(
        [this](std::string_view h) { return tokens_.Authenticate(h); }, *store_, registry_,
        [] { return std::map<std::string, delivery::DestinationState>(); }, std::move(controls),
        clock_);
  }

  http::Response Call(std::string method, std::string target, std::string body = "",
                      std::string auth = std::string(kToken)) {
    http::Request r;
    r.method = std::move(method);
    r.target = target;
    r.path = target;
    EXPECT_TRUE(http::DecodePathSegments(r.path, r.segments));
    if (!auth.empty()) r.headers.emplace_back("Authorization", auth);
    r.body = std::move(body);
    return handler_->Respond(r);
  }

  static std::string Header(const http::Response& r, std::string_view name) {
    for (const auto& [n, v] : r.headers) {
      if (http::EqualsIgnoreCase(n, name)) return v;
    }
    return "";
  }

  // An API destination signing with test::kSigningSecret.
  http::Response CreateSignedDestination(const std::string& name) {
    return Call("POST", "/api/v1/destinations",
                R"({"name": ")" + name +
                    R"(", "url": "https://crm.example/h", "signing_secret": ")" +
                    test::kSigningSecret + R"("})");
  }

  static void ExpectNoSecrets(const http::Response& r) {
    EXPECT_EQ(r.body.find(test::kVerifySecret), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find(test::kSigningSecret), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find(kHeaderSecret), std::string::npos) << r.body;
  }

  hookrelay::testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::FaultInjectingStore> store_;
  model::Registry registry_;
  std::unique_ptr<catalog::CatalogService> catalog_;
  access::TokenRegistry tokens_{HexEncode(Sha256("catalog-token-0123456789")), clock_};
  std::unique_ptr<ApiHandler> handler_;
  int wakes_ = 0;
};

TEST_F(ApiCatalogTest, CreateShowUpdateDeleteEachKind) {
  http::Response r = Call("POST", "/api/v1/sources",
                          R"({"name": "shop", "verify": {"scheme": "shopify", "secrets": [")" +
                              test::kVerifySecret + R"("]}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Header(r, "Location"), "/api/v1/sources/shop");
  json::value v = json::parse(r.body);
  EXPECT_EQ(v.at("origin").as_string(), "api");
  EXPECT_EQ(v.at("verify").at("secrets_set").as_int64(), 1);
  EXPECT_EQ(v.at("dedup").at("header").as_string(), "X-Shopify-Webhook-Id");
  ExpectNoSecrets(r);

  r = Call("POST", "/api/v1/destinations",
           R"({"name": "crm", "url": "https://crm.example/in", "policy": "pro",
               "headers": {"Authorization": ")" +
               kHeaderSecret + R"(", "X-Env": "prod"},
               "signing_secret": ")" +
               test::kSigningSecret + R"(", "rate_limit": "20/s"})");
  ASSERT_EQ(r.status, 201) << r.body;
  v = json::parse(r.body);
  EXPECT_EQ(v.at("headers").at("Authorization").as_string(), model::kRedacted);
  EXPECT_EQ(v.at("headers").at("X-Env").as_string(), "prod");
  EXPECT_TRUE(v.at("signing_secret_set").as_bool());
  EXPECT_EQ(v.at("breaker").at("state").as_string(), "closed");  // the live view
  ExpectNoSecrets(r);

  r = Call("POST", "/api/v1/routes", R"({"source": "shop", "destination": "crm"})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(json::parse(r.body).at("id").as_string(), "shop:crm");
  EXPECT_EQ(Header(r, "Location"), "/api/v1/routes/shop%3Acrm");
  r = Call("GET", Header(r, "Location"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("destination").as_string(), "crm");
  EXPECT_EQ(wakes_, 3);

  // Live at once: events of "shop" now go to "crm".
  ASSERT_EQ(registry_.Get()->DestinationsOf("shop").size(), 1u);
  r = Call("GET", "/api/v1/routes");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body).at("items").as_array().size(), 1u);

  r = Call(
      "PATCH", "/api/v1/destinations/crm",
      R"({"url": "https://crm2.example/in", "rate_limit": null, "headers": {"X-Env": "dev"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  v = json::parse(r.body);
  EXPECT_EQ(v.at("url").as_string(), "https://crm2.example/in");
  EXPECT_EQ(v.at("rate_limit"), nullptr);
  EXPECT_EQ(v.at("headers").at("Authorization").as_string(), model::kRedacted);  // kept
  EXPECT_EQ(v.at("headers").at("X-Env").as_string(), "dev");
  EXPECT_TRUE(v.at("signing_secret_set").as_bool());
  r = Call("PATCH", "/api/v1/sources/shop", R"({"max_body": "1MiB"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("max_body").as_string(), "1MiB");
  EXPECT_EQ(json::parse(r.body).at("verify").at("secrets_set").as_int64(), 1);

  r = Call("DELETE", "/api/v1/routes/shop-%3Ecrm");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("id").as_string(), "shop:crm");
  ASSERT_EQ(Call("DELETE", "/api/v1/destinations/crm").status, 200);
  ASSERT_EQ(Call("DELETE", "/api/v1/sources/shop").status, 200);
  for (std::string_view gone :
       {"/api/v1/sources/shop", "/api/v1/destinations/crm", "/api/v1/routes/shop-%3Ecrm"}) {
    r = Call("GET", std::string(gone));
    EXPECT_EQ(r.status, 404) << gone;
    EXPECT_EQ(Call("DELETE", std::string(gone)).status, 404) << gone;
  }

  // Every change is in the audit trail under the token's actor, with no secret in it.
  r = Call("GET", "/api/v1/audit");
  ASSERT_EQ(r.status, 200);
  ExpectNoSecrets(r);
  const json::value page = json::parse(r.body);
  const json::array& items = page.at("items").as_array();
  std::vector<std::string> seen;
  for (const json::value& e : items) {
    if (e.at("actor").as_string() == "config") continue;  // the start that seeded the catalog
    EXPECT_EQ(e.at("action").as_string(), "config_change");
    EXPECT_EQ(e.at("actor").as_string().subview().substr(0, 6), "token:");
    seen.push_back(std::string(e.at("detail").at("op").as_string()) + " " +
                   std::string(e.at("target").as_string()));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"delete source shop", "delete destination crm",
                                            "delete route shop:crm", "update source shop",
                                            "update destination crm", "create route shop:crm",
                                            "create destination crm", "create source shop"}));
}

TEST_F(ApiCatalogTest, BadInputIs400NamingTheField) {
  ASSERT_EQ(
      Call("POST", "/api/v1/destinations", R"({"name": "d", "url": "https://d.example"})").status,
      201);
  struct Case {
    const char* method;
    const char* path;
    const char* body;
    const char* field;
  };
  for (
      const Case& c : std::vector<Case>{
          // Not a JSON object at all.
          {"POST", "/api/v1/sources", "", "body"},
          {"POST", "/api/v1/sources", "{\"name\": ", "body"},
          {"POST", "/api/v1/destinations", "[1, 2]", "body"},
          {"PATCH", "/api/v1/destinations/d", "", "body"},
          // Missing fields.
          {"POST", "/api/v1/sources", "{}", "name"},
          {"POST", "/api/v1/destinations", R"({"name": "x"})", "url"},
          {"POST", "/api/v1/routes", R"({"source": "github"})", "destination"},
          {"POST", "/api/v1/sources", R"({"name": "x", "verify": {"scheme": "github"}})",
           "verify.secrets"},
          // Wrong types.
          {"POST", "/api/v1/sources", R"({"name": 5})", "name"},
          {"POST", "/api/v1/destinations",
           R"({"name": "x", "url": "https://x", "max_concurrency": "8"})", "max_concurrency"},
          {"POST", "/api/v1/destinations", R"({"name": "x", "url": "https://x", "headers": ["a"]})",
           "headers"},
          {"POST", "/api/v1/routes", R"({"source": "github", "destination": 1})", "destination"},
          {"PATCH", "/api/v1/destinations/d", R"({"paused": "yes"})", "paused"},
          // Unknown fields.
          {"POST", "/api/v1/sources", R"({"name": "x", "colour": "red"})", "colour"},
          {"POST", "/api/v1/destinations", R"({"name": "x", "url": "https://x", "retries": 3})",
           "retries"},
          {"POST", "/api/v1/routes", R"({"source": "github", "destination": "d", "via": "x"})",
           "via"},
          {"PATCH", "/api/v1/destinations/d", R"({"colour": "red"})", "colour"},
          // Bad durations, sizes, rates.
          {"POST", "/api/v1/destinations",
           R"({"name": "x", "url": "https://x", "replay_window": "3 days"})", "replay_window"},
          {"POST", "/api/v1/destinations",
           R"({"name": "x", "url": "https://x", "policy": {"strategy": "exponential", "base": "soon"}})",
           "policy.base"},
          {"POST", "/api/v1/sources",
           R"({"name": "x", "verify": {"scheme": "stripe", "secrets": ["s"], "tolerance": "-5m"}})",
           "verify.tolerance"},
          {"POST", "/api/v1/sources", R"({"name": "x", "max_body": "huge"})", "max_body"},
          {"PATCH", "/api/v1/destinations/d", R"({"rate_limit": "fast"})", "rate_limit"},
          // Bad URLs.
          {"POST", "/api/v1/destinations", R"({"name": "x", "url": "ftp://x.example/"})", "url"},
          {"POST", "/api/v1/destinations", R"({"name": "x", "url": "https://u:p@x.example/"})",
           "url"},
          {"POST", "/api/v1/destinations", R"({"name": "x", "url": "not a url"})", "url"},
          {"PATCH", "/api/v1/destinations/d", R"({"url": "/relative"})", "url"},
          // Unknown names and renames.
          {"POST", "/api/v1/routes", R"({"source": "nope", "destination": "d"})", "source"},
          {"POST", "/api/v1/routes", R"({"source": "github", "destination": "nope"})",
           "destination"},
          {"POST", "/api/v1/destinations", R"({"name": "x", "url": "https://x", "policy": "nope"})",
           "policy.preset"},
          {"PATCH", "/api/v1/destinations/d", R"({"name": "e"})", "name"},
      }) {
    http::Response r = Call(c.method, c.path, c.body);
    EXPECT_EQ(r.status, 400) << c.method << " " << c.path << " " << c.body << ": " << r.body;
    json::value e = json::parse(r.body).at("error");
    EXPECT_EQ(e.at("code").as_string(), "invalid_argument") << c.body;
    ASSERT_TRUE(e.as_object().contains("field")) << c.body << ": " << r.body;
    EXPECT_EQ(e.at("field").as_string(), c.field) << c.body << ": " << r.body;
    // The message names the field too, so it reads on its own.
    EXPECT_EQ(e.at("message").as_string().subview().find(c.field), 0u) << r.body;
  }
  // Nothing refused changed the catalog.
  EXPECT_EQ(registry_.Get()->sources.size(), 1u);
  EXPECT_EQ(registry_.Get()->destinations.size(), 2u);
  EXPECT_TRUE(registry_.Get()->routes.empty());
  EXPECT_EQ(registry_.Get()->FindDestination("d")->url, "https://d.example");
}

TEST_F(ApiCatalogTest, ConflictsAndUnknownNames) {
  ASSERT_EQ(
      Call("POST", "/api/v1/routes", R"({"source": "github", "destination": "billing"})").status,
      201);
  struct Case {
    const char* method;
    const char* path;
    const char* body;
    int status;
    const char* code;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"POST", "/api/v1/sources", R"({"name": "github"})", 409, "already_exists",
            "already exists"},
           {"POST", "/api/v1/routes",
            R"({"source": "github", "destination": "billing", "id": "x"})", 409, "already_exists",
            "already exists"},
           {"PATCH", "/api/v1/sources/github", R"({"max_body": "1MiB"})", 409,
            "failed_precondition", "config file"},
           {"DELETE", "/api/v1/destinations/billing", "", 409, "failed_precondition",
            "config file"},
           {"PATCH", "/api/v1/sources/nope", R"({"max_body": "1MiB"})", 404, "not_found", "nope"},
           {"PATCH", "/api/v1/destinations/nope", R"({})", 404, "not_found", "nope"},
           {"DELETE", "/api/v1/sources/nope", "", 404, "not_found", "nope"},
           {"DELETE", "/api/v1/routes/nope", "", 404, "not_found", "nope"},
           {"DELETE", "/api/v1/routes/github-%3Ebilling", "{\"force\": true}", 400,
            "invalid_argument", "force"},
       }) {
    http::Response r = Call(c.method, c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path << ": " << r.body;
    json::value e = json::parse(r.body).at("error");
    EXPECT_EQ(e.at("code").as_string(), c.code) << r.body;
    EXPECT_NE(e.at("message").as_string().subview().find(c.says), std::string::npos) << r.body;
  }
  // A route is patched (its rule), not replaced: 405 with what is allowed.
  http::Response r = Call("PUT", "/api/v1/routes/github-%3Ebilling", "{}");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(Header(r, "Allow"), "GET, HEAD, PATCH, DELETE");
}

TEST_F(ApiCatalogTest, EveryCatalogRouteNeedsTheToken) {
  for (const ApiRoute& route : ApiRoutes()) {
    if (route.method == "GET") continue;
    std::string path(route.path);
    for (std::string_view param : {"{name}", "{id}"}) {
      if (size_t at = path.find(param); at != std::string::npos)
        path.replace(at, param.size(), "x");
    }
    for (const std::string& auth : {std::string(), std::string("Bearer wrong")}) {
      http::Response r = Call(std::string(route.method), path, R"({"name": "x"})", auth);
      EXPECT_EQ(r.status, 401) << route.method << " " << path;
    }
  }
  EXPECT_EQ(registry_.Get()->sources.size(), 1u);
}

TEST_F(ApiCatalogTest, AStoreThatCannotWriteIs503AndChangesNothing) {
  store_->FailCatalogChanges(2, Status::ResourceExhausted("database or disk is full"));
  http::Response r = Call("POST", "/api/v1/sources", R"({"name": "shop"})");
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_EQ(json::parse(r.body).at("error").at("code").as_string(), "unavailable");
  EXPECT_EQ(Call("GET", "/api/v1/sources/shop").status, 404);
  r = Call("POST", "/api/v1/routes", R"({"source": "github", "destination": "billing"})");
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_TRUE(registry_.Get()->routes.empty());
  EXPECT_EQ(wakes_, 0);
  EXPECT_EQ(Call("POST", "/api/v1/sources", R"({"name": "shop"})").status, 201);
}

// Issue 28: rotate-secret answers a new secret once; the old one keeps signing (SigningKeys, what
// the delivery engine signs with) until the grace period ends, and is never shown.
TEST_F(ApiCatalogTest, RotateSecretKeepsTheOldSecretSigningForTheGracePeriod) {
  ASSERT_EQ(CreateSignedDestination("crm").status, 201);
  const std::string old_key = *model::SigningKey(test::kSigningSecret);
  auto keys_now = [&] {
    return model::SigningKeys(*registry_.Get()->FindDestination("crm"), clock_.Now());
  };

  http::Response r = Call("POST", "/api/v1/destinations/crm/rotate-secret", R"({"grace": "1h"})");
  ASSERT_EQ(r.status, 200) << r.body;
  json::object o = json::parse(r.body).as_object();
  const std::string fresh(o.at("signing_secret").as_string());
  ASSERT_TRUE(fresh.starts_with("whsec_")) << fresh;
  EXPECT_NE(fresh, test::kSigningSecret);
  ASSERT_TRUE(model::SigningKey(fresh).ok());
  EXPECT_EQ(model::SigningKey(fresh)->size(), 32u);
  EXPECT_EQ(o.at("signing_secret_rotation").at("old_expires_at"),
            json::value(FormatRfc3339(clock_.Now() + std::chrono::hours(1))));
  EXPECT_EQ(keys_now(), (std::vector<std::string>{*model::SigningKey(fresh), old_key}));

  // Shown: the rotation's end, never a secret (old or new), in GET and in the audit trail.
  r = Call("GET", "/api/v1/destinations/crm");
  EXPECT_EQ(r.body.find("whsec_"), std::string::npos) << r.body;
  EXPECT_TRUE(json::parse(r.body).at("signing_secret_rotation").is_object()) << r.body;
  r = Call("GET", "/api/v1/audit");
  EXPECT_EQ(r.body.find("whsec_"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("signing_secret_previous"), std::string::npos) << r.body;

  // The grace period over: the new secret alone signs, and GET says no rotation.
  clock_.Advance(std::chrono::hours(1));
  EXPECT_EQ(keys_now(), std::vector<std::string>{*model::SigningKey(fresh)});
  r = Call("GET", "/api/v1/destinations/crm");
  EXPECT_TRUE(json::parse(r.body).at("signing_secret_rotation").is_null()) << r.body;

  // A given secret with no grace: it alone signs at once.
  const std::string given = "whsec_" + Base64Encode(std::string(24, 'g'));
  r = Call("POST", "/api/v1/destinations/crm/rotate-secret",
           R"({"grace": "0s", "secret": ")" + given + R"("})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("signing_secret"), json::value(given));
  EXPECT_TRUE(json::parse(r.body).at("signing_secret_rotation").is_null()) << r.body;
  EXPECT_EQ(keys_now(), std::vector<std::string>{*model::SigningKey(given)});

  // A destination that did not sign starts signing, with nothing to rotate from.
  ASSERT_EQ(
      Call("POST", "/api/v1/destinations", R"({"name": "plain", "url": "https://p.example/h"})")
          .status,
      201);
  r = Call("POST", "/api/v1/destinations/plain/rotate-secret");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(json::parse(r.body).at("signing_secret_set").as_bool());
  EXPECT_TRUE(json::parse(r.body).at("signing_secret_rotation").is_null());
}

TEST_F(ApiCatalogTest, RotateSecretRefusalsNameTheirReason) {
  ASSERT_EQ(CreateSignedDestination("crm").status, 201);
  struct Case {
    std::string path, body;
    int status;
    std::string field;
  };
  const Case cases[] = {
      {"/api/v1/destinations/crm/rotate-secret", R"({"grace": "8d"})", 400, "grace"},
      {"/api/v1/destinations/crm/rotate-secret", R"({"grace": "-1s"})", 400, "grace"},
      {"/api/v1/destinations/crm/rotate-secret", R"({"grace": 60})", 400, "grace"},
      {"/api/v1/destinations/crm/rotate-secret", R"({"secret": "abc"})", 400, "secret"},
      {"/api/v1/destinations/crm/rotate-secret", R"({"secret": ")" + test::kSigningSecret + R"("})",
       400, "secret"},
      {"/api/v1/destinations/crm/rotate-secret", R"({"graze": "1h"})", 400, "graze"},
      {"/api/v1/destinations/crm/rotate-secret", "{", 400, "body"},
      {"/api/v1/destinations/nope/rotate-secret", "", 404, ""},
      // The config file owns "billing".
      {"/api/v1/destinations/billing/rotate-secret", "", 409, ""},
  };
  for (const Case& c : cases) {
    http::Response r = Call("POST", c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.body << " " << r.body;
    if (!c.field.empty()) {
      EXPECT_EQ(json::parse(r.body).at("error").at("field"), json::value(c.field)) << r.body;
    }
  }
  // Nothing changed: the first secret alone still signs.
  EXPECT_EQ(model::SigningKeys(*registry_.Get()->FindDestination("crm"), clock_.Now()),
            std::vector<std::string>{*model::SigningKey(test::kSigningSecret)});
  EXPECT_EQ(Call("POST", "/api/v1/destinations/crm/rotate-secret", "", "").status, 401);
}

// Issue 28: a source's rotate-secret puts a new verification secret in front; the current ones
// keep verifying until the grace period ends (what ingest checks: VerifySignature with the
// catalog's source), and no secret is ever shown again.
TEST_F(ApiCatalogTest, RotateSourceSecretKeepsTheOldSecretsVerifyingForTheGracePeriod) {
  ASSERT_EQ(Call("POST", "/api/v1/sources",
                 R"({"name": "gh", "verify": {"scheme": "github", "secrets": [")" +
                     test::kVerifySecret + R"("]}})")
                .status,
            201);
  const std::string body = R"({"zen": "Design for failure."})";
  auto verifies = [&](const std::string& secret) {
    const std::string sig = "sha256=" + HexEncode(HmacSha256(secret, body));
    ingest::HeaderLookup header = [&](std::string_view name) -> std::optional<std::string_view> {
      if (http::EqualsIgnoreCase(name, "X-Hub-Signature-256")) return sig;
      return std::nullopt;
    };
    return ingest::VerifySignature(*registry_.Get()->FindSource("gh")->verify, header, body,
                                   clock_.Now())
        .ok();
  };
  ASSERT_TRUE(verifies(test::kVerifySecret));

  http::Response r = Call("POST", "/api/v1/sources/gh/rotate-secret", R"({"grace": "1h"})");
  ASSERT_EQ(r.status, 200) << r.body;
  json::object o = json::parse(r.body).as_object();
  const std::string fresh(o.at("secret").as_string());
  EXPECT_EQ(fresh.size(), 64u) << "32 random bytes in hex";
  EXPECT_EQ(o.at("verify").at("secrets_set").as_int64(), 1);
  EXPECT_EQ(o.at("verify").at("secrets_rotation"),
            json::parse(R"({"old_secrets": 1, "old_expires_at": ")" +
                        FormatRfc3339(clock_.Now() + std::chrono::hours(1)) + R"("})"));
  EXPECT_EQ(r.body.find(test::kVerifySecret), std::string::npos) << r.body;
  EXPECT_TRUE(verifies(fresh));
  EXPECT_TRUE(verifies(test::kVerifySecret));
  EXPECT_FALSE(verifies("some other secret"));

  // Shown in GET and the list: the rotation's end, never a secret; the audit names fields only.
  for (const char* path : {"/api/v1/sources/gh", "/api/v1/sources", "/api/v1/audit"}) {
    r = Call("GET", path);
    ASSERT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.body.find(fresh), std::string::npos) << path << " " << r.body;
    ExpectNoSecrets(r);
  }
  EXPECT_TRUE(json::parse(Call("GET", "/api/v1/sources/gh").body)
                  .at("verify")
                  .at("secrets_rotation")
                  .is_object());

  // The grace period over: the old secret is refused, and GET says no rotation.
  clock_.Advance(std::chrono::hours(1));
  EXPECT_FALSE(verifies(test::kVerifySecret));
  EXPECT_TRUE(verifies(fresh));
  EXPECT_TRUE(json::parse(Call("GET", "/api/v1/sources/gh").body)
                  .at("verify")
                  .at("secrets_rotation")
                  .is_null());

  // A given secret with no grace verifies alone at once.
  r = Call("POST", "/api/v1/sources/gh/rotate-secret",
           R"({"grace": "0s", "secret": "typed-into-github"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("secret"), "typed-into-github");
  EXPECT_TRUE(verifies("typed-into-github"));
  EXPECT_FALSE(verifies(fresh));

  // A standard source's generated secret is a Standard Webhooks one.
  ASSERT_EQ(Call("POST", "/api/v1/sources",
                 R"({"name": "std", "verify": {"scheme": "standard", "secrets": [")" +
                     test::kSigningSecret + R"("]}})")
                .status,
            201);
  r = Call("POST", "/api/v1/sources/std/rotate-secret");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string standard(json::parse(r.body).at("secret").as_string());
  EXPECT_TRUE(model::SigningKey(standard).ok()) << standard;
  EXPECT_EQ(model::SigningKey(standard)->size(), 32u);
}

TEST_F(ApiCatalogTest, RotateSourceSecretRefusalsNameTheirReason) {
  ASSERT_EQ(Call("POST", "/api/v1/sources",
                 R"({"name": "stripe", "verify": {"scheme": "stripe", "secrets": ["whsec_a"]}})")
                .status,
            201);
  ASSERT_EQ(Call("POST", "/api/v1/sources",
                 R"({"name": "std", "verify": {"scheme": "standard", "secrets": [")" +
                     test::kSigningSecret + R"("]}})")
                .status,
            201);
  ASSERT_EQ(Call("POST", "/api/v1/sources", R"({"name": "open"})").status, 201);
  struct Case {
    std::string path, body;
    int status;
    std::string field, message;
  };
  const Case cases[] = {
      // Stripe makes the secret: it must be given.
      {"/api/v1/sources/stripe/rotate-secret", "", 400, "secret", "required for a stripe source"},
      {"/api/v1/sources/stripe/rotate-secret", R"({"secret": "whsec_a"})", 400, "secret",
       "current secrets"},
      {"/api/v1/sources/stripe/rotate-secret", R"({"secret": ""})", 400, "secret", "non-empty"},
      {"/api/v1/sources/stripe/rotate-secret", R"({"grace": "8d", "secret": "whsec_b"})", 400,
       "grace", "0s to 7d"},
      {"/api/v1/sources/std/rotate-secret", R"({"secret": "not-whsec"})", 400, "secret", "whsec_"},
      {"/api/v1/sources/std/rotate-secret", R"({"secrets": ["x"]})", 400, "secrets", "unknown"},
      {"/api/v1/sources/open/rotate-secret", "", 409, "", "verifies no signature"},
      {"/api/v1/sources/nope/rotate-secret", "", 404, "", ""},
      // The config file owns "github".
      {"/api/v1/sources/github/rotate-secret", "", 409, "", ""},
  };
  for (const Case& c : cases) {
    http::Response r = Call("POST", c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.path << " " << c.body << " " << r.body;
    const json::value e = json::parse(r.body).at("error");
    if (!c.field.empty()) {
      EXPECT_EQ(e.at("field"), json::value(c.field)) << r.body;
    }
    EXPECT_NE(std::string(e.at("message").as_string()).find(c.message), std::string::npos)
        << r.body;
  }
  // Nothing changed.
  EXPECT_EQ(registry_.Get()->FindSource("stripe")->verify->secrets,
            std::vector<std::string>{"whsec_a"});
  EXPECT_TRUE(registry_.Get()->FindSource("stripe")->verify->secrets_previous.empty());
  EXPECT_EQ(
      Call("POST", "/api/v1/sources/stripe/rotate-secret", R"({"secret": "whsec_b"})", "").status,
      401);
  // Given, it is taken.
  http::Response r =
      Call("POST", "/api/v1/sources/stripe/rotate-secret", R"({"secret": "whsec_b"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(registry_.Get()->FindSource("stripe")->verify->SecretsAt(clock_.Now()),
            (std::vector<std::string_view>{"whsec_b", "whsec_a"}));
}

}  // namespace
}  // namespace hookrelay::api
