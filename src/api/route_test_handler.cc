// POST /api/v1/routes/test: a route's rule tried on stored events (the dry run).

#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/handler_util.h"
#include "api/request_params.h"
#include "api/routes_json.h"

namespace hookrelay::api {

http::Response ApiHandler::TestRoute(const http::Request& request,
                                     const model::Catalog& catalog) const {
  auto req = ParseRouteTestBody(request.body);
  if (!req.ok()) return FromStatus(req.status());
  std::vector<store::Event> events;
  std::string source;
  if (req->event) {
    auto event = store_.GetEvent(*req->event);
    if (!event.ok()) return FromStatus(event.status());
    if (!event->has_value()) return NotFound("event", *req->event);
    if (req->source && *req->source != (*event)->source) {
      return FromStatus(Status::InvalidArgument("source: event " + *req->event +
                                                    " was received by \"" + (*event)->source +
                                                    "\", not \"" + *req->source + "\"",
                                                "source"));
    }
    source = (*event)->source;
    events.push_back(std::move(**event));
  } else {
    source = *req->source;
    if (!catalog.FindSource(source)) return NotFound("source", source);
    store::EventFilter filter;
    filter.source = source;
    auto page = store_.ListEvents(filter, "", req->last);
    if (!page.ok()) return FromStatus(page.status());
    std::vector<std::string> ids;
    for (const store::Event& e : page->items) ids.push_back(e.id);
    auto full = store_.GetEvents(ids);  // lists leave the bodies out
    if (!full.ok()) return FromStatus(full.status());
    for (std::optional<store::Event>& e : *full) {
      if (e) events.push_back(std::move(*e));  // purged meanwhile: left out
    }
  }
  return Json(RouteTestToJson(source, req->rule, events));
}

}  // namespace hookrelay::api
