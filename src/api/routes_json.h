#pragma once

#include <boost/json/object.hpp>

#include "model/registry.h"

// The JSON of routes (GET /api/v1/routes).

namespace hookrelay::api {

// {"items": [RouteToJson…], "next_cursor": null}, in catalog order.
boost::json::object RouteListToJson(const model::Catalog& catalog);

}  // namespace hookrelay::api
