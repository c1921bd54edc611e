#include "api/api_handler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <future>
#include <mutex>
#include <optional>
#include <set>

#include "api/api_routes.h"
#include "api/openapi.h"
#include "common/crypto.h"
#include "common/time_format.h"
#include "conformance/store_test_util.h"
#include "policy/retry_policy.h"
#include "secrets/keyring.h"
#include "store/sqlite/open.h"
#include "support/process.h"
#include "unit/api/api_test_util.h"

namespace hookrelay::api {
namespace {

namespace json = boost::json;

constexpr std::string_view kToken = "Bearer right-token-0123456789";

std::string Header(const http::Response& r, std::string_view name) {
  for (const auto& [n, v] : r.headers) {
    if (http::EqualsIgnoreCase(n, name)) return v;
  }
  return "";
}

class ApiHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store::SqliteOptions options;
    options.dir = dir_.path();
    auto s = store::OpenSqliteStore(options, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    auto master = secrets::ParseMasterKey(Base64Encode(std::string(32, 'm')), "test");
    ASSERT_TRUE(master.ok());
    auto keyring = secrets::Keyring::Unlock(*store_, *master, clock_);
    ASSERT_TRUE(keyring.ok()) << keyring.status().ToString();
    keyring_.emplace(std::move(*keyring));
    ASSERT_TRUE(registry_.Replace(test::MakeCatalog()).ok());
    auto r = store_->AppendEventSync(
        store::test::MakeEvent(clock_, random_, "{}", {"billing"}, "github"));
    ASSERT_TRUE(r.ok());
    event_id_ = r->id;
    // A bulk replay job under the same id, so every "{id}" route has something to show.
    store::ReplayJob job;
    job.id = event_id_;
    job.created_at = clock_.Now();
    job.filter = R"({"status":"failed"})";
    job.rate = 50;
    ASSERT_TRUE(store_->CreateReplayJob(job).ok());
    ApiHandler::Controls controls;
    // Like the engine: pause and resume change the state the API reads back.
    controls.pause = [this](const std::string& d, const std::string& reason) {
      std::lock_guard lock(calls_mu_);
      calls_.push_back("pause " + d + " " + reason);
      states_[d].paused = true;
      states_[d].paused_reason = reason;
      return Status::Ok();
    };
    controls.resume = [this](const std::string& d) {
      std::lock_guard lock(calls_mu_);
      calls_.push_back("resume " + d);
      states_[d].paused = false;
      states_[d].paused_reason.clear();
      return Status::Ok();
    };
    controls.reset_breaker = [this](const std::string& d) {
      std::lock_guard lock(calls_mu_);
      calls_.push_back("reset_breaker " + d);
      return Status::Ok();
    };
    controls.wake = [this] {
      std::lock_guard lock(calls_mu_);
      calls_.push_back("wake");
    };
    controls.replay_job_queued = [this] {
      std::lock_guard lock(calls_mu_);
      calls_.push_back("replay_job_queued");
    };
    controls.rejection_counts = [](const std::string& source) {
      ingest::RejectionCounts c;
      if (source == "github") {
        c.total = 7;
        c.not_recorded = 5;
        c.by_reason[3] = 7;
      }
      return c;
    };
    controls.keyring = &*keyring_;
    handler_ = std::make_unique<ApiHandler>(
        [this](std::string_view h) { return tokens_.Authenticate(h); }, *store_, registry_,
        [this] {
          std::lock_guard lock(calls_mu_);
          return states_;
        },
        std::move(controls), clock_);
  }

  static http::Request Get(std::string target, std::string method = "GET",
                           std::string auth = std::string(kToken)) {
    http::Request r;
    r.method = std::move(method);
    r.target = target;
    size_t q = target.find('?');
    r.path = target.substr(0, q);
    if (q != std::string::npos) r.query = target.substr(q + 1);
    EXPECT_TRUE(http::DecodePathSegments(r.path, r.segments));
    if (!auth.empty()) r.headers.emplace_back("Authorization", auth);
    return r;
  }

  static http::Request Post(std::string target, std::string body) {
    http::Request r = Get(std::move(target), "POST");
    r.body = std::move(body);
    return r;
  }

  std::vector<std::string> Calls() {
    std::lock_guard lock(calls_mu_);
    return calls_;
  }

  // A concrete path for a route template: existing ids and names for its parameters.
  std::string Concrete(std::string_view tmpl) const {
    std::string p(tmpl);
    for (auto [param, value] :
         {std::pair<std::string, std::string>{
              "{id}", p.find("/routes/") != std::string::npos ? "github:billing" : event_id_},
          {"{name}", p.find("/sources/") != std::string::npos ? "github" : "billing"}}) {
      if (size_t at = p.find(param); at != std::string::npos) p.replace(at, param.size(), value);
    }
    return p;
  }

  testing::TempDir dir_;
  FakeClock clock_;
  SeededRandom random_{3};
  std::unique_ptr<store::Store> store_;
  std::optional<secrets::Keyring> keyring_;  // the master keys' routes wrap its data key
  model::Registry registry_;
  std::string event_id_;
  std::mutex calls_mu_;
  std::vector<std::string> calls_;  // GUARDED_BY(calls_mu_): the controls called, in order
  std::map<std::string, delivery::DestinationState> states_;  // GUARDED_BY(calls_mu_)
  // kToken is the bootstrap (admin) token; the tests add named ones with Replace.
  access::TokenRegistry tokens_{HexEncode(Sha256("right-token-0123456789")), clock_};
  std::unique_ptr<ApiHandler> handler_;
};

TEST(ApiRoutesTest, MatchesTemplatesAndReportsAllowedMethods) {
  RouteMatch m = MatchRoute({"api", "v1", "events", "abc"}, "GET");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.route->id, RouteId::kGetEvent);
  EXPECT_EQ(m.params, std::vector<std::string>{"abc"});
  m = MatchRoute({"api", "v1", "events"}, "HEAD");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.route->id, RouteId::kListEvents);
  m = MatchRoute({"api", "v1", "events"}, "POST");
  EXPECT_EQ(m.route, nullptr);
  EXPECT_EQ(m.allowed, (std::vector<std::string>{"GET", "HEAD"}));
  for (const std::vector<std::string>& segs :
       std::vector<std::vector<std::string>>{{"api", "v1"},
                                             {"api", "v1", "events", ""},
                                             {"api", "v1", "events", "a", "b"},
                                             {"api", "v1", "nope"},
                                             {"api", "v1", "sources", "a", ""}}) {
    m = MatchRoute(segs, "GET");
    EXPECT_EQ(m.route, nullptr);
    EXPECT_TRUE(m.allowed.empty());
  }
}

