#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "model/registry.h"
#include "routing/route_rule.h"
#include "store/event_store.h"

// The JSON of routes (GET /api/v1/routes).

namespace hookrelay::api {

// {"items": [RouteToJson…], "next_cursor": null}, in catalog order.
boost::json::object RouteListToJson(const model::Catalog& catalog);

// The dry run's answer (POST /api/v1/routes/test): `rule` tried on `events` (with their bodies)
// as ingest tries it, with each event's stored type, headers and JSON body:
// {"source", "total", "matched", "events": [{"id", "received_at", "type", "matched",
// "reason" (null when matched)}]}, in the order given.
boost::json::object RouteTestToJson(const std::string& source, const routing::RouteRule& rule,
                                    const std::vector<store::Event>& events);

}  // namespace hookrelay::api
