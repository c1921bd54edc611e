#include "api/api_handler.h"

#include <algorithm>
#include <boost/algorithm/string/predicate.hpp>
#include <boost/json.hpp>
#include <cctype>

#include "api/api_json.h"
#include "api/api_routes.h"
#include "api/openapi.h"
#include "api/stats.h"
#include "catalog/tls_files.h"
#include "common/allocator.h"
#include "common/id.h"
#include "common/random.h"
#include "common/thread_name.h"
#include "http/json_text.h"
#include "policy/schedule_json.h"
#include "replay/replay_filter.h"
#include "replay/replay_runner.h"
#include "sim/herd.h"
#include "sim/herd_input.h"
#include "sim/herd_report.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

constexpr uint64_t kBodyLimit = 64 * 1024;  // the bodies are small JSON objects
constexpr std::string_view kDefaultPauseReason = "paused via the API";
constexpr double kDefaultBulkReplayRate = 50;  // per second, when the destination sets none
constexpr int kHeldQueuesShown = 20;  // a destination's held queues listed (the total is exact)
// Simulations that may simulate more requests than this (sim::HerdRequestBound) run one at a time.
constexpr int64_t kSmallSimulation = 200'000;

http::Response Json(const json::object& o) {
  http::Response r;
  r.body = http::SerializeJson(o);  // plain numbers: "rate": 50, not 5E1
  return r;
}

http::Response FromStatus(const Status& s) {
  switch (s.code()) {
    case Status::Code::kInvalidArgument:
      // The message names the field, also where it reads well only next to a form
      // ("must be an integer from 1 to 1000" → "limit: must be …").
      if (!s.field().empty() && s.message().find(s.field()) == std::string::npos) {
        return http::JsonError(400, Status::CodeName(s.code()), s.field() + ": " + s.message(),
                               s.field());
      }
      return http::JsonError(400, Status::CodeName(s.code()), s.message(), s.field());
    case Status::Code::kNotFound:
      return http::JsonError(404, Status::CodeName(s.code()), s.message());
    case Status::Code::kFailedPrecondition:
    case Status::Code::kAlreadyExists:
      return http::JsonError(409, Status::CodeName(s.code()), s.message(), s.field());
    case Status::Code::kUnavailable:
    case Status::Code::kResourceExhausted:
      return http::JsonError(503, "unavailable", "store: " + s.message());
    default: return http::JsonError(500, "internal", s.message());
  }
}

http::Response NotFound(std::string_view what, const std::string& name) {
  return http::JsonError(404, "not_found", "no " + std::string(what) + " \"" + name + "\"");
}

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