TEST(ApiHandlerStaticTest, MatchesOnlyApiV1) {
  http::RequestHead h;
  h.segments = {"api", "v1", "events"};
  EXPECT_TRUE(ApiHandler::Matches(h));
  h.segments = {"api", "v1"};
  EXPECT_TRUE(ApiHandler::Matches(h));
  h.segments = {"api", "v1x"};
  EXPECT_FALSE(ApiHandler::Matches(h));
  h.segments = {"api"};
  EXPECT_FALSE(ApiHandler::Matches(h));
  h.segments = {"in", "api"};
  EXPECT_FALSE(ApiHandler::Matches(h));
}

TEST_F(ApiHandlerTest, NoOrWrongTokenIs401BeforeAnythingElse) {
  for (const std::string& auth :
       {std::string(), std::string("Bearer wrong"), std::string("Basic dXNlcjpwYXNz")}) {
    for (std::string_view target :
         {"/api/v1/events", "/api/v1/nope", "/api/v1/openapi.json", "/api/v1"}) {
      http::Request r = Get(std::string(target), "GET", auth);
      http::Handler::HeadDecision d = handler_->OnHead(r);
      ASSERT_TRUE(d.reject.has_value()) << target;
      EXPECT_EQ(d.reject->status, 401) << target;
      EXPECT_EQ(json::parse(d.reject->body).at("error").at("code").as_string(), "unauthenticated");
      EXPECT_EQ(Header(*d.reject, "WWW-Authenticate"), "Bearer");
      EXPECT_EQ(handler_->Respond(r).status, 401);
    }
    // Even a method no route has: authentication comes first.
    EXPECT_EQ(handler_->Respond(Get("/api/v1/events", "DELETE", auth)).status, 401);
  }
}

