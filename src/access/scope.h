#pragma once

#include <boost/json/fwd.hpp>
#include <set>
#include <string>
#include <string_view>

#include "common/result.h"
#include "model/registry.h"

// A token's scope (docs/access.md): the sources and destinations a scoped token sees and acts
// on. Pure: no I/O.

namespace hookrelay::access {

struct Scope {
  std::set<std::string> sources;
  std::set<std::string> destinations;

  bool ReachesSource(const std::string& name) const { return sources.contains(name); }
  bool ReachesDestination(const std::string& name) const { return destinations.contains(name); }
  // A route is reached when both its ends are: otherwise it would show a name out of scope.
  bool ReachesRoute(const model::Route& r) const {
    return ReachesSource(r.source) && ReachesDestination(r.destination);
  }
  bool operator==(const Scope&) const = default;
};

// Limits on a scope as given: names per list, and a name's length.
inline constexpr size_t kMaxScopeNames = 100;

// {"sources": [names], "destinations": [names]}: either list may be left out (none of that
// kind), not both empty. Errors name the field under `field` ("scope.sources[2]: …").
Result<Scope> ParseScope(const boost::json::value& v, std::string_view field);
// The same object, lists sorted; the store keeps it as text (store::ApiToken::scope).
boost::json::object ScopeToJson(const Scope& scope);
std::string ScopeToText(const Scope& scope);
// A store row's scope text: empty means no scope (std::nullopt). Anything else that does not
// parse is an error (a token whose scope cannot be read must grant nothing).
Result<std::optional<Scope>> ScopeFromText(std::string_view text);

// The catalog as a scoped token sees it: only the sources, destinations and routes it reaches.
model::Catalog VisibleCatalog(const model::Catalog& catalog, const Scope& scope);

}  // namespace hookrelay::access
