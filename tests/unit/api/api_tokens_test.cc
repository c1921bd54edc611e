// Contract tests of the named API tokens (issue 28): POST/GET/DELETE /api/v1/tokens and
// /api/v1/whoami, against a real SQLite store and a real TokenRegistry that reads it again after
// each change (as the node's refresher does).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "access/token_registry.h"
#include "api/api_handler.h"
#include "common/crypto.h"
#include "common/time_format.h"
#include "conformance/store_test_util.h"
#include "store/sqlite/open.h"
#include "support/process.h"
#include "unit/api/api_test_util.h"

namespace hookrelay::api {
namespace {

namespace json = boost::json;

const std::string kBootstrap = "bootstrap-token-0123456789";

class ApiTokensTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::OpenSqliteStore({.dir = dir_.path()}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    store::ApiToken bootstrap;
    bootstrap.name = "bootstrap";
    bootstrap.role = "admin";
    bootstrap.created_at = clock_.Now();
    ASSERT_TRUE(store_->EnsureToken(bootstrap).ok());
    Refresh();
    ApiHandler::Controls controls;
    controls.tokens_changed = [this] { Refresh(); };
    controls.token_used = [this](const std::string& name, const std::string& addr) {
      tokens_.NoteUse(name, clock_.Now(), addr);
    };
    handler_ = std::make_unique<ApiHandler>(
        [this](std::string_view h) { return tokens_.Authenticate(h); }, *store_, registry_,
        [] { return std::map<std::string, delivery::DestinationState>(); }, std::move(controls),
        clock_);
  }

  // What the node's TokenRefresher does: the noted uses written, the tokens read again.
  void Refresh() {
    for (const auto& [name, use] : tokens_.TakeUses()) {
      ASSERT_TRUE(store_->TouchToken(name, use.at, use.addr).ok());
    }
    auto all = store_->ListTokens();
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    tokens_.Replace(*all);
  }

  http::Response Call(std::string method, std::string target, std::string body = "",
                      const std::string& token = kBootstrap) {
    http::Request r;
    r.method = std::move(method);
    r.target = target;
    const size_t q = target.find('?');
    r.path = target.substr(0, q);
    if (q != std::string::npos) r.query = target.substr(q + 1);
    r.remote_address = "192.0.2.7";
    EXPECT_TRUE(http::DecodePathSegments(r.path, r.segments));
    r.headers.emplace_back("Authorization", "Bearer " + token);
    r.body = std::move(body);
    return handler_->Respond(r);
  }

  // Creates a token; returns it (the answer's "token").
  std::string Create(const std::string& name, const std::string& role,
                     const std::string& extra = "") {
    http::Response r = Call("POST", "/api/v1/tokens",
                            R"({"name": ")" + name + R"(", "role": ")" + role + "\"" + extra + "}");
    EXPECT_EQ(r.status, 201) << r.body;
    if (r.status != 201) return "";
    return std::string(json::parse(r.body).at("token").as_string());
  }

  hookrelay::testing::TempDir dir_;
  FakeClock clock_;
  SeededRandom random_{5};
  std::unique_ptr<store::Store> store_;
  model::Registry registry_;
  access::TokenRegistry tokens_{HexEncode(Sha256(kBootstrap)), clock_};
  std::unique_ptr<ApiHandler> handler_;
};