TEST_F(ApiHandlerTest, UnknownPathIs404AndOtherMethodIs405WithAllow) {
  http::Response r = handler_->Respond(Get("/api/v1/nope"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(json::parse(r.body).at("error").at("code").as_string(), "not_found");
  r = handler_->Respond(Get("/api/v1/events", "POST"));
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(Header(r, "Allow"), "GET, HEAD");
  EXPECT_EQ(json::parse(r.body).at("error").at("code").as_string(), "method_not_allowed");
  EXPECT_EQ(handler_->Respond(Get("/api/v1/destinations/billing/pause", "DELETE")).status, 405);
}

TEST_F(ApiHandlerTest, UnknownIdsAndNamesAre404) {
  for (std::string_view target :
       {"/api/v1/events/01JDZ8X4AC1N4G0Y5K6M7P8Q9R", "/api/v1/destinations/nope",
        "/api/v1/sources/nope", "/api/v1/replays/01JDZ8X4AC1N4G0Y5K6M7P8Q9R"}) {
    http::Response r = handler_->Respond(Get(std::string(target)));
    EXPECT_EQ(r.status, 404) << target;
    EXPECT_EQ(json::parse(r.body).at("error").at("code").as_string(), "not_found") << target;
  }
}

TEST_F(ApiHandlerTest, BadQueryIs400NamingTheField) {
  http::Response r = handler_->Respond(Get("/api/v1/events?limit=0"));
  EXPECT_EQ(r.status, 400);
  json::value e = json::parse(r.body).at("error");
  EXPECT_EQ(e.at("code").as_string(), "invalid_argument");
  EXPECT_EQ(e.at("field").as_string(), "limit");
}

TEST_F(ApiHandlerTest, ServesEachRouteAndNoSecrets) {
  http::Response r = handler_->Respond(Get("/api/v1/events?source=github"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("items").as_array()[0].at("id").as_string(), event_id_);
  r = handler_->Respond(Get("/api/v1/events/" + event_id_));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("deliveries").as_array()[0].at("destination").as_string(),
            "billing");
  r = handler_->Respond(Get("/api/v1/destinations/billing"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(json::parse(r.body).at("signing_secret_set").as_bool());
  r = handler_->Respond(Get("/api/v1/sources/github"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("name").as_string(), "github");
  for (const ApiRoute& route : ApiRoutes()) {
    // Catalog changes have their own contract tests (api_catalog_test.cc).
    if (route.method == "PATCH" ||
        (route.method == "DELETE" && route.id != RouteId::kCancelBulkReplay) ||
        route.id == RouteId::kCreateSource || route.id == RouteId::kCreateDestination ||
        route.id == RouteId::kCreateRoute || route.id == RouteId::kTestTransform ||
        route.id == RouteId::kRotateDestinationSecret || route.id == RouteId::kRotateSourceSecret ||
        route.id == RouteId::kCreateToken || route.id == RouteId::kAddKey) {
      continue;
    }
    http::Response res =
        route.id == RouteId::kTestRoute
            ? handler_->Respond(
                  Post(std::string(route.path), R"({"source": "github", "types": ["push"]})"))
            : handler_->Respond(Get(Concrete(route.path), std::string(route.method)));
    EXPECT_EQ(res.status / 100, 2) << route.path << ": " << res.body;
    EXPECT_EQ(res.body.find(test::kSigningSecret), std::string::npos) << route.path;
    EXPECT_EQ(res.body.find(test::kVerifySecret), std::string::npos) << route.path;
  }
}

store::ApiToken NamedToken(const std::string& name, const std::string& token,
                           const std::string& role) {
  store::ApiToken t;
  t.name = name;
  t.hash = HexEncode(Sha256(token));
  t.role = role;
  return t;
}

// Issue 28: each role against every route of the table. Every route has one of the three roles
// (an entry that forgot its role has none, and fails here); every GET is the viewer's, the
// operator's routes are the ones listed here, the rest the admin's. A token below a route's role
// gets 403 naming the role needed, before anything runs; at or above it, never 401 or 403.
TEST_F(ApiHandlerTest, EachRoleAgainstEveryRoute) {
  using access::Role;
  const std::string viewer = "hr_viewer-0123456789", op = "hr_operator-0123456789",
                    admin = "hr_admin-0123456789";
  tokens_.Replace({NamedToken("v", viewer, "viewer"), NamedToken("o", op, "operator"),
                   NamedToken("a", admin, "admin")});
  const std::set<RouteId> operator_routes = {
      RouteId::kReplayEvent,      RouteId::kCreateBulkReplay,  RouteId::kCancelBulkReplay,
      RouteId::kPauseDestination, RouteId::kResumeDestination, RouteId::kResetBreaker};
  for (const ApiRoute& route : ApiRoutes()) {
    const std::string what = std::string(route.method) + " " + std::string(route.path);
    ASSERT_EQ(access::ParseRole(access::RoleName(route.role)), route.role) << what << ": no role";
    // The token list says who may use the API: the admin's, though a GET.
    // So do the master keys that open the stored secrets.
    const Role expected = route.id == RouteId::kListTokens || route.id == RouteId::kListKeys
                              ? Role::kAdmin
                          : route.method == "GET" || route.id == RouteId::kTestRoute ? Role::kViewer
                          : operator_routes.contains(route.id) ? Role::kOperator
                                                               : Role::kAdmin;
    EXPECT_EQ(route.role, expected) << what;
    for (const auto& [token, role] :
         {std::pair{viewer, Role::kViewer}, {op, Role::kOperator}, {admin, Role::kAdmin}}) {
      const size_t calls = Calls().size();
      http::Response r = handler_->Respond(
          Get(Concrete(route.path), std::string(route.method), "Bearer " + token));
      if (access::RoleAllows(role, route.role)) {
        EXPECT_NE(r.status, 403) << what << " as " << access::RoleName(role) << ": " << r.body;
        EXPECT_NE(r.status, 401) << what << " as " << access::RoleName(role) << ": " << r.body;
        continue;
      }
      EXPECT_EQ(r.status, 403) << what << " as " << access::RoleName(role) << ": " << r.body;
      EXPECT_NE(r.body.find("needs the " + std::string(access::RoleName(route.role)) + " role"),
                std::string::npos)
          << r.body;
      EXPECT_EQ(Calls().size(), calls) << what << ": a control ran for a refused token";
    }
  }
  // Writes name the token in the audit trail.
  ASSERT_EQ(handler_->Respond(Get("/api/v1/audit")).status, 200);
  json::value page = json::parse(handler_->Respond(Get("/api/v1/audit")).body);
  std::set<std::string> actors;
  for (const json::value& e : page.at("items").as_array()) {
    actors.insert(std::string(e.at("actor").as_string()));
  }
  EXPECT_TRUE(actors.contains("token:o")) << json::serialize(page);
  EXPECT_FALSE(actors.contains("token:v")) << json::serialize(page);
}

TEST_F(ApiHandlerTest, ExpiredAndUnknownTokensAreRefusedSayingWhy) {
  store::ApiToken t = NamedToken("ci", "hr_ci-0123456789", "operator");
  t.expires_at = clock_.Now() + std::chrono::hours(1);
  tokens_.Replace({t});
  http::Response r = handler_->Respond(Get("/api/v1/whoami", "GET", "Bearer hr_ci-0123456789"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body),
            json::parse(R"({"name": "ci", "role": "operator", "scope": null})"));
  clock_.Advance(std::chrono::hours(1));
  r = handler_->Respond(Get("/api/v1/whoami", "GET", "Bearer hr_ci-0123456789"));
  EXPECT_EQ(r.status, 401);
  EXPECT_TRUE(json::parse(r.body).at("error").at("message").as_string().starts_with(
      "token \"ci\" expired at "))
      << r.body;
  r = handler_->Respond(Get("/api/v1/whoami", "GET", "Bearer hr_nobody-0123456789"));
  EXPECT_EQ(r.status, 401);
  EXPECT_NE(r.body.find("wrong bearer token"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("hr_nobody"), std::string::npos) << r.body;
  // The bootstrap token, revoked in the store, is refused saying so.
  store::ApiToken bootstrap;
  bootstrap.name = "bootstrap";
  bootstrap.role = "admin";
  bootstrap.revoked = true;
  tokens_.Replace({bootstrap});
  r = handler_->Respond(Get("/api/v1/whoami"));
  EXPECT_EQ(r.status, 401);
  EXPECT_NE(r.body.find("bootstrap token was revoked"), std::string::npos) << r.body;
}

TEST_F(ApiHandlerTest, RejectionsListNewestFirstWithTheCounts) {
  std::vector<store::Rejection> rows;
  for (int i = 0; i < 3; ++i) {
    store::Rejection r;
    r.source = "github";
    r.received_at = clock_.Now() + std::chrono::seconds(i);
    r.reason = "signature_mismatch";
    r.message = "signature does not match any configured secret";
    // A name that looks like a credential is hidden even if a value got through.
    r.headers = {{"X-GitHub-Event", "push"}, {"X-Hub-Signature-256", "sha256=leaked"}};
    r.size = i;
    r.sha256 = std::string(64, 'f');
    r.remote_addr = i == 0 ? "" : "192.0.2.1";
    rows.push_back(r);
  }
  ASSERT_TRUE(store_->AppendRejections(rows, 100).ok());
  http::Response r = handler_->Respond(Get("/api/v1/sources/github/rejections?limit=2"));
  ASSERT_EQ(r.status, 200) << r.body;
  json::object page = json::parse(r.body).as_object();
  const json::array& items = page.at("items").as_array();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].at("size").as_int64(), 2);
  EXPECT_EQ(items[1].at("size").as_int64(), 1);
  EXPECT_TRUE(items[0].at("id").is_string());
  EXPECT_EQ(items[0].at("reason").as_string(), "signature_mismatch");
  EXPECT_EQ(items[0].at("remote_addr").as_string(), "192.0.2.1");
  EXPECT_EQ(items[0].at("headers").as_array()[1].as_array()[1].as_string(), "(redacted)");
  EXPECT_EQ(r.body.find("leaked"), std::string::npos);
  EXPECT_EQ(page.at("counts").at("since_start").as_int64(), 7);
  EXPECT_EQ(page.at("counts").at("not_recorded").as_int64(), 5);
  EXPECT_EQ(page.at("counts").at("by_reason").at("signature_mismatch").as_int64(), 7);
  const std::string cursor(page.at("next_cursor").as_string());
  r = handler_->Respond(Get("/api/v1/sources/github/rejections?limit=2&cursor=" + cursor));
  ASSERT_EQ(r.status, 200) << r.body;
  page = json::parse(r.body).as_object();
  ASSERT_EQ(page.at("items").as_array().size(), 1u);
  EXPECT_TRUE(page.at("items").as_array()[0].at("remote_addr").is_null());
  EXPECT_TRUE(page.at("next_cursor").is_null());

  r = handler_->Respond(Get("/api/v1/sources/github"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("rejections").at("since_start").as_int64(), 7);
  EXPECT_EQ(handler_->Respond(Get("/api/v1/sources/nope/rejections")).status, 404);
  EXPECT_EQ(handler_->Respond(Get("/api/v1/sources/github/rejections?cursor=zz")).status, 400);
  EXPECT_EQ(handler_->Respond(Get("/api/v1/sources/github/rejections?limit=1001")).status, 400);
  EXPECT_EQ(handler_->Respond(Get("/api/v1/sources/github/rejections?since=1")).status, 400);
  EXPECT_EQ(handler_->Respond(Get("/api/v1/sources/github/rejections", "GET", "")).status, 401);
  EXPECT_EQ(handler_->Respond(Get("/api/v1/sources/github/rejections", "POST")).status, 405);
}

TEST_F(ApiHandlerTest, SimulateComparesTheDestinationsPolicyWithinLimits) {
  http::Response r = handler_->Respond(
      Get("/api/v1/simulate?destination=billing&policy=pro&events=200&fail_window=1s&seed=4"));
  ASSERT_EQ(r.status, 200) << r.body;
  json::value doc = json::parse(r.body);
  const json::array& list = doc.at("strategies").as_array();
  ASSERT_EQ(list.size(), 2u);
  const model::Destination* billing = registry_.Get()->FindDestination("billing");
  ASSERT_NE(billing, nullptr);
  EXPECT_EQ(json::value(list[0].at("policy")), json::value(policy::PolicyToJson(billing->policy)));
  EXPECT_EQ(list[1].at("strategy").as_string(), "pro");
  EXPECT_EQ(doc.at("scenario").at("events").as_int64(), 200);
  EXPECT_EQ(doc.at("scenario").at("seed").as_int64(), 4);
  // Alone, a destination is compared with nothing else.
  r = handler_->Respond(Get("/api/v1/simulate?destination=billing&events=50"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("strategies").as_array().size(), 1u);

  struct Case {
    const char* target;
    int status;
    const char* field;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"/api/v1/simulate?destination=nope", 404, "", "no destination \"nope\""},
           {"/api/v1/simulate?events=100001", 400, "events",
            "events: must be between 1 and 100000, got 100001 (here;"},
           {"/api/v1/simulate?events=0", 400, "events",
            "events: must be between 1 and 100000, got 0"},
           {"/api/v1/simulate?fail_window=1.5s", 400, "fail_window",
            "fail_window: duration \"1.5s\": whole numbers only"},
           {"/api/v1/simulate?policy=platinum", 400, "policy", "policy: preset: unknown preset"},
           {"/api/v1/simulate?policy_json=%7B", 400, "policy_json", "policy_json: not valid JSON"},
           // 60000 events × 1000 attempts: past the bound of simulated requests.
           {"/api/v1/simulate?events=60000&policy_json=%7B%22max_attempts%22%3A1000%7D", 400,
            "events", "at most 5000000 here"},
       }) {
    http::Response res = handler_->Respond(Get(c.target));
    EXPECT_EQ(res.status, c.status) << c.target << ": " << res.body;
    const json::value body = json::parse(res.body);
    const json::value& error = body.at("error");
    EXPECT_NE(std::string(error.at("message").as_string()).find(c.says), std::string::npos)
        << c.target << ": " << res.body;
    if (*c.field) {
      EXPECT_EQ(error.at("field").as_string(), c.field) << c.target;
    }
  }
}

TEST_F(ApiHandlerTest, PauseResumeResetBreakerCallTheEngineAndAudit) {
  http::Request req = Post("/api/v1/destinations/billing/pause", R"({"reason": "maintenance"})");
  http::Response r = handler_->Respond(req);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("name").as_string(), "billing");
  EXPECT_TRUE(json::parse(r.body).as_object().contains("breaker"));
  EXPECT_EQ(r.body.find(test::kSigningSecret), std::string::npos);
  ASSERT_EQ(handler_->Respond(Post("/api/v1/destinations/billing/resume", "{}")).status, 200);
  ASSERT_EQ(handler_->Respond(Post("/api/v1/destinations/crm/reset-breaker", "")).status, 200);
  // Resume and reset-breaker also wake the replay runner: a job holding back chains for the
  // destination looks again at once.
  EXPECT_EQ(Calls(), (std::vector<std::string>{"pause billing maintenance", "resume billing",
                                               "replay_job_queued", "reset_breaker crm",
                                               "replay_job_queued"}));

  r = handler_->Respond(Get("/api/v1/audit"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find("right-token"), std::string::npos);
  json::value page = json::parse(r.body);
  const json::array& items = page.at("items").as_array();
  ASSERT_EQ(items.size(), 3u);
  const std::string actor = "token:bootstrap";
  EXPECT_EQ(items[0].at("action").as_string(), "reset_breaker");  // newest first
  EXPECT_EQ(items[0].at("target").as_string(), "crm");
  EXPECT_EQ(items[0].at("detail"), nullptr);
  EXPECT_EQ(items[1].at("action").as_string(), "resume");
  EXPECT_EQ(items[2].at("action").as_string(), "pause");
  EXPECT_EQ(items[2].at("detail").at("reason").as_string(), "maintenance");
  for (const json::value& e : items) {
    EXPECT_EQ(e.at("actor").as_string(), actor);
    EXPECT_EQ(e.at("count").as_int64(), 1);
    EXPECT_EQ(e.at("at").as_string(), FormatRfc3339(clock_.Now()));
  }
  EXPECT_EQ(page.at("next_cursor"), nullptr);
}

// Issue 10, point 16: pausing a paused destination used to replace its reason with "paused via
// the API"; resuming an active one restarted its concurrency. Both are now no-ops that say so.
TEST_F(ApiHandlerTest, PauseWhenPausedAndResumeWhenActiveChangeNothingAndSaySo) {
  http::Response active = handler_->Respond(Post("/api/v1/destinations/billing/resume", ""));
  ASSERT_EQ(active.status, 200) << active.body;
  EXPECT_EQ(json::parse(active.body).at("note").as_string(), "not paused");
  ASSERT_EQ(handler_->Respond(Post("/api/v1/destinations/billing/pause", R"({"reason": "deploy"})"))
                .status,
            200);
  http::Response r = handler_->Respond(Post("/api/v1/destinations/billing/pause", ""));
  ASSERT_EQ(r.status, 200) << r.body;
  json::value v = json::parse(r.body);
  EXPECT_EQ(v.at("note").as_string(), "already paused");
  EXPECT_EQ(v.at("paused_reason").as_string(), "deploy");
  // A bad body is still a 400, even when there is nothing to do.
  EXPECT_EQ(handler_->Respond(Post("/api/v1/destinations/billing/pause", R"({"x": 1})")).status,
            400);
  EXPECT_EQ(Calls(), std::vector<std::string>{"pause billing deploy"});
  EXPECT_EQ(store_->ListAudit("", 10)->items.size(), 1u);
  // A real change has no note.
  r = handler_->Respond(Post("/api/v1/destinations/billing/resume", ""));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(json::parse(r.body).as_object().contains("note"));
}

// Issue 10, point 17: unknown query parameters, undecodable cursors and ids, other auth schemes,
// PATCH of a route and unknown fields of small bodies are named, never silently accepted.
TEST_F(ApiHandlerTest, StrictQueriesIdsAuthAndBodies) {
  struct Case {
    std::string target;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{
           {"/api/v1/events?staus=failed", "staus"},
           {"/api/v1/events?cursor=garbage", "cursor"},
           {"/api/v1/events?limit=5&limit=6", "limit"},
           {"/api/v1/events?%zz=1", "%zz"},
           {"/api/v1/events/01XXXX", "id"},
           {"/api/v1/events/01XXXX/replay", "id"},
           {"/api/v1/events/" + event_id_ + "?bodyy=false", "bodyy"},
           {"/api/v1/replays?cursor=garbage", "cursor"},
           {"/api/v1/replays/nope", "id"},
           {"/api/v1/audit?page=2", "page"},
           {"/api/v1/destinations?verbose=1", "verbose"},
           {"/api/v1/destinations/billing?x", "x"},
           {"/api/v1/openapi.json?v=2", "v"},
       }) {
    const bool post = c.target.find("/replay") != std::string::npos &&
                      c.target.find("/replays") == std::string::npos;
    http::Response r = handler_->Respond(post ? Post(c.target, "") : Get(c.target));
    EXPECT_EQ(r.status, 400) << c.target << " " << r.body;
    if (r.status != 400) continue;
    EXPECT_EQ(json::parse(r.body).at("error").at("field").as_string(), c.field) << c.target;
  }
  http::Response r = handler_->Respond(Get("/api/v1/events?staus=failed"));
  EXPECT_NE(
      r.body.find("known: status, source, destination, since, until, type, routed, cursor, limit"),
      std::string::npos)
      << r.body;
  // Empty pairs and known parameters still work.
  EXPECT_EQ(handler_->Respond(Get("/api/v1/events?&status=failed&")).status, 200);
  EXPECT_EQ(handler_->Respond(Get("/api/v1/events/" + event_id_ + "?body=false")).status, 200);

  r = handler_->Respond(Get("/api/v1/events", "GET", "Basic YWRtaW46c2VjcmV0"));
  EXPECT_EQ(r.status, 401);
  EXPECT_NE(r.body.find("a bearer token is expected"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\\\"Basic\\\""), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("YWRtaW46c2VjcmV0"), std::string::npos) << r.body;
  r = handler_->Respond(Get("/api/v1/events", "GET", "right-token-0123456789"));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body.find("right-token"), std::string::npos) << r.body;
  r = handler_->Respond(Get("/api/v1/events", "GET", "Bearer wrong"));
  EXPECT_NE(r.body.find("wrong bearer token"), std::string::npos) << r.body;

  r = handler_->Respond(Get("/api/v1/routes/github:billing", "PUT"));
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.body.find("delete it"), std::string::npos) << r.body;

  r = handler_->Respond(Post("/api/v1/destinations/billing/pause", R"({"why": "x"})"));
  EXPECT_NE(r.body.find("known fields: reason"), std::string::npos) << r.body;
  r = handler_->Respond(Post("/api/v1/destinations/billing/resume", R"({"why": "x"})"));
  EXPECT_NE(r.body.find("takes no fields"), std::string::npos) << r.body;
  r = handler_->Respond(Post("/api/v1/replays", R"({"colour": "red"})"));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(
      r.body.find("known fields: status, source, destination, since, until, type, routed, rate"),
      std::string::npos)
      << r.body;
  EXPECT_TRUE(Calls().empty());
}

// Issue 10, point 12: default route ids are "source:destination"; an old "source->destination"
// id still finds its route.
TEST_F(ApiHandlerTest, OldRouteIdsStillFindTheirRoute) {
  http::Response r = handler_->Respond(Get("/api/v1/routes/github-%3Ebilling"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("id").as_string(), "github:billing");
}

// A null reason is an absent one (the default); an empty one is refused, naming the field.
TEST_F(ApiHandlerTest, PauseReasonNullTakesTheDefaultAndEmptyIsRefused) {
  http::Response r =
      handler_->Respond(Post("/api/v1/destinations/billing/pause", R"({"reason": ""})"));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(json::parse(r.body).at("error").at("field").as_string(), "reason");
  EXPECT_TRUE(Calls().empty());
  r = handler_->Respond(Post("/api/v1/destinations/billing/pause", R"({"reason": null})"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Calls(), (std::vector<std::string>{"pause billing paused via the API"}));
}

TEST_F(ApiHandlerTest, DestinationControlsRejectUnknownNamesAndBadBodies) {
  http::Response r = handler_->Respond(Post("/api/v1/destinations/nope/pause", ""));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(json::parse(r.body).at("error").at("code").as_string(), "not_found");
  r = handler_->Respond(Post("/api/v1/destinations/billing/pause", "{not json"));
  EXPECT_EQ(r.status, 400);
  r = handler_->Respond(Post("/api/v1/destinations/billing/pause", R"({"why": "x"})"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body).at("error").at("field").as_string(), "why");
  r = handler_->Respond(Post("/api/v1/destinations/billing/pause", R"({"reason": 3})"));
  EXPECT_EQ(r.status, 400);
  r = handler_->Respond(Post("/api/v1/destinations/billing/resume", R"({"reason": "x"})"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(handler_->Respond(Get("/api/v1/destinations/billing/pause")).status, 405);
  EXPECT_TRUE(Calls().empty());
  auto audit = store_->ListAudit("", 10);
  ASSERT_TRUE(audit.ok());
  EXPECT_TRUE(audit->items.empty());
}

TEST_F(ApiHandlerTest, ReplayCreatesANewChainWakesAndAudits) {
  clock_.Advance(std::chrono::hours(1));
  http::Response r = handler_->Respond(Post("/api/v1/events/" + event_id_ + "/replay", ""));
  ASSERT_EQ(r.status, 202) << r.body;
  json::value v = json::parse(r.body);
  EXPECT_EQ(v.at("event").as_string(), event_id_);
  ASSERT_EQ(v.at("replays").as_array().size(), 1u);
  EXPECT_EQ(v.at("replays").at(0).at("destination").as_string(), "billing");
  EXPECT_EQ(v.at("replays").at(0).at("chain").as_int64(), 1);
  EXPECT_EQ(Calls(), std::vector<std::string>{"wake"});

  r = handler_->Respond(
      Post("/api/v1/events/" + event_id_ + "/replay", R"({"destination": "billing"})"));
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(json::parse(r.body).at("replays").at(0).at("chain").as_int64(), 2);

  auto deliveries = store_->GetDeliveries(event_id_);
  ASSERT_TRUE(deliveries.ok());
  ASSERT_EQ(deliveries->size(), 3u);
  const store::Delivery& replay = deliveries->back();
  EXPECT_EQ(replay.chain, 2);
  EXPECT_EQ(replay.status, store::DeliveryStatus::kScheduled);
  EXPECT_EQ(replay.next_attempt_at, clock_.Now());
  EXPECT_EQ(replay.max_attempts, registry_.Get()->FindDestination("billing")->policy.max_attempts);

  auto audit = store_->ListAudit("", 10);
  ASSERT_TRUE(audit.ok());
  ASSERT_EQ(audit->items.size(), 2u);
  EXPECT_EQ(audit->items[0].action, "replay");
  EXPECT_EQ(audit->items[0].target, event_id_);
  EXPECT_EQ(audit->items[0].count, 1);
  EXPECT_EQ(audit->items[0].detail, R"({"destinations":["billing"]})");
}

TEST_F(ApiHandlerTest, ReplayRefusesWhatItCannotDo) {
  const std::string path = "/api/v1/events/" + event_id_ + "/replay";
  http::Response r = handler_->Respond(Post("/api/v1/events/01NOPE/replay", ""));
  EXPECT_EQ(r.status, 400);  // cannot be an event id
  EXPECT_EQ(json::parse(r.body).at("error").at("field").as_string(), "id");
  r = handler_->Respond(Post("/api/v1/events/01JDZ8X4AC1N4G0Y5K6M7P8Q9R/replay", ""));
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("purged past its replay window"), std::string::npos) << r.body;
  r = handler_->Respond(Post(path, R"({"destination": "nowhere"})"));  // no such destination
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body).at("error").at("field").as_string(), "destination");
  r = handler_->Respond(Post(path, R"({"destination": "billing", "x": 1})"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body).at("error").at("field").as_string(), "x");
  r = handler_->Respond(Post(path, "[1]"));
  EXPECT_EQ(r.status, 400);
  r = handler_->Respond(Post(path, "{"));
  EXPECT_EQ(r.status, 400);

  // billing keeps the default 30-day window: a second past it is too late.
  clock_.Advance(std::chrono::hours(24 * 30) + std::chrono::seconds(1));
  r = handler_->Respond(Post(path, ""));
  EXPECT_EQ(r.status, 409) << r.body;
  json::value e = json::parse(r.body).at("error");
  EXPECT_EQ(e.at("code").as_string(), "failed_precondition");
  EXPECT_NE(std::string(e.at("message").as_string()).find("past its 30-day replay window"),
            std::string::npos)
      << r.body;
  EXPECT_NE(std::string(e.at("message").as_string()).find("cannot be replayed"), std::string::npos);
  EXPECT_TRUE(Calls().empty());
  auto deliveries = store_->GetDeliveries(event_id_);
  ASSERT_TRUE(deliveries.ok());
  EXPECT_EQ(deliveries->size(), 1u);
  auto audit = store_->ListAudit("", 10);
  ASSERT_TRUE(audit.ok());
  EXPECT_TRUE(audit->items.empty());
}

TEST_F(ApiHandlerTest, AuditPagesAndRejectsBadLimits) {
  for (const char* control : {"pause", "resume", "pause"}) {  // each one a change
    ASSERT_EQ(
        handler_->Respond(Post(std::string("/api/v1/destinations/billing/") + control, "")).status,
        200);
  }
  http::Response r = handler_->Respond(Get("/api/v1/audit?limit=2"));
  ASSERT_EQ(r.status, 200) << r.body;
  json::value page = json::parse(r.body);
  EXPECT_EQ(page.at("items").as_array().size(), 2u);
  ASSERT_TRUE(page.at("next_cursor").is_string());
  r = handler_->Respond(
      Get("/api/v1/audit?limit=2&cursor=" + std::string(page.at("next_cursor").as_string())));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("items").as_array().size(), 1u);
  r = handler_->Respond(Get("/api/v1/audit?limit=0"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body).at("error").at("field").as_string(), "limit");
}

TEST_F(ApiHandlerTest, HandleAnswersOnAWorkerThread) {
  std::promise<http::Response> done;
  handler_->Handle(Get("/api/v1/routes"), [&done](http::Response r) { done.set_value(r); });
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  http::Response r = f.get();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body).at("items").as_array().size(), 2u);
}