http::Response NoControl(std::string_view what) {
  return http::JsonError(503, "unavailable", std::string(what) + " is not available here");
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
  if (!auth || !authorize_ || !authorize_(*auth)) {
    // Another scheme (Basic, a bare token) is told what is expected. Only a scheme word is
    // echoed, never what may be a credential.
    std::string message = "send Authorization: Bearer <admin token>";
    if (auth) {
      const size_t space = auth->find(' ');
      const std::string_view scheme = auth->substr(0, space);
      const bool word = space != std::string_view::npos && !scheme.empty() && scheme.size() <= 16 &&
                        std::all_of(scheme.begin(), scheme.end(), [](char c) {
                          return std::isalpha(static_cast<unsigned char>(c));
                        });
      if (word && boost::algorithm::iequals(scheme, "bearer")) {
        message = "wrong bearer token";
      } else {
        message = "a bearer token is expected: send Authorization: Bearer <admin token>";
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
      std::string message = "use " + allow;
      if (head.method == "PATCH" && head.segments.size() == 4 && head.segments[2] == "routes") {
        message =
            "a route cannot be changed: delete it (DELETE /api/v1/routes/{id}) and create "
            "another (POST /api/v1/routes)";
      }
      http::Response r = http::JsonError(405, "method_not_allowed", message);
      r.headers.emplace_back("Allow", allow);
      d.reject = std::move(r);
    }
    return d;
  }
  d.body_limit = kBodyLimit;
  return d;
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
    case RouteId::kDeleteRoute: m.params[0] = CurrentRouteId(*catalog, m.params[0]); break;
    default: break;
  }
  switch (m.route->id) {
    case RouteId::kListEvents: {
      auto q = ParseEventListQuery(request);
      if (!q.ok()) return FromStatus(q.status());
      auto page = store_.ListEvents(q->filter, q->cursor, q->limit);
      if (!page.ok()) return FromStatus(page.status());
      // Why paused deliveries are paused (paused_by), read only when the page has any.
      std::optional<PauseCauses> causes;
      for (const store::Event& e : page->items) {
        for (const store::CurrentDelivery& c : e.current) {
          if (c.status == store::DeliveryStatus::kPaused && !causes) {
            auto loaded = LoadPauseCauses(store_, *catalog);
            if (!loaded.ok()) return FromStatus(loaded.status());
            causes = std::move(*loaded);
          }
        }
      }
      return Json(EventPageToJson(*page, causes ? &*causes : nullptr));
    }
    case RouteId::kGetEvent: {
      auto with_body = ParseEventDetailQuery(request);
      if (!with_body.ok()) return FromStatus(with_body.status());
      auto detail = LoadEventDetail(store_, m.params[0], *with_body, catalog.get());
      if (!detail.ok()) return FromStatus(detail.status());
      if (!detail->has_value()) return NotFound("event", m.params[0]);
      return Json(**detail);
    }
    case RouteId::kListDestinations: {
      auto states = destination_states_ ? destination_states_()
                                        : std::map<std::string, delivery::DestinationState>();
      return Json(DestinationListToJson(*catalog, states));
    }
    case RouteId::kGetDestination: {
      const model::Destination* d = catalog->FindDestination(m.params[0]);
      if (!d) return NotFound("destination", m.params[0]);
      return DestinationView(*d);
    }
    case RouteId::kPauseDestination:
    case RouteId::kResumeDestination:
    case RouteId::kResetBreaker: return DestinationControl(request, m.route->id, m.params[0]);
    case RouteId::kReplayEvent: return ReplayEvent(request, m.params[0]);
    case RouteId::kCreateBulkReplay: return CreateBulkReplay(request);
    case RouteId::kListBulkReplays: {
      auto q = ParsePageQuery(request);
      if (!q.ok()) return FromStatus(q.status());
      auto page = store_.ListReplayJobs(q->cursor, q->limit);
      if (!page.ok()) return FromStatus(page.status());
      return Json(ReplayJobPageToJson(*page));
    }
    case RouteId::kGetBulkReplay: {
      auto job = store_.GetReplayJob(m.params[0]);
      if (!job.ok()) return FromStatus(job.status());
      if (!job->has_value()) return NotFound("replay", m.params[0]);
      return Json(ReplayJobToJson(**job));
    }
    case RouteId::kCancelBulkReplay: return CancelBulkReplay(request, m.params[0]);
    case RouteId::kListAudit: return ListAudit(request);
    case RouteId::kStats: {
      auto q = ParseStatsQuery(request);
      if (!q.ok()) return FromStatus(q.status());
      const TimePoint now = clock_.Now();
      const auto [since, until] = StatsRange(*q, now);
      auto rows = store_.GetStats(since, until);
      if (!rows.ok()) return FromStatus(rows.status());
      auto due = store_.CountDue(now);
      if (!due.ok()) return FromStatus(due.status());
      auto oldest = store_.OldestDueAt(now);
      if (!oldest.ok()) return FromStatus(oldest.status());
      return Json(StatsToJson(*q, now, *rows, *due, *oldest));
    }
    case RouteId::kDestinationSchedule: {
      const model::Destination* d = catalog->FindDestination(m.params[0]);
      if (!d) return NotFound("destination", m.params[0]);
      SeededRandom random(SystemRandom::Instance().Next());
      return Json(policy::ScheduleToJson(d->policy, policy::PlanSchedule(d->policy, random)));
    }
    case RouteId::kSimulate: return Simulate(request, *catalog);
    case RouteId::kListSources: return Json(SourceListToJson(*catalog));
    case RouteId::kGetSource: {
      const model::Source* s = catalog->FindSource(m.params[0]);
      if (!s) return NotFound("source", m.params[0]);
      return SourceView(*s);
    }
    case RouteId::kListSourceRejections: return ListRejections(request, m.params[0]);
    case RouteId::kListRoutes: return Json(RouteListToJson(*catalog));
    case RouteId::kGetRoute: return CatalogView(store::CatalogKind::kRoute, m.params[0]);
    case RouteId::kCreateSource:
    case RouteId::kCreateDestination:
    case RouteId::kCreateRoute: return ChangeCatalog(request, m.route->id, "");
    case RouteId::kUpdateSource:
    case RouteId::kDeleteSource:
    case RouteId::kUpdateDestination:
    case RouteId::kDeleteDestination:
    case RouteId::kDeleteRoute: return ChangeCatalog(request, m.route->id, m.params[0]);
    case RouteId::kOpenApi: {
      http::Response r;
      r.body = std::string(OpenApiDocument());
      return r;
    }
  }
  return http::JsonError(500, "internal", "unhandled route");
}