TEST_F(ApiTokensTest, ACreatedTokenIsShownOnceWorksWithItsRoleAndIsListedWithoutIt) {
  http::Response r = Call("POST", "/api/v1/tokens",
                          R"({"name": "ci-replays", "role": "operator", "expires": "90d"})");
  ASSERT_EQ(r.status, 201) << r.body;
  json::object o = json::parse(r.body).as_object();
  const std::string token(o.at("token").as_string());
  EXPECT_TRUE(token.starts_with("hr_")) << token;
  EXPECT_EQ(token.size(), 3u + 64u) << "256 random bits in hex";
  EXPECT_EQ(o.at("role"), "operator");
  EXPECT_EQ(o.at("created_by"), "token:bootstrap");
  EXPECT_EQ(o.at("expires_at"), json::value(FormatRfc3339(clock_.Now() + std::chrono::days(90))));
  for (const auto& [k, v] : o) {
    if (k != "token") {
      EXPECT_FALSE(v.is_string() && v.as_string() == token) << k;
    }
  }

  // It works, as what it is: an operator pauses, but changes no catalog.
  r = Call("GET", "/api/v1/whoami", "", token);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body),
            json::parse(R"({"name": "ci-replays", "role": "operator", "scope": null})"));
  r = Call("POST", "/api/v1/tokens", R"({"name": "x", "role": "admin"})", token);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(json::parse(r.body).at("error").at("message"),
            "POST /api/v1/tokens needs the admin role; token \"ci-replays\" is an operator")
      << r.body;

  // Listed with its last use (when and from where), never with the token or its hash.
  Refresh();
  r = Call("GET", "/api/v1/tokens");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find(token), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find(HexEncode(Sha256(token))), std::string::npos) << r.body;
  const json::value list = json::parse(r.body);
  const json::array& items = list.at("items").as_array();
  ASSERT_EQ(items.size(), 2u) << r.body;  // bootstrap and ci-replays, by name
  EXPECT_EQ(items[0].at("name"), "bootstrap");
  EXPECT_EQ(items[1].at("name"), "ci-replays");
  EXPECT_EQ(items[1].at("last_used_addr"), "192.0.2.7");
  EXPECT_EQ(items[1].at("last_used_at"), json::value(FormatRfc3339(clock_.Now())));
  EXPECT_FALSE(items[1].at("expired").as_bool());

  // The audit trail names who created it, never the token.
  r = Call("GET", "/api/v1/audit");
  EXPECT_EQ(r.body.find(token), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("token_create"), std::string::npos) << r.body;

  // Expired, it is refused, and listed as expired.
  clock_.Advance(std::chrono::days(90));
  r = Call("GET", "/api/v1/whoami", "", token);
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_TRUE(
      json::parse(Call("GET", "/api/v1/tokens").body).at("items").at(1).at("expired").as_bool());
}

TEST_F(ApiTokensTest, ARevokedTokenIsRefusedAtOnce) {
  const std::string token = Create("dash", "viewer");
  ASSERT_EQ(Call("GET", "/api/v1/events", "", token).status, 200);
  http::Response r = Call("DELETE", "/api/v1/tokens/dash");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(json::parse(r.body).at("revoked").as_bool());
  r = Call("GET", "/api/v1/events", "", token);
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(Call("DELETE", "/api/v1/tokens/dash").status, 404);
  // The name is free again.
  EXPECT_FALSE(Create("dash", "viewer").empty());
}

TEST_F(ApiTokensTest, TheBootstrapTokenGoesOnlyWhenAnotherAdminExists) {
  http::Response r = Call("DELETE", "/api/v1/tokens/bootstrap");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("create another admin token first"), std::string::npos) << r.body;
  // An operator is not enough; an expired admin neither.
  Create("ops", "operator");
  Create("old-admin", "admin", R"(, "expires": "1h")");
  clock_.Advance(std::chrono::hours(1));
  EXPECT_EQ(Call("DELETE", "/api/v1/tokens/bootstrap").status, 409);
  const std::string admin = Create("alice", "admin");
  r = Call("DELETE", "/api/v1/tokens/bootstrap");
  ASSERT_EQ(r.status, 200) << r.body;
  r = Call("GET", "/api/v1/whoami");
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_NE(r.body.find("bootstrap token was revoked"), std::string::npos) << r.body;
  // Listed as revoked; the new admin goes on.
  r = Call("GET", "/api/v1/tokens", "", admin);
  ASSERT_EQ(r.status, 200) << r.body;
  const json::value list = json::parse(r.body);
  for (const json::value& t : list.at("items").as_array()) {
    EXPECT_EQ(t.at("revoked").as_bool(), t.at("name") == "bootstrap") << t;
  }
  EXPECT_EQ(Call("DELETE", "/api/v1/tokens/bootstrap", "", admin).status, 404);
}

