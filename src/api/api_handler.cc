#include "api/api_handler.h"

#include <boost/json.hpp>

#include "api/api_json.h"
#include "api/api_routes.h"
#include "api/openapi.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

constexpr uint64_t kBodyLimit = 64 * 1024;  // no route reads a body yet

http::Response Json(const json::object& o) {
  http::Response r;
  r.body = json::serialize(o);
  return r;
}

http::Response FromStatus(const Status& s) {
  switch (s.code()) {
    case Status::Code::kInvalidArgument:
      return http::JsonError(400, Status::CodeName(s.code()), s.message(), s.field());
    case Status::Code::kNotFound:
      return http::JsonError(404, Status::CodeName(s.code()), s.message());
    case Status::Code::kUnavailable:
    case Status::Code::kResourceExhausted:
      return http::JsonError(503, "unavailable", "store: " + s.message());
    default: return http::JsonError(500, "internal", s.message());
  }
}

http::Response NotFound(std::string_view what, const std::string& name) {
  return http::JsonError(404, "not_found", "no " + std::string(what) + " \"" + name + "\"");
}

}  // namespace

ApiHandler::ApiHandler(Authorizer authorize, store::Store& store, model::Registry& registry,
                       DestinationStates destination_states, int workers)
    : authorize_(std::move(authorize)),
      store_(store),
      registry_(registry),
      destination_states_(std::move(destination_states)) {
  for (int i = 0; i < std::max(1, workers); ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ApiHandler::~ApiHandler() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ApiHandler::WorkerLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
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
    http::Response r =
        http::JsonError(401, "unauthenticated",
                        auth ? "wrong bearer token" : "send Authorization: Bearer <admin token>");
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
  d.body_limit = kBodyLimit;
  return d;
}

void ApiHandler::Handle(http::Request request, http::Responder respond) {
  {
    std::lock_guard lock(mu_);
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
    case RouteId::kListEvents: {
      auto q = ParseEventListQuery(request);
      if (!q.ok()) return FromStatus(q.status());
      auto page = store_.ListEvents(q->filter, q->cursor, q->limit);
      if (!page.ok()) return FromStatus(page.status());
      return Json(EventPageToJson(*page));
    }
    case RouteId::kGetEvent: {
      auto detail = LoadEventDetail(store_, m.params[0]);
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
      auto states = destination_states_ ? destination_states_()
                                        : std::map<std::string, delivery::DestinationState>();
      auto it = states.find(d->name);
      return Json(DestinationViewToJson(*d, it == states.end() ? nullptr : &it->second));
    }
    case RouteId::kListSources: return Json(SourceListToJson(*catalog));
    case RouteId::kGetSource: {
      const model::Source* s = catalog->FindSource(m.params[0]);
      if (!s) return NotFound("source", m.params[0]);
      return Json(SourceToJson(*s));
    }
    case RouteId::kListRoutes: return Json(RouteListToJson(*catalog));
    case RouteId::kOpenApi: {
      http::Response r;
      r.body = std::string(OpenApiDocument());
      return r;
    }
  }
  return http::JsonError(500, "internal", "unhandled route");
}

}  // namespace hookrelay::api