// The OpenAPI document and the route table describe the same API: every documented operation
// is served (200 for existing ids, 405 for another method) and every served route is documented.
TEST_F(ApiHandlerTest, OpenApiDocumentMatchesTheRouteTable) {
  json::value doc = json::parse(OpenApiDocument());
  EXPECT_EQ(doc.at("openapi").as_string(), "3.1.0");
  std::set<std::pair<std::string, std::string>> documented;
  for (const auto& [path, item] : doc.at("paths").as_object()) {
    for (const auto& [method, op] : item.as_object()) {
      std::string m(method);
      std::transform(m.begin(), m.end(), m.begin(), ::toupper);
      documented.emplace(m, std::string(path));
      EXPECT_TRUE(op.as_object().contains("responses")) << path;
      // Probe it: the handler serves exactly this.
      const bool tokens = path.starts_with("/api/v1/tokens") || path.starts_with("/api/v1/keys");
      const std::string post_body =
          path.starts_with("/api/v1/keys")
              ? R"({"master_key": ")" + Base64Encode(std::string(32, 'n')) + "\"}"
              : R"({"name": "probe", "role": "viewer"})";
      http::Response r =
          path == "/api/v1/routes/test"  // a dry run needs a source to try its events
              ? handler_->Respond(Post(std::string(path), R"({"source": "github"})"))
              : tokens && m == "POST" ? handler_->Respond(Post(std::string(path), post_body))
                                      : handler_->Respond(Get(Concrete(path), m));
      if (tokens && m != "GET") {
        EXPECT_EQ(r.status, m == "POST" ? 201 : 404) << m << " " << path << ": " << r.body;
        EXPECT_EQ(handler_->Respond(Get(Concrete(path), "PUT")).status, 405) << path;
        continue;
      }
      const bool catalog_change =
          (m == "POST" &&
           (path == "/api/v1/sources" || path == "/api/v1/destinations" ||
            path == "/api/v1/routes" || path == "/api/v1/destinations/{name}/rotate-secret" ||
            path == "/api/v1/sources/{name}/rotate-secret")) ||
          m == "PATCH" || (m == "DELETE" && path != "/api/v1/replays/{id}");
      if (path == "/api/v1/transforms/test") {
        // No transform runner in this fixture (the integration tests run transforms).
        EXPECT_EQ(r.status, 503) << r.body;
        EXPECT_EQ(handler_->Respond(Get(Concrete(path), "PUT")).status, 405) << path;
        continue;
      }
      if (catalog_change) {
        // This fixture has no catalog service: served, but "not available here" (the catalog
        // routes have their own contract tests in api_catalog_test.cc).
        EXPECT_EQ(r.status, 503) << m << " " << path << ": " << r.body;
        EXPECT_NE(r.body.find("changing the catalog"), std::string::npos) << r.body;
      } else {
        EXPECT_EQ(r.status / 100, 2) << m << " " << path << ": " << r.body;
      }
      EXPECT_EQ(handler_->Respond(Get(Concrete(path), "PUT")).status, 405) << path;
      // Path parameters are documented as such.
      size_t brace = std::string_view(path).find('{');
      if (brace != std::string::npos) {
        std::string name(path.substr(brace + 1, path.find('}') - brace - 1));
        bool found = false;
        for (const json::value& p : op.at("parameters").as_array()) {
          found |= p.at("name").as_string() == name && p.at("in").as_string() == "path";
        }
        EXPECT_TRUE(found) << path << " does not document {" << name << "}";
      }
    }
  }
  std::set<std::pair<std::string, std::string>> served;
  for (const ApiRoute& r : ApiRoutes()) {
    served.emplace(r.method, r.path);
    // A route a viewer may not use documents its 403.
    std::string m(r.method);
    std::transform(m.begin(), m.end(), m.begin(), ::tolower);
    const json::value* item = doc.at("paths").as_object().if_contains(r.path);
    const json::value* op = item ? item->as_object().if_contains(m) : nullptr;
    if (op && r.role != access::Role::kViewer) {
      EXPECT_TRUE(op->at("responses").as_object().contains("403")) << r.method << " " << r.path;
    }
  }
  EXPECT_EQ(documented, served);
  // The served document is the same text.
  http::Response r = handler_->Respond(Get("/api/v1/openapi.json"));
  EXPECT_EQ(r.body, OpenApiDocument());
  EXPECT_EQ(r.content_type, "application/json");
}