// A token scoped to source "plain" and destination "billing" (catalog: sources github and plain,
// destinations billing and crm, routes github:billing and github:crm) sees and acts on those
// alone: lists are cut down, other names answer 404 as names that do not exist.
TEST_F(ApiTokensTest, AScopedTokenSeesAndActsOnItsOwnNamesAlone) {
  ASSERT_TRUE(registry_.Replace(test::MakeCatalog()).ok());
  auto append = [this](const std::string& source, std::vector<std::string> destinations) {
    auto r = store_->AppendEventSync(
        store::test::MakeEvent(clock_, random_, "{}", std::move(destinations), source));
    EXPECT_TRUE(r.ok());
    clock_.Advance(std::chrono::milliseconds(1));
    return r.ok() ? r->id : std::string();
  };
  const std::string to_billing = append("github", {"billing", "crm"});  // reached: billing
  const std::string only_crm = append("github", {"crm"});               // not reached
  const std::string from_plain = append("plain", {});                   // reached: plain
  const std::string token = Create(
      "billing-team", "admin", R"(, "scope": {"sources": ["plain"], "destinations": ["billing"]})");
  ASSERT_FALSE(token.empty());
  auto get = [&](const std::string& path) { return Call("GET", path, "", token); };
  auto message = [](const http::Response& r) {
    const json::value v = json::parse(r.body);
    return std::string(v.at("error").at("message").as_string());
  };
  auto names = [](const http::Response& r, const char* key) {
    std::vector<std::string> out;
    const json::value page = json::parse(r.body);
    EXPECT_TRUE(page.is_object() && page.as_object().contains("items")) << r.body;
    if (!page.is_object() || !page.as_object().contains("items")) return out;
    for (const json::value& v : page.at("items").as_array()) {
      out.emplace_back(v.at(key).as_string());
    }
    return out;
  };

  http::Response r = get("/api/v1/whoami");
  EXPECT_EQ(json::parse(r.body).at("scope"),
            json::parse(R"({"sources": ["plain"], "destinations": ["billing"]})"))
      << r.body;
  EXPECT_EQ(names(get("/api/v1/destinations"), "name"), std::vector<std::string>{"billing"});
  EXPECT_EQ(names(get("/api/v1/sources"), "name"), std::vector<std::string>{"plain"});
  EXPECT_TRUE(names(get("/api/v1/routes"), "id").empty()) << "github:billing starts out of scope";
  EXPECT_EQ(names(get("/api/v1/events"), "id"), (std::vector<std::string>{from_plain, to_billing}));
  EXPECT_EQ(names(get("/api/v1/events?destination=crm"), "id"),
            std::vector<std::string>{to_billing});

  // Out of scope reads exactly as not there: the answer for a name that does not exist.
  struct Hidden {
    std::string path, name, missing;
  };
  for (const Hidden& h : std::vector<Hidden>{
           {"/api/v1/destinations/crm", "crm", "/api/v1/destinations/nope"},
           {"/api/v1/destinations/crm/schedule", "crm", "/api/v1/destinations/nope/schedule"},
           {"/api/v1/sources/github", "github", "/api/v1/sources/nope"},
           {"/api/v1/sources/github/rejections", "github", "/api/v1/sources/nope/rejections"},
           {"/api/v1/routes/github:billing", "github:billing", "/api/v1/routes/nope"}}) {
    const http::Response a = get(h.path);
    std::string expected = get(h.missing).body;
    ASSERT_NE(expected.find("nope"), std::string::npos) << h.missing << " " << expected;
    expected.replace(expected.find("nope"), 4, h.name);
    EXPECT_EQ(a.status, 404) << h.path << " " << a.body;
    EXPECT_EQ(a.body, expected) << h.path;
  }
  r = get("/api/v1/events/" + only_crm);
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(Call("POST", "/api/v1/events/" + only_crm + "/replay", "", token).status, 404);
  EXPECT_EQ(Call("POST", "/api/v1/destinations/crm/pause", "", token).status, 404);
  EXPECT_EQ(Call("DELETE", "/api/v1/destinations/crm", "", token).status, 404);
  EXPECT_TRUE(registry_.Get()->FindDestination("crm")) << "nothing was deleted";

  // An event it reaches through billing shows billing's delivery alone, and replays to it alone.
  r = get("/api/v1/events/" + to_billing);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find("\"crm\""), std::string::npos) << r.body;
  r = Call("POST", "/api/v1/events/" + to_billing + "/replay", "", token);
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(r.body.find("crm"), std::string::npos) << r.body;
  r = Call("POST", "/api/v1/events/" + to_billing + "/replay", R"({"destination": "crm"})", token);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(message(r).find("no destination \"crm\""), std::string::npos) << r.body;

  // Bulk replays: only to one of its destinations, and only those jobs are listed.
  r = Call("POST", "/api/v1/replays", R"({"status": "failed"})", token);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(json::parse(r.body).at("error").at("field"), "destination");
  r = Call("POST", "/api/v1/replays", R"({"destination": "crm"})", token);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(message(r).find("no destination \"crm\""), std::string::npos) << r.body;
  r = Call("POST", "/api/v1/replays", R"({"destination": "crm"})");  // the bootstrap token
  ASSERT_EQ(r.status, 202) << r.body;
  const std::string crm_job(json::parse(r.body).at("id").as_string());
  r = Call("POST", "/api/v1/replays", R"({"destination": "billing"})", token);
  ASSERT_EQ(r.status, 202) << r.body;
  const std::string billing_job(json::parse(r.body).at("id").as_string());
  EXPECT_EQ(names(get("/api/v1/replays"), "id"), std::vector<std::string>{billing_job});
  EXPECT_EQ(get("/api/v1/replays/" + crm_job).status, 404);
  EXPECT_EQ(Call("DELETE", "/api/v1/replays/" + crm_job, "", token).status, 404);

  // Creating: inside its scope yes, outside no (403: the caller chose the name).
  r = Call("POST", "/api/v1/destinations",
           R"({"name": "other", "url": "https://other.example.com/in"})", token);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_NE(message(r).find("scope does not include destination \"other\""), std::string::npos)
      << r.body;
  r = Call("POST", "/api/v1/routes", R"({"source": "github", "destination": "billing"})", token);
  EXPECT_EQ(r.status, 403) << r.body;

  // The audit trail shows what was done to its names alone; tokens are not its to manage.
  r = get("/api/v1/audit");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find("crm"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("token_create"), std::string::npos) << r.body;
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/api/v1/tokens"},
           {"POST", "/api/v1/tokens"},
           {"DELETE", "/api/v1/tokens/billing-team"}}) {
    r = Call(method, path, R"({"name": "mine", "role": "admin"})", token);
    EXPECT_EQ(r.status, 403) << method << " " << path << " " << r.body;
  }

  // Listed with its scope; the bootstrap token (no scope) still sees everything.
  r = Call("GET", "/api/v1/tokens");
  EXPECT_EQ(json::parse(r.body).at("items").at(0).at("scope"),  // billing-team, by name
            json::parse(R"({"sources": ["plain"], "destinations": ["billing"]})"))
      << r.body;
  EXPECT_EQ(names(Call("GET", "/api/v1/events"), "id").size(), 3u);
  EXPECT_EQ(names(Call("GET", "/api/v1/destinations"), "name").size(), 2u);
}

