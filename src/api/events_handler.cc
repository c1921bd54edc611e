#include "api/events_handler.h"

#include <algorithm>
#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/events_json.h"
#include "api/handler_util.h"
#include "api/replays_json.h"
#include "api/request_params.h"
#include "http/json_text.h"
#include "policy/replay_window.h"

namespace hookrelay::api {

namespace json = boost::json;

Result<PauseCauses> LoadPauseCauses(store::Store& store, const model::Catalog& catalog) {
  auto controls = store.ListDestinationControls();
  if (!controls.ok()) return controls.status();
  PauseCauses causes;
  for (const auto& [name, d] : catalog.destinations) {
    auto it = controls->find(name);
    causes.emplace(name, PauseCauseOf(d.paused, it == controls->end() ? store::DestinationControl{}
                                                                      : it->second));
  }
  return causes;
}

bool ReachesEvent(const access::Scope& scope, const std::string& source,
                  const std::vector<std::string>& destinations) {
  return scope.ReachesSource(source) ||
         std::any_of(destinations.begin(), destinations.end(),
                     [&scope](const std::string& d) { return scope.ReachesDestination(d); });
}

Result<std::optional<json::object>> LoadEventDetail(store::Store& store, const std::string& id,
                                                    bool with_body, const model::Catalog* catalog,
                                                    const access::Scope* scope) {
  // One read transaction: a delivery's status and attempt count agree with its attempts.
  auto detail = store.GetEventDetail(id);
  if (!detail.ok()) return detail.status();
  if (!detail->has_value()) return std::optional<json::object>();
  std::vector<DeliveryDetail>& details = (*detail)->deliveries;
  if (scope) {
    std::vector<std::string> destinations;
    for (const DeliveryDetail& x : details) destinations.push_back(x.delivery.destination);
    if (!ReachesEvent(*scope, (*detail)->event.source, destinations)) {
      return std::optional<json::object>();
    }
    std::erase_if(details, [scope](const DeliveryDetail& x) {
      return !scope->ReachesDestination(x.delivery.destination);
    });
    std::erase_if((*detail)->event.route_misses, [scope](const store::RouteMiss& m) {
      return !scope->ReachesDestination(m.destination);
    });
  }
  std::optional<PauseCauses> causes;
  const bool any_paused = std::any_of(details.begin(), details.end(), [](const DeliveryDetail& x) {
    return x.delivery.status == store::DeliveryStatus::kPaused;
  });
  if (catalog && any_paused) {
    auto loaded = LoadPauseCauses(store, *catalog);
    if (!loaded.ok()) return loaded.status();
    causes = std::move(*loaded);
  }
  RouteIds route_ids;
  if (catalog) {
    for (const model::Route& r : catalog->routes) {
      if (r.source == (*detail)->event.source) route_ids.emplace(r.destination, r.id);
    }
  }
  return std::optional<json::object>(EventDetailToJson((*detail)->event, details, with_body,
                                                       causes ? &*causes : nullptr, route_ids));
}

http::Response ApiHandler::ListEvents(const http::Request& request, const model::Catalog& catalog,
                                      const access::Scope* scope) const {
  auto q = ParseEventListQuery(request);
  if (!q.ok()) return FromStatus(q.status());
  if (scope) {
    q->filter.within.emplace();
    q->filter.within->sources.assign(scope->sources.begin(), scope->sources.end());
    q->filter.within->destinations.assign(scope->destinations.begin(), scope->destinations.end());
  }
  auto page = store_.ListEvents(q->filter, q->cursor, q->limit);
  if (!page.ok()) return FromStatus(page.status());
  // Why paused deliveries are paused (paused_by), read only when the page has any.
  std::optional<PauseCauses> causes;
  for (const store::Event& e : page->items) {
    for (const store::CurrentDelivery& c : e.current) {
      if (c.status == store::DeliveryStatus::kPaused && !causes) {
        auto loaded = LoadPauseCauses(store_, catalog);
        if (!loaded.ok()) return FromStatus(loaded.status());
        causes = std::move(*loaded);
      }
    }
  }
  return Json(EventPageToJson(*page, causes ? &*causes : nullptr));
}

http::Response ApiHandler::GetEvent(const http::Request& request, const std::string& id,
                                    const model::Catalog& catalog,
                                    const access::Scope* scope) const {
  auto with_body = ParseEventDetailQuery(request);
  if (!with_body.ok()) return FromStatus(with_body.status());
  auto detail = LoadEventDetail(store_, id, *with_body, &catalog, scope);
  if (!detail.ok()) return FromStatus(detail.status());
  if (!detail->has_value()) return NotFound("event", id);
  return Json(**detail);
}

http::Response ApiHandler::ReplayEvent(const http::Request& request, const std::string& id,
                                       const model::Catalog& visible,
                                       const access::Scope* scope) const {
  auto only = ParseReplayBody(request.body);
  if (!only.ok()) return FromStatus(only.status());
  auto not_found = [&id] {
    return http::JsonError(
        404, "not_found",
        "no event \"" + id + "\" (it never existed, or was purged past its replay window)");
  };
  auto event = store_.GetEvent(id);
  if (!event.ok()) return FromStatus(event.status());
  if (!event->has_value()) return not_found();
  auto deliveries = store_.GetDeliveries(id);
  if (!deliveries.ok()) return FromStatus(deliveries.status());
  std::vector<std::string> routed;  // the event's destinations, in delivery order, once each
  for (const store::Delivery& d : *deliveries) {
    if (std::find(routed.begin(), routed.end(), d.destination) == routed.end()) {
      routed.push_back(d.destination);
    }
  }
  // One a scoped token does not reach reads as one that does not exist.
  if (scope && !ReachesEvent(*scope, (*event)->source, routed)) return not_found();
  // A scoped token replays to its own destinations alone.
  if (scope) {
    std::erase_if(routed, [scope](const std::string& d) { return !scope->ReachesDestination(d); });
  }
  const model::Catalog* catalog = &visible;
  std::vector<std::string> targets = routed;
  if (only->has_value()) {
    // Any configured destination, routed or not: an event no route took (or not this one) is
    // sent where the operator says once the routes are fixed.
    if (std::find(routed.begin(), routed.end(), **only) == routed.end() &&
        !catalog->FindDestination(**only)) {
      return FromStatus(
          Status::InvalidArgument("no destination \"" + **only + "\"", "destination"));
    }
    targets = {**only};
  }
  if (targets.empty()) {
    return FromStatus(Status::FailedPrecondition("event " + id +
                                                 " has no destinations to replay to (no route took "
                                                 "it): name one with {\"destination\": …}"));
  }
  // Check every target before creating anything, so a refused replay changes nothing.
  const TimePoint now = clock_.Now();
  std::vector<const model::Destination*> dests;
  for (const std::string& name : targets) {
    const model::Destination* d = catalog->FindDestination(name);
    if (!d) {
      return FromStatus(Status::FailedPrecondition("destination \"" + name +
                                                   "\" is no longer configured; event " + id +
                                                   " cannot be replayed to it"));
    }
    if (policy::PastReplayWindow((*event)->received_at, d->policy.replay_window, now)) {
      return FromStatus(Status::FailedPrecondition(
          "event " + id + " is past its " + policy::ReplayWindowName(d->policy.replay_window) +
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

}  // namespace hookrelay::api