TEST_F(ApiHandlerTest, OpenApiReferencesResolve) {
  json::value doc = json::parse(OpenApiDocument());
  std::vector<const json::value*> stack{&doc};
  int refs = 0;
  while (!stack.empty()) {
    const json::value* v = stack.back();
    stack.pop_back();
    if (v->is_object()) {
      for (const auto& [k, child] : v->as_object()) {
        if (k == "$ref") {
          ++refs;
          std::string ref(child.as_string());
          ASSERT_EQ(ref.rfind("#/", 0), 0u) << ref;
          boost::system::error_code ec;
          EXPECT_NE(doc.find_pointer(ref.substr(1), ec), nullptr) << ref;
        }
        stack.push_back(&child);
      }
    } else if (v->is_array()) {
      for (const json::value& child : v->as_array()) stack.push_back(&child);
    }
  }
  EXPECT_GT(refs, 10);
}

TEST_F(ApiHandlerTest, BulkReplayQueuesAJobShowsAndCancelsIt) {
  // The fixture's event failed at billing.
  {
    store::NewEvent e = store::test::MakeEvent(clock_, random_, "{}", {"billing"}, "github");
    e.deliveries[0].status = store::DeliveryStatus::kFailed;
    ASSERT_TRUE(store_->AppendEventSync(std::move(e)).ok());
  }
  http::Response r = handler_->Respond(Post("/api/v1/replays", ""));
  ASSERT_EQ(r.status, 202) << r.body;
  json::value job = json::parse(r.body);
  EXPECT_EQ(job.at("state").as_string(), "queued");
  EXPECT_EQ(job.at("total").as_int64(), 1);
  EXPECT_EQ(job.at("done").as_int64(), 0);
  EXPECT_EQ(job.at("rate").to_number<double>(), 50.0);  // the default without a destination
  // Plain numbers, never "5E1": an integral rate is an integer.
  EXPECT_NE(r.body.find("\"rate\":50,"), std::string::npos) << r.body;
  EXPECT_EQ(job.at("filter"), json::parse(R"({"status": "failed"})"));
  EXPECT_TRUE(job.at("error").is_null());
  const std::string id(job.at("id").as_string());
  EXPECT_EQ(Calls().back(), "replay_job_queued");

  r = handler_->Respond(Get("/api/v1/replays/" + id));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("id").as_string(), id);
  EXPECT_EQ(handler_->Respond(Get("/api/v1/replays/01JDZ8X4AC1N4G0Y5K6M7P8Q9R")).status, 404);

  r = handler_->Respond(Get("/api/v1/replays/" + id, "DELETE"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("state").as_string(), "cancelled");
  EXPECT_EQ(handler_->Respond(Get("/api/v1/replays/01JDZ8X4AC1N4G0Y5K6M7P8Q9R", "DELETE")).status,
            404);

  // The destination's rate limit is the default rate; an explicit rate wins.
  model::Catalog catalog = test::MakeCatalog();
  catalog.destinations.at("crm").rate_limit = 7;
  ASSERT_TRUE(registry_.Replace(catalog).ok());
  r = handler_->Respond(Post("/api/v1/replays", R"({"destination": "crm"})"));
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(json::parse(r.body).at("rate").to_number<double>(), 7.0);
  EXPECT_EQ(json::parse(r.body).at("total").as_int64(), 0);
  r = handler_->Respond(Post("/api/v1/replays", R"({"destination": "crm", "rate": "2/s"})"));
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(json::parse(r.body).at("rate").to_number<double>(), 2.0);

  // Audit: who asked for what, and the cancel.
  json::value audit = json::parse(handler_->Respond(Get("/api/v1/audit")).body);
  const json::array& items = audit.at("items").as_array();
  ASSERT_GE(items.size(), 4u);
  EXPECT_EQ(items[3].at("action").as_string(), "bulk_replay");
  EXPECT_EQ(items[3].at("target").as_string(), id);
  EXPECT_EQ(items[3].at("count").as_int64(), 1);
  EXPECT_EQ(items[3].at("detail").at("rate").to_number<double>(), 50.0);
  EXPECT_EQ(items[2].at("action").as_string(), "cancel_replay");

  // A fractional rate is a plain decimal.
  r = handler_->Respond(Post("/api/v1/replays", R"({"destination": "crm", "rate": "1/m"})"));
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_NE(r.body.find("\"rate\":0.016666666666666666,"), std::string::npos) << r.body;
}

