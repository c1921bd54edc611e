#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/handler_util.h"
#include "api/routes_json.h"

namespace hookrelay::api {

namespace json = boost::json;

http::Response ApiHandler::ListRoutes(const model::Catalog& catalog) const {
  return Json(RouteListToJson(catalog));
}

}  // namespace hookrelay::api