http::Response ApiHandler::CatalogView(store::CatalogKind kind, const std::string& name) const {
  std::shared_ptr<const model::Catalog> catalog = registry_.Get();
  switch (kind) {
    case store::CatalogKind::kSource:
      if (const model::Source* s = catalog->FindSource(name)) return SourceView(*s);
      return NotFound("source", name);
    case store::CatalogKind::kDestination:
      if (const model::Destination* d = catalog->FindDestination(name)) return DestinationView(*d);
      return NotFound("destination", name);
    case store::CatalogKind::kRoute:
      for (const model::Route& r : catalog->routes) {
        if (r.id == name) return Json(model::RouteToJson(r));
      }
      return NotFound("route", name);
  }
  return http::JsonError(500, "internal", "unknown catalog kind");
}

http::Response ApiHandler::ChangeCatalog(const http::Request& request, RouteId route,
                                         const std::string& name) const {
  store::CatalogKind kind = store::CatalogKind::kSource;
  enum class Op { kCreate, kUpdate, kDelete } op = Op::kCreate;
  switch (route) {
    case RouteId::kCreateSource: break;
    case RouteId::kUpdateSource: op = Op::kUpdate; break;
    case RouteId::kDeleteSource: op = Op::kDelete; break;
    case RouteId::kCreateDestination: kind = store::CatalogKind::kDestination; break;
    case RouteId::kUpdateDestination:
      kind = store::CatalogKind::kDestination;
      op = Op::kUpdate;
      break;
    case RouteId::kDeleteDestination:
      kind = store::CatalogKind::kDestination;
      op = Op::kDelete;
      break;
    case RouteId::kCreateRoute: kind = store::CatalogKind::kRoute; break;
    case RouteId::kDeleteRoute:
      kind = store::CatalogKind::kRoute;
      op = Op::kDelete;
      break;
    default: return http::JsonError(500, "internal", "not a catalog route");
  }
  if (!controls_.catalog) return NoControl("changing the catalog");
  const std::string actor = AuditActor(request.Header("Authorization").value_or(""));
  // Field errors read well on their own: "verify.scheme: must be one of …".
  auto fail = [](const Status& s) {
    if (s.code() == Status::Code::kInvalidArgument && !s.field().empty() &&
        s.message().rfind(s.field() + ":", 0) != 0) {
      return FromStatus(Status::InvalidArgument(s.field() + ": " + s.message(), s.field()));
    }
    return FromStatus(s);
  };
  if (op == Op::kDelete) {
    if (Status s = ParseEmptyBody(request.body); !s.ok()) return FromStatus(s);
    http::Response before = CatalogView(kind, name);  // what was deleted, as GET showed it
    if (Status s = controls_.catalog->Remove(kind, name, actor); !s.ok()) return fail(s);
    return before;
  }
  auto body = ParseCatalogBody(request.body);
  if (!body.ok()) return FromStatus(body.status());
  if (kind == store::CatalogKind::kDestination) {
    // "@/path" in "tls": read on this host now, and stored as the text (see InlineTlsFiles).
    if (Status s = catalog::InlineTlsFiles(*body, ""); !s.ok()) return fail(s);
  }
  if (op == Op::kUpdate) {
    if (Status s = controls_.catalog->Update(kind, name, *body, actor); !s.ok()) return fail(s);
    return CatalogView(kind, name);
  }
  auto created = controls_.catalog->Create(kind, *body, actor);
  if (!created.ok()) return fail(created.status());
  http::Response r = CatalogView(kind, *created);
  r.status = 201;
  const std::string collection = kind == store::CatalogKind::kSource        ? "sources"
                                 : kind == store::CatalogKind::kDestination ? "destinations"
                                                                            : "routes";
  r.headers.emplace_back("Location", "/api/v1/" + collection + "/" + http::PercentEncode(*created));
  return r;
}