TEST_F(ApiHandlerTest, EventDetailCanLeaveTheBodyOut) {
  http::Response r = handler_->Respond(Get("/api/v1/events/" + event_id_));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body).at("body_base64").as_string(), "e30=");  // "{}"
  r = handler_->Respond(Get("/api/v1/events/" + event_id_ + "?body=false"));
  ASSERT_EQ(r.status, 200) << r.body;
  json::value v = json::parse(r.body);
  EXPECT_FALSE(v.as_object().contains("body_base64"));
  EXPECT_EQ(v.at("size").as_int64(), 2);
  EXPECT_EQ(v.at("deliveries").as_array().size(), 1u);
  r = handler_->Respond(Get("/api/v1/events/" + event_id_ + "?body=no"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body).at("error").at("field").as_string(), "body");
}

TEST_F(ApiHandlerTest, BulkReplaysAreListedNewestFirst) {
  clock_.Advance(std::chrono::seconds(1));
  http::Response created = handler_->Respond(Post("/api/v1/replays", R"({"status": "failed"})"));
  ASSERT_EQ(created.status, 202) << created.body;
  const std::string newest(json::parse(created.body).at("id").as_string());
  http::Response r = handler_->Respond(Get("/api/v1/replays?limit=1"));
  ASSERT_EQ(r.status, 200) << r.body;
  json::value page = json::parse(r.body);
  ASSERT_EQ(page.at("items").as_array().size(), 1u);
  EXPECT_EQ(page.at("items").as_array()[0].at("id").as_string(), newest);
  ASSERT_TRUE(page.at("next_cursor").is_string());
  r = handler_->Respond(
      Get("/api/v1/replays?limit=10&cursor=" + std::string(page.at("next_cursor").as_string())));
  ASSERT_EQ(r.status, 200) << r.body;
  page = json::parse(r.body);
  ASSERT_EQ(page.at("items").as_array().size(), 1u);  // the fixture's job
  EXPECT_EQ(page.at("items").as_array()[0].at("id").as_string(), event_id_);
  EXPECT_TRUE(page.at("next_cursor").is_null());
  EXPECT_EQ(handler_->Respond(Get("/api/v1/replays?limit=0")).status, 400);
}

