// Contract tests of the named API tokens (issue 28): POST/GET/DELETE /api/v1/tokens and
// /api/v1/whoami, against a real SQLite store and a real TokenRegistry that reads it again after
// each change (as the node's refresher does).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "access/token_registry.h"
#include "api/api_handler.h"
#include "common/crypto.h"
#include "common/time_format.h"
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
    r.path = target;
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
  EXPECT_EQ(json::parse(r.body), json::parse(R"({"name": "ci-replays", "role": "operator"})"));
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
      {R"({"name": "x", "role": "viewer", "scope": {}})", 400, "scope", "unknown field"},
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