http::Response ApiHandler::DestinationView(const model::Destination& d) const {
  auto states = destination_states_ ? destination_states_()
                                    : std::map<std::string, delivery::DestinationState>();
  auto it = states.find(d.name);
  json::object view = DestinationViewToJson(d, it == states.end() ? nullptr : &it->second);
  // The ordered queues held behind their head ("held behind evt_… since 14:02"); empty for an
  // unordered destination (no open ordered deliveries: an empty range of deliveries_ordered).
  auto held = store_.ListHeldQueues(d.name, kHeldQueuesShown);
  if (!held.ok()) return FromStatus(held.status());
  view["held"] = HeldQueuesToJson(*held);
  return Json(view);
}

Status ApiHandler::Audit(const http::Request& request, std::string action, std::string target,
                         int64_t count, std::string detail) const {
  store::AuditEntry e;
  e.at = clock_.Now();
  e.actor = AuditActor(request.Header("Authorization").value_or(""));
  e.action = std::move(action);
  e.target = std::move(target);
  e.count = count;
  e.detail = std::move(detail);
  return store_.AppendAudit(e);
}

http::Response ApiHandler::DestinationControl(const http::Request& request, RouteId route,
                                              const std::string& name) const {
  std::shared_ptr<const model::Catalog> catalog = registry_.Get();
  const model::Destination* d = catalog->FindDestination(name);
  if (!d) return NotFound("destination", name);
  std::string action;
  json::object detail;
  Status done;
  // Pausing a paused destination (which would replace its reason) and resuming an active one
  // (which would restart its concurrency) change nothing: 200 with the destination and a note.
  if (route == RouteId::kPauseDestination || route == RouteId::kResumeDestination) {
    const bool pause = route == RouteId::kPauseDestination;
    if (pause) {
      auto reason = ParsePauseBody(request.body, std::string(kDefaultPauseReason));
      if (!reason.ok()) return FromStatus(reason.status());
    } else if (Status s = ParseEmptyBody(request.body); !s.ok()) {
      return FromStatus(s);
    }
    auto states = destination_states_ ? destination_states_()
                                      : std::map<std::string, delivery::DestinationState>();
    auto it = states.find(name);
    const bool paused = d->paused || (it != states.end() && it->second.paused);
    if (paused == pause) {
      json::object view = DestinationViewToJson(*d, it == states.end() ? nullptr : &it->second);
      view["note"] = pause ? "already paused" : "not paused";
      return Json(view);
    }
  }
  if (route == RouteId::kPauseDestination) {
    auto reason = ParsePauseBody(request.body, std::string(kDefaultPauseReason));
    if (!reason.ok()) return FromStatus(reason.status());
    if (!controls_.pause) return NoControl("pause");
    action = "pause";
    detail["reason"] = *reason;
    done = controls_.pause(name, *reason);
  } else {
    if (Status s = ParseEmptyBody(request.body); !s.ok()) return FromStatus(s);
    const bool resume = route == RouteId::kResumeDestination;
    const auto& control = resume ? controls_.resume : controls_.reset_breaker;
    if (!control) return NoControl(resume ? "resume" : "reset-breaker");
    action = resume ? "resume" : "reset_breaker";
    done = control(name);
    // A job holding back chains for this destination looks again now.
    if (done.ok() && controls_.replay_job_queued) controls_.replay_job_queued();
  }
  if (!done.ok()) return FromStatus(done);
  if (Status s = Audit(request, action, name, 1, detail.empty() ? "" : http::SerializeJson(detail));
      !s.ok()) {
    return FromStatus(s);
  }
  return DestinationView(*d);
}

