#include "model/registry.h"

#include <boost/json.hpp>
#include <cctype>
#include <set>

#include "model/json_fields.h"

namespace hookrelay::model {

namespace json = boost::json;

Result<Route> ParseRoute(const json::value& v) {
  if (!v.is_object()) return Status::InvalidArgument("a route must be a JSON object");
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(
      CheckKnownFields(o, {"id", "source", "destination", "types", "filter", "transform"}));
  Route r;
  for (auto [field, target] :
       {std::pair{"source", &r.source}, std::pair{"destination", &r.destination}}) {
    const json::value* f = o.if_contains(field);
    if (!f) return Status::InvalidArgument("is required", field);
    auto s = GetString(*f, field);
    if (!s.ok()) return s.status();
    HR_RETURN_IF_ERROR(ValidateName(*s, field));
    *target = *s;
  }
  if (const json::value* id = o.if_contains("id")) {
    auto s = GetString(*id, "id");
    if (!s.ok()) return s.status();
    if (s->empty() || s->size() > 128) {
      return Status::InvalidArgument("must be 1 to 128 characters", "id");
    }
    for (unsigned char c : *s) {
      if (c < 0x20 || c == 0x7f)
        return Status::InvalidArgument("must not contain control characters", "id");
    }
    r.id = *s;
  } else {
    r.id = r.source + ":" + r.destination;  // ":" is in no name, and safe to type unquoted
  }
  HR_ASSIGN_OR_RETURN(r.rule, routing::ParseRouteRule(o, ""));
  if (const json::value* t = o.if_contains("transform"); t && !t->is_null()) {
    HR_ASSIGN_OR_RETURN(r.transform, ParseTransformSpec(*t, "transform"));
  }
  return r;
}

Status ValidateRouteId(std::string_view id, std::string_view field) {
  if (id.empty() || id.size() > 128) {
    return Status::InvalidArgument("must be 1 to 128 characters", std::string(field));
  }
  if (!std::isalnum(static_cast<unsigned char>(id[0]))) {
    return Status::InvalidArgument("must start with a letter or digit", std::string(field));
  }
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' &&
        c != ':') {
      return Status::InvalidArgument(
          "may contain only letters, digits, '_', '-', '.' and ':' (found '" + std::string(1, c) +
              "')",
          std::string(field));
    }
  }
  return Status::Ok();
}

json::object RouteToJson(const Route& r) {
  json::object o{{"id", r.id}, {"source", r.source}, {"destination", r.destination}};
  json::array types;
  for (const std::string& t : r.rule.types.patterns()) types.emplace_back(t);
  o["types"] = std::move(types);
  o["filter"] = r.rule.filter ? r.rule.filter->document() : json::value(nullptr);
  o["transform"] =
      r.transform ? json::value(TransformSpecToJson(*r.transform)) : json::value(nullptr);
  if (!r.origin.empty()) o["origin"] = r.origin;
  return o;
}

const Source* Catalog::FindSource(const std::string& name) const {
  auto it = sources.find(name);
  return it == sources.end() ? nullptr : &it->second;
}

const Destination* Catalog::FindDestination(const std::string& name) const {
  auto it = destinations.find(name);
  return it == destinations.end() ? nullptr : &it->second;
}

std::vector<const Destination*> Catalog::DestinationsOf(const std::string& source) const {
  std::vector<const Destination*> out;
  for (const Route& r : routes) {
    if (r.source != source) continue;
    if (const Destination* d = FindDestination(r.destination)) out.push_back(d);
  }
  return out;
}

std::vector<Catalog::RouteTo> Catalog::RoutesOf(const std::string& source) const {
  std::vector<RouteTo> out;
  for (const Route& r : routes) {
    if (r.source != source) continue;
    if (const Destination* d = FindDestination(r.destination)) out.push_back({&r, d});
  }
  return out;
}

const TransformSpec* Catalog::TransformFor(const std::string& source,
                                           const Destination& destination) const {
  for (const Route& r : routes) {
    if (r.source == source && r.destination == destination.name && r.transform) {
      return &*r.transform;
    }
  }
  return destination.transform ? &*destination.transform : nullptr;
}

Status Catalog::Validate() const {
  std::set<std::string> ids;
  std::set<std::pair<std::string, std::string>> pairs;
  for (size_t i = 0; i < routes.size(); ++i) {
    const Route& r = routes[i];
    const std::string at = "routes[" + std::to_string(i) + "]";
    if (!FindSource(r.source)) {
      return Status::InvalidArgument("unknown source \"" + r.source + "\"", at + ".source");
    }
    if (!FindDestination(r.destination)) {
      return Status::InvalidArgument("unknown destination \"" + r.destination + "\"",
                                     at + ".destination");
    }
    if (!ids.insert(r.id).second) {
      return Status::InvalidArgument("duplicate route id \"" + r.id + "\"", at + ".id");
    }
    if (!pairs.insert({r.source, r.destination}).second) {
      return Status::InvalidArgument(
          "duplicate route from \"" + r.source + "\" to \"" + r.destination + "\"", at);
    }
  }
  return Status::Ok();
}

Registry::Registry(Catalog catalog)
    : current_(std::make_shared<const Catalog>(std::move(catalog))) {}

std::shared_ptr<const Catalog> Registry::Get() const {
  MutexLock lock(mu_);
  return current_;
}

Status Registry::Replace(Catalog catalog) {
  HR_RETURN_IF_ERROR(catalog.Validate());
  auto next = std::make_shared<const Catalog>(std::move(catalog));
  MutexLock lock(mu_);
  current_ = std::move(next);
  return Status::Ok();
}

}  // namespace hookrelay::model
