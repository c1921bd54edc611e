#include "api/api_handler.h"

#include <algorithm>
#include <boost/algorithm/string/predicate.hpp>
#include <boost/json.hpp>
#include <cctype>

#include "api/api_routes.h"
#include "api/handler_util.h"
#include "api/openapi.h"
#include "api/request_params.h"
#include "api/scope_check.h"
#include "common/thread_name.h"

// The handler's lifecycle, authentication and the dispatch from the route table (api_routes.h)
// to each resource's handlers: events_handler.cc, destinations_handler.cc, sources_handler.cc,
// routes_handler.cc, catalog_handler.cc (creating, changing and deleting sources, destinations
// and routes), replays_handler.cc, audit_handler.cc, stats_handler.cc, simulate_handler.cc.

namespace hookrelay::api {

namespace {

constexpr uint64_t kBodyLimit = 64 * 1024;  // the bodies are small JSON objects

// Route ids used to be "source->destination"; such an id still finds its route, now
// "source:destination".
std::string CurrentRouteId(const model::Catalog& catalog, const std::string& id) {
  auto has = [&catalog](const std::string& x) {
    return std::any_of(catalog.routes.begin(), catalog.routes.end(),
                       [&x](const model::Route& r) { return r.id == x; });
  };
  const size_t arrow = id.find("->");
  if (arrow == std::string::npos || has(id)) return id;
  std::string current = id.substr(0, arrow) + ":" + id.substr(arrow + 2);
  return has(current) ? current : id;
}

}  // namespace

ApiHandler::ApiHandler(Authorizer authorize, store::Store& store, model::Registry& registry,
                       DestinationStates destination_states, Controls controls, const Clock& clock,
                       int workers)
    : authorize_(std::move(authorize)),
      store_(store),
      registry_(registry),
      destination_states_(std::move(destination_states)),
      controls_(std::move(controls)),
      clock_(clock) {
  for (int i = 0; i < std::max(1, workers); ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ApiHandler::~ApiHandler() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ApiHandler::WorkerLoop() {
  NameThisThread("hr-api");
  MutexLock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this]() REQUIRES(mu_) { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left
    std::function<void()> job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

bool ApiHandler::Matches(const http::RequestHead& head) {
  return head.segments.size() >= 2 && head.segments[0] == "api" && head.segments[1] == "v1";
}

http::Handler::HeadDecision ApiHandler::OnHead(const http::RequestHead& head) const {
  http::Handler::HeadDecision d;
  std::optional<std::string_view> auth = head.Header("Authorization");
  access::TokenRegistry::Authentication who;
  if (auth && authorize_) who = authorize_(*auth);
  if (!who.principal) {
    // Another scheme (Basic, a bare token) is told what is expected. Only a scheme word is
    // echoed, never what may be a credential.
    std::string message = "send Authorization: Bearer <token>";
    if (auth) {
      const size_t space = auth->find(' ');
      const std::string_view scheme = auth->substr(0, space);
      const bool word = space != std::string_view::npos && !scheme.empty() && scheme.size() <= 16 &&
                        std::all_of(scheme.begin(), scheme.end(), [](char c) {
                          return std::isalpha(static_cast<unsigned char>(c));
                        });
      if (word && boost::algorithm::iequals(scheme, "bearer")) {
        message = who.error.empty() ? "wrong bearer token" : who.error;
      } else {
        message = "a bearer token is expected: send Authorization: Bearer <token>";
        if (word) message += ", not \"" + std::string(scheme) + "\" credentials";
      }
    }
    http::Response r = http::JsonError(401, "unauthenticated", message);
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    d.reject = std::move(r);
    return d;
  }
  RouteMatch m = MatchRoute(head.segments, head.method);
  if (!m.route) {
    if (m.allowed.empty()) {
      d.reject = http::JsonError(404, "not_found", "no such path: " + head.path);
    } else {
      std::string allow;
      for (const std::string& a : m.allowed) allow += (allow.empty() ? "" : ", ") + a;
      http::Response r = http::JsonError(405, "method_not_allowed", "use " + allow);
      r.headers.emplace_back("Allow", allow);
      d.reject = std::move(r);
    }
    return d;
  }
  const access::Principal& p = *who.principal;
  if (!access::RoleAllows(p.role, m.route->role)) {
    d.reject = http::JsonError(403, "permission_denied",
                               std::string(m.route->method) + " " + std::string(m.route->path) +
                                   " needs the " + std::string(access::RoleName(m.route->role)) +
                                   " role; token \"" + p.name + "\" is " +
                                   (p.role == access::Role::kViewer ? "a " : "an ") +
                                   std::string(access::RoleName(p.role)));
    return d;
  }
  const RouteId id = m.route->id;
  const bool tokens =
      id == RouteId::kListTokens || id == RouteId::kCreateToken || id == RouteId::kDeleteToken;
  const bool keys = id == RouteId::kListKeys || id == RouteId::kAddKey || id == RouteId::kRetireKey;
  if (p.scope && (tokens || keys)) {
    // A scoped admin could otherwise make itself an unscoped token, or reach every secret.
    d.reject = http::JsonError(
        403, "permission_denied",
        "token \"" + p.name + "\" is scoped to some sources and destinations; managing " +
            (tokens ? "tokens" : "master keys") + " needs an admin token without a scope");
    return d;
  }
  d.body_limit = kBodyLimit;
  return d;
}

access::Principal ApiHandler::PrincipalOf(const http::RequestHead& request) const {
  std::optional<std::string_view> auth = request.Header("Authorization");
  if (!auth || !authorize_) return {};
  return authorize_(*auth).principal.value_or(access::Principal{});
}

std::string ApiHandler::Actor(const http::RequestHead& request) const {
  return "token:" + PrincipalOf(request).name;
}

void ApiHandler::Handle(http::Request request, http::Responder respond) {
  {
    MutexLock lock(mu_);
    queue_.push_back([this, request = std::move(request), respond = std::move(respond)] {
      respond(Respond(request));
    });
  }
  cv_.notify_one();
}

http::Response ApiHandler::Respond(const http::Request& request) const {
  http::Handler::HeadDecision head = OnHead(request);
  if (head.reject) return std::move(*head.reject);
  // Who it is, read once here for the use noted and the scope below.
  const access::Principal who = PrincipalOf(request);
  if (controls_.token_used) controls_.token_used(who.name, request.remote_address);
  RouteMatch m = MatchRoute(request.segments, request.method);
  std::shared_ptr<const model::Catalog> catalog = registry_.Get();
  switch (m.route->id) {
    case RouteId::kListEvents:
    case RouteId::kGetEvent:
    case RouteId::kListBulkReplays:
    case RouteId::kListAudit:
    case RouteId::kListSourceRejections:
    case RouteId::kStats:
    case RouteId::kSimulate: break;  // their query parsers name what they take
    default:
      if (Status s = CheckQueryParams(request, {}); !s.ok()) return FromStatus(s);
  }
  switch (m.route->id) {
    case RouteId::kGetEvent:
    case RouteId::kReplayEvent:
      if (Status s = CheckEventId(m.params[0]); !s.ok()) return FromStatus(s);
      break;
    case RouteId::kGetBulkReplay:
    case RouteId::kCancelBulkReplay:
      if (Status s = CheckEventId(m.params[0], "replay"); !s.ok()) return FromStatus(s);
      break;
    case RouteId::kGetRoute:
    case RouteId::kUpdateRoute:
    case RouteId::kDeleteRoute: m.params[0] = CurrentRouteId(*catalog, m.params[0]); break;
    default: break;
  }
  const std::string param = m.params.empty() ? std::string() : m.params[0];
  // A scoped token sees the catalog cut down to what it reaches, so the lists and the lookups by
  // name of the handlers below show nothing else; what they read from the store by name is
  // checked first (scope_check.h).
  const access::Scope* scope = who.scope ? &*who.scope : nullptr;
  std::optional<model::Catalog> visible;
  if (scope) {
    if (auto refused = RefuseOutOfScope(*m.route, param, request, *catalog, *scope)) {
      return std::move(*refused);
    }
    visible = access::VisibleCatalog(*catalog, *scope);
  }
  const model::Catalog& c = visible ? *visible : *catalog;
  switch (m.route->id) {
    case RouteId::kListEvents: return ListEvents(request, c, scope);
    case RouteId::kGetEvent: return GetEvent(request, param, c, scope);
    case RouteId::kReplayEvent: return ReplayEvent(request, param, c, scope);
    case RouteId::kListBulkReplays: return ListBulkReplays(request, scope);
    case RouteId::kCreateBulkReplay: return CreateBulkReplay(request, scope);
    case RouteId::kGetBulkReplay: return GetBulkReplay(param, scope);
    case RouteId::kCancelBulkReplay: return CancelBulkReplay(request, param, scope);
    case RouteId::kListDestinations: return ListDestinations(c);
    case RouteId::kGetDestination: return GetDestination(param, c);
    case RouteId::kPauseDestination:
    case RouteId::kResumeDestination:
    case RouteId::kResetBreaker: return DestinationControl(request, m.route->id, param);
    case RouteId::kRotateDestinationSecret: return RotateDestinationSecret(request, param);
    case RouteId::kDestinationSchedule: return DestinationSchedule(param, c);
    case RouteId::kListSources: return ListSources(c);
    case RouteId::kGetSource: return GetSource(param, c);
    case RouteId::kRotateSourceSecret: return RotateSourceSecret(request, param);
    case RouteId::kListSourceRejections: return ListRejections(request, param);
    case RouteId::kListRoutes: return ListRoutes(c);
    case RouteId::kGetRoute: return CatalogView(store::CatalogKind::kRoute, param);
    case RouteId::kTestRoute: return TestRoute(request, c);
    case RouteId::kTestTransform: return TestTransform(request, c);
    case RouteId::kCreateSource:
    case RouteId::kCreateDestination:
    case RouteId::kCreateRoute: return ChangeCatalog(request, m.route->id, "");
    case RouteId::kUpdateSource:
    case RouteId::kDeleteSource:
    case RouteId::kUpdateDestination:
    case RouteId::kDeleteDestination:
    case RouteId::kUpdateRoute:
    case RouteId::kDeleteRoute: return ChangeCatalog(request, m.route->id, param);
    case RouteId::kListAudit: return ListAudit(request, scope);
    case RouteId::kListTokens: return ListTokens();
    case RouteId::kCreateToken: return CreateToken(request);
    case RouteId::kDeleteToken: return DeleteToken(request, param);
    case RouteId::kWhoAmI: return WhoAmI(request);
    case RouteId::kListKeys: return ListKeys();
    case RouteId::kAddKey: return AddKey(request);
    case RouteId::kRetireKey: return RetireKey(request, param);
    case RouteId::kStats: return Stats(request, scope);
    case RouteId::kSimulate: return Simulate(request, c);
    case RouteId::kOpenApi: {
      http::Response r;
      r.body = std::string(OpenApiDocument());
      return r;
    }
  }
  return http::JsonError(500, "internal", "unhandled route");
}

}  // namespace hookrelay::api