http::Response ApiHandler::ReplayEvent(const http::Request& request, const std::string& id) const {
  auto only = ParseReplayBody(request.body);
  if (!only.ok()) return FromStatus(only.status());
  auto event = store_.GetEvent(id);
  if (!event.ok()) return FromStatus(event.status());
  if (!event->has_value()) {
    return http::JsonError(
        404, "not_found",
        "no event \"" + id + "\" (it never existed, or was purged past its replay window)");
  }
  auto deliveries = store_.GetDeliveries(id);
  if (!deliveries.ok()) return FromStatus(deliveries.status());
  std::vector<std::string> routed;  // the event's destinations, in delivery order, once each
  for (const store::Delivery& d : *deliveries) {
    if (std::find(routed.begin(), routed.end(), d.destination) == routed.end()) {
      routed.push_back(d.destination);
    }
  }
  std::vector<std::string> targets = routed;
  if (only->has_value()) {
    if (std::find(routed.begin(), routed.end(), **only) == routed.end()) {
      return FromStatus(Status::InvalidArgument(
          "destination: event " + id + " was not routed to \"" + **only + "\"", "destination"));
    }
    targets = {**only};
  }
  if (targets.empty()) {
    return FromStatus(
        Status::FailedPrecondition("event " + id + " has no destinations to replay to"));
  }
  // Check every target before creating anything, so a refused replay changes nothing.
  std::shared_ptr<const model::Catalog> catalog = registry_.Get();
  const TimePoint now = clock_.Now();
  std::vector<const model::Destination*> dests;
  for (const std::string& name : targets) {
    const model::Destination* d = catalog->FindDestination(name);
    if (!d) {
      return FromStatus(Status::FailedPrecondition("destination \"" + name +
                                                   "\" is no longer configured; event " + id +
                                                   " cannot be replayed to it"));
    }
    if (PastReplayWindow((*event)->received_at, d->policy.replay_window, now)) {
      return FromStatus(Status::FailedPrecondition(
          "event " + id + " is past its " + ReplayWindowName(d->policy.replay_window) +
          " replay window for destination \"" + name + "\" and cannot be replayed"));
    }
    dests.push_back(d);
  }
  std::vector<store::Delivery> created;
  json::array names;
  for (const model::Destination* d : dests) {
    auto r = store_.CreateReplay(id, d->name, d->policy.max_attempts, now);
    if (!r.ok()) return FromStatus(r.status());
    created.push_back(std::move(*r));
    names.push_back(json::string(d->name));
  }
  if (controls_.wake) controls_.wake();
  if (Status s = Audit(request, "replay", id, static_cast<int64_t>(created.size()),
                       http::SerializeJson(json::object{{"destinations", std::move(names)}}));
      !s.ok()) {
    return FromStatus(s);
  }
  http::Response r = Json(ReplayResultToJson(id, created));
  r.status = 202;
  return r;
}

http::Response ApiHandler::ListAudit(const http::Request& request) const {
  auto q = ParsePageQuery(request);
  if (!q.ok()) return FromStatus(q.status());
  auto page = store_.ListAudit(q->cursor, q->limit);
  if (!page.ok()) return FromStatus(page.status());
  return Json(AuditPageToJson(*page));
}

ingest::RejectionCounts ApiHandler::RejectionCountsOf(const std::string& source) const {
  return controls_.rejection_counts ? controls_.rejection_counts(source)
                                    : ingest::RejectionCounts{};
}

