#include "api/scope_check.h"

#include <boost/json.hpp>

#include "api/handler_util.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

// A string field of a JSON object body; empty when the body or the field is not there (the
// handler then says what is wrong with it).
std::string BodyField(const std::string& body, std::string_view key) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) return {};
  const json::value* f = v.get_object().if_contains(key);
  return f && f->is_string() ? std::string(f->get_string()) : std::string();
}

http::Response OutsideScope(std::string_view what, const std::string& name) {
  return http::JsonError(
      403, "permission_denied",
      "this token's scope does not include " + std::string(what) + " \"" + name + "\"");
}

}  // namespace

std::optional<http::Response> RefuseOutOfScope(const ApiRoute& route, const std::string& param,
                                               const http::Request& request,
                                               const model::Catalog& catalog,
                                               const access::Scope& scope) {
  switch (route.id) {
    case RouteId::kGetDestination:
    case RouteId::kUpdateDestination:
    case RouteId::kDeleteDestination:
    case RouteId::kPauseDestination:
    case RouteId::kResumeDestination:
    case RouteId::kResetBreaker:
    case RouteId::kRotateDestinationSecret:
    case RouteId::kDestinationSchedule:
      if (!scope.ReachesDestination(param)) return NotFound("destination", param);
      return std::nullopt;
    case RouteId::kGetSource:
    case RouteId::kUpdateSource:
    case RouteId::kDeleteSource:
    case RouteId::kRotateSourceSecret:
    case RouteId::kListSourceRejections:
      if (!scope.ReachesSource(param)) return NotFound("source", param);
      return std::nullopt;
    case RouteId::kGetRoute:
    case RouteId::kUpdateRoute:
    case RouteId::kDeleteRoute:
      for (const model::Route& r : catalog.routes) {
        if (r.id == param && !scope.ReachesRoute(r)) return NotFound("route", param);
      }
      return std::nullopt;  // a route that does not exist: its handler says so
    case RouteId::kCreateSource: {
      const std::string name = BodyField(request.body, "name");
      if (!name.empty() && !scope.ReachesSource(name)) return OutsideScope("source", name);
      return std::nullopt;
    }
    case RouteId::kCreateDestination: {
      const std::string name = BodyField(request.body, "name");
      if (!name.empty() && !scope.ReachesDestination(name)) {
        return OutsideScope("destination", name);
      }
      return std::nullopt;
    }
    case RouteId::kCreateRoute: {
      const std::string source = BodyField(request.body, "source");
      const std::string destination = BodyField(request.body, "destination");
      if (!source.empty() && !scope.ReachesSource(source)) return OutsideScope("source", source);
      if (!destination.empty() && !scope.ReachesDestination(destination)) {
        return OutsideScope("destination", destination);
      }
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

}  // namespace hookrelay::api