TEST_F(ApiHandlerTest, BulkReplayRejectsBadRequests) {
  for (const char* body :
       {R"({"rate": "fast"})", R"({"rate": 0})", R"({"rate": true})", R"({"status": "nope"})",
        R"({"since": "yesterday"})", R"({"destination": "nope"})", R"({"colour": "red"})", "[]"}) {
    http::Response r = handler_->Respond(Post("/api/v1/replays", body));
    EXPECT_EQ(r.status, 400) << body << ": " << r.body;
  }
  EXPECT_EQ(json::parse(handler_->Respond(Post("/api/v1/replays", R"({"rate": "x"})")).body)
                .at("error")
                .at("field")
                .as_string(),
            "rate");
}

}  // namespace
}  // namespace hookrelay::api

namespace hookrelay::api {
namespace {

// Issue 12: the dashboard's overview reads /stats (the store's per-minute counters plus the due
// backlog) and a destination's page /destinations/{name}/schedule (PlanSchedule, as the CLI).
TEST_F(ApiHandlerTest, StatsCountTheEventReceivedAndTheDueBacklog) {
  http::Response r = handler_->Respond(Get("/api/v1/stats?window=1h&step=1m"));
  ASSERT_EQ(r.status, 200) << r.body;
  boost::json::object o = boost::json::parse(r.body).as_object();
  EXPECT_EQ(o.at("points").as_array().size(), 60u);
  EXPECT_EQ(o.at("totals").at("received").as_int64(), 1);  // the fixture's event
  EXPECT_EQ(o.at("due").at("count").as_int64(), 1) << "its delivery is due now";
  EXPECT_FALSE(o.at("due").at("oldest_due_at").is_null());

  r = handler_->Respond(Get("/api/v1/stats?window=1h&step=90s"));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("\"field\":\"step\""), std::string::npos) << r.body;
  EXPECT_EQ(handler_->Respond(Get("/api/v1/stats?windw=1h")).status, 400);
  EXPECT_EQ(handler_->Respond(Get("/api/v1/stats", "GET", "Bearer nope")).status, 401);
}

TEST_F(ApiHandlerTest, DestinationScheduleIsThePlanOfItsPolicy) {
  http::Response r = handler_->Respond(Get("/api/v1/destinations/billing/schedule"));
  ASSERT_EQ(r.status, 200) << r.body;
  boost::json::object o = boost::json::parse(r.body).as_object();
  const boost::json::array& attempts = o.at("attempts").as_array();
  ASSERT_FALSE(attempts.empty());
  EXPECT_EQ(attempts[0].at("n").as_int64(), 1);
  EXPECT_EQ(static_cast<int64_t>(attempts.size()), o.at("policy").at("max_attempts").as_int64());
  EXPECT_TRUE(o.at("gives_up").at("reason").is_string());
  EXPECT_EQ(handler_->Respond(Get("/api/v1/destinations/nope/schedule")).status, 404);
  EXPECT_EQ(handler_->Respond(Get("/api/v1/destinations/billing/schedule", "POST")).status, 405);
}

}  // namespace
}  // namespace hookrelay::api