http::Response ApiHandler::SourceView(const model::Source& s) const {
  json::object o = SourceToJson(s);
  o["rejections"] = RejectionCountsToJson(RejectionCountsOf(s.name));
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

http::Response ApiHandler::Simulate(const http::Request& request,
                                    const model::Catalog& catalog) const {
  // The parsers' messages leave the parameter's name out ("must be between 1 and …"): it is put
  // in front here, as the CLI puts its flag.
  auto invalid = [](const Status& st) {
    return http::JsonError(400, Status::CodeName(st.code()), st.field() + ": " + st.message(),
                           st.field());
  };
  auto query = ParseSimulateQuery(request);
  if (!query.ok()) return FromStatus(query.status());
  auto scenario = sim::ParseHerdScenario(query->input, ApiHerdLimits());
  if (!scenario.ok()) return invalid(scenario.status());
  std::vector<sim::HerdStrategy> strategies;
  if (query->destination) {
    const model::Destination* d = catalog.FindDestination(*query->destination);
    if (!d) return NotFound("destination", *query->destination);
    strategies.push_back({sim::HerdStrategyName(d->policy), d->policy});
  }
  // With a destination, the policies given are compared with it; alone, it is not compared with
  // the default set.
  if (!query->destination || !query->input.policies.empty()) {
    auto more = sim::ParseHerdStrategies(query->input);
    if (!more.ok()) return invalid(more.status());
    strategies.insert(strategies.end(), more->begin(), more->end());
  }
  if (Status st = sim::CheckHerdLimits(*scenario, strategies, ApiHerdLimits()); !st.ok()) {
    return invalid(st);
  }
  // A small run (the dashboard's, the default comparison of 500 events: tens of milliseconds)
  // goes ahead; a large one waits for no one and takes no second worker.
  const bool large = sim::HerdRequestBound(*scenario, strategies) > kSmallSimulation;
  bool idle = false;
  if (large && !simulating_.compare_exchange_strong(idle, true)) {
    http::Response r =
        http::JsonError(429, "too_many_requests",
                        "another large simulation is running (one at a time); retry in a moment");
    r.headers.emplace_back("Retry-After", "1");
    return r;
  }
  // Destroyed after `results` (declared after it): the simulation's memory, up to a few hundred
  // MiB for the largest runs, is free by then, and given back rather than kept resident.
  struct Done {
    std::atomic<bool>* flag;
    ~Done() {
      if (!flag) return;
      ReleaseFreeMemory();
      flag->store(false);
    }
  } done{large ? &simulating_ : nullptr};
  std::vector<sim::HerdResult> results;
  for (const sim::HerdStrategy& s : strategies) results.push_back(sim::SimulateHerd(*scenario, s));
  return Json(sim::HerdToJson(*scenario, strategies, results));
}

http::Response ApiHandler::CreateBulkReplay(const http::Request& request) const {
  auto body = ParseBulkReplayBody(request.body);
  if (!body.ok()) return FromStatus(body.status());
  auto filter = replay::ParseReplayFilter(body->filter_json);
  if (!filter.ok()) return FromStatus(filter.status());
  // As in the event list: an empty range is a mistake, not a job that replays nothing.
  if (filter->since && filter->until && *filter->until < *filter->since) {
    return FromStatus(Status::InvalidArgument("until: must not be before since", "until"));
  }
  std::shared_ptr<const model::Catalog> catalog = registry_.Get();
  double rate = body->rate.value_or(kDefaultBulkReplayRate);
  // An unknown source is a typo, as an unknown destination is: not an empty job.
  if (filter->source && !catalog->FindSource(*filter->source)) {
    return FromStatus(
        Status::InvalidArgument("source: no source \"" + *filter->source + "\"", "source"));
  }
  if (filter->destination) {
    const model::Destination* d = catalog->FindDestination(*filter->destination);
    if (!d) {
      return FromStatus(Status::InvalidArgument(
          "destination: no destination \"" + *filter->destination + "\"", "destination"));
    }
    if (!body->rate && d->rate_limit) rate = std::min(*d->rate_limit, replay::kMaxReplayRate);
  }
  store::ReplayJob job;
  job.created_at = clock_.Now();
  job.id = NewUlid(clock_, SystemRandom::Instance());
  job.filter = replay::ReplayFilterToJson(*filter);
  job.rate = rate;
  // The total now, so the audit entry and the first GET show it; the runner keeps it.
  auto total = replay::CountReplayable(store_, replay::AsOfJob(*filter, job.created_at));
  if (!total.ok()) return FromStatus(total.status());
  job.total = *total;
  if (Status s = store_.CreateReplayJob(job); !s.ok()) return FromStatus(s);
  if (controls_.replay_job_queued) controls_.replay_job_queued();
  json::object detail{{"filter", json::parse(job.filter)}, {"rate", rate}};
  if (Status s = Audit(request, "bulk_replay", job.id, job.total, http::SerializeJson(detail));
      !s.ok()) {
    return FromStatus(s);
  }
  auto stored = store_.GetReplayJob(job.id);
  if (!stored.ok()) return FromStatus(stored.status());
  http::Response r = Json(ReplayJobToJson(stored->value_or(job)));
  r.status = 202;
  return r;
}

http::Response ApiHandler::CancelBulkReplay(const http::Request& request,
                                            const std::string& id) const {
  auto job = store_.CancelReplayJob(id, clock_.Now());
  if (!job.ok()) return FromStatus(job.status());
  if (!job->has_value()) return NotFound("replay", id);
  // Wakes the runner's waits, so a job paced at 1/h stops now rather than at its next slot.
  if (controls_.replay_job_queued) controls_.replay_job_queued();
  if (Status s =
          Audit(request, "cancel_replay", id, (*job)->total - (*job)->done - (*job)->failed, "");
      !s.ok()) {
    return FromStatus(s);
  }
  return Json(ReplayJobToJson(**job));
}

}  // namespace hookrelay::api
