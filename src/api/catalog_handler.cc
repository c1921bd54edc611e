#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/audit_json.h"
#include "api/handler_util.h"
#include "api/request_params.h"
#include "catalog/tls_files.h"

namespace hookrelay::api {

namespace json = boost::json;

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
    case RouteId::kUpdateRoute:
      kind = store::CatalogKind::kRoute;
      op = Op::kUpdate;
      break;
    case RouteId::kDeleteRoute:
      kind = store::CatalogKind::kRoute;
      op = Op::kDelete;
      break;
    default: return http::JsonError(500, "internal", "not a catalog route");
  }
  if (!controls_.catalog) return NoControl("changing the catalog");
  const std::string actor = Actor(request);
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

}  // namespace hookrelay::api
