#include "api/routes_json.h"

#include <boost/json.hpp>

#include "api/json_util.h"

namespace hookrelay::api {

namespace json = boost::json;

json::object RouteListToJson(const model::Catalog& catalog) {
  json::array items;
  for (const model::Route& r : catalog.routes) items.push_back(RouteToJson(r));
  return List(std::move(items));
}

}  // namespace hookrelay::api