TEST_F(ApiTokensTest, BadRequestsNameTheirField) {
  Create("taken", "viewer");
  struct Case {
    std::string body;
    int status;
    std::string field, message;
  };
  const Case cases[] = {
      {R"({"role": "viewer"})", 400, "name", "required"},
      {R"({"name": "Has Space", "role": "viewer"})", 400, "name", "a-z"},
      {R"({"name": ")" + std::string(65, 'a') + R"(", "role": "viewer"})", 400, "name", "64"},
      {R"({"name": "bootstrap", "role": "admin"})", 400, "name", "bootstrap"},
      {R"({"name": "x"})", 400, "role", "required"},
      {R"({"name": "x", "role": "root"})", 400, "role", "unknown role \"root\""},
      {R"({"name": "x", "role": "viewer", "expires": "30s"})", 400, "expires", "1m"},
      {R"({"name": "x", "role": "viewer", "expires": "forever"})", 400, "expires", ""},
      {R"({"name": "x", "role": "viewer", "scope": {}})", 400, "scope", "no source"},
      {R"({"name": "x", "role": "viewer", "scope": []})", 400, "scope", "expects an object"},
      {R"({"name": "x", "role": "viewer", "scope": {"source": ["a"]}})", 400, "scope.source",
       "unknown field \"source\""},
      {R"({"name": "x", "role": "viewer", "scope": {"sources": "a"}})", 400, "scope.sources",
       "list of names"},
      {R"({"name": "x", "role": "viewer", "scope": {"destinations": ["a", 3]}})", 400,
       "scope.destinations[1]", "expects a name"},
      {R"({"name": "taken", "role": "viewer"})", 409, "name", "taken"},
      {"[", 400, "body", ""},
  };
  for (const Case& c : cases) {
    http::Response r = Call("POST", "/api/v1/tokens", c.body);
    EXPECT_EQ(r.status, c.status) << c.body << " " << r.body;
    const json::value e = json::parse(r.body).at("error");
    if (c.status == 400) {
      EXPECT_EQ(e.at("field"), json::value(c.field)) << r.body;
    }
    EXPECT_NE(std::string(e.at("message").as_string()).find(c.message), std::string::npos)
        << r.body;
  }
  EXPECT_EQ(json::parse(Call("GET", "/api/v1/tokens").body).at("items").as_array().size(), 2u);
}

}  // namespace
}  // namespace hookrelay::api
