#include "access/scope.h"

#include <boost/json.hpp>

namespace hookrelay::access {

namespace json = boost::json;

namespace {

Status ParseNames(const json::object& o, std::string_view key, const std::string& field,
                  std::set<std::string>& out) {
  const json::value* v = o.if_contains(key);
  if (!v || v->is_null()) return Status::Ok();
  const std::string at = field + "." + std::string(key);
  if (!v->is_array()) return Status::InvalidArgument(at + ": expects a list of names", at);
  const json::array& a = v->get_array();
  if (a.size() > kMaxScopeNames) {
    return Status::InvalidArgument(at + ": at most " + std::to_string(kMaxScopeNames) + " names",
                                   at);
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string item = at + "[" + std::to_string(i) + "]";
    if (!a[i].is_string() || a[i].get_string().empty() || a[i].get_string().size() > 128) {
      return Status::InvalidArgument(item + ": expects a name (1 to 128 characters)", item);
    }
    out.emplace(a[i].get_string());
  }
  return Status::Ok();
}

}  // namespace

Result<Scope> ParseScope(const json::value& v, std::string_view field) {
  const std::string f(field);
  if (!v.is_object()) {
    return Status::InvalidArgument(
        f + ": expects an object {\"sources\": [names], \"destinations\": [names]}", f);
  }
  const json::object& o = v.get_object();
  for (const auto& [k, unused] : o) {
    if (k != "sources" && k != "destinations") {
      const std::string at = f + "." + std::string(k);
      return Status::InvalidArgument(
          at + ": unknown field \"" + std::string(k) + "\" (known fields: sources, destinations)",
          at);
    }
  }
  Scope s;
  if (Status st = ParseNames(o, "sources", f, s.sources); !st.ok()) return st;
  if (Status st = ParseNames(o, "destinations", f, s.destinations); !st.ok()) return st;
  if (s.sources.empty() && s.destinations.empty()) {
    return Status::InvalidArgument(
        f + ": names no source and no destination (leave the scope out for a token that "
            "reaches everything)",
        f);
  }
  return s;
}

json::object ScopeToJson(const Scope& scope) {
  json::array sources(scope.sources.begin(), scope.sources.end());
  json::array destinations(scope.destinations.begin(), scope.destinations.end());
  return {{"sources", std::move(sources)}, {"destinations", std::move(destinations)}};
}

std::string ScopeToText(const Scope& scope) { return json::serialize(ScopeToJson(scope)); }

Result<std::optional<Scope>> ScopeFromText(std::string_view text) {
  if (text.empty()) return std::optional<Scope>();
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return Status::InvalidArgument("scope: not JSON (" + ec.message() + ")", "scope");
  HR_ASSIGN_OR_RETURN(Scope s, ParseScope(v, "scope"));
  return std::optional<Scope>(std::move(s));
}

model::Catalog VisibleCatalog(const model::Catalog& catalog, const Scope& scope) {
  model::Catalog out;
  for (const auto& [name, s] : catalog.sources) {
    if (scope.ReachesSource(name)) out.sources.emplace(name, s);
  }
  for (const auto& [name, d] : catalog.destinations) {
    if (scope.ReachesDestination(name)) out.destinations.emplace(name, d);
  }
  for (const model::Route& r : catalog.routes) {
    if (scope.ReachesRoute(r)) out.routes.push_back(r);
  }
  return out;
}

}  // namespace hookrelay::access
