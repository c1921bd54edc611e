#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "model/registry.h"
#include "store/store.h"

// Pure logic of the persisted catalog: building the live catalog from stored objects, merging
// the config file's objects into the stored ones at start, and JSON merge patches. No I/O.
namespace hookrelay::catalog {

// "source \"github\"", "destination \"billing\"", "route \"github:billing\"".
std::string Describe(store::CatalogKind kind, const std::string& name);

// Parses `spec` as an object of `kind` (ParseSource, ParseDestination, ParseRoute) and returns its
// name (a route's id). Errors name the field.
Result<std::string> ObjectName(store::CatalogKind kind, const boost::json::value& spec);

// The live catalog of `objects` (each spec parsed, `origin` carried over, routes in order),
// validated. An error names the object: "stored destination \"billing\": url: must be http(s)".
Result<model::Catalog> BuildCatalog(const std::vector<store::CatalogObject>& objects);

// What a start does to the stored catalog given the config file's objects.
struct SeedPlan {
  store::CatalogChange change;                // to write (no audit entry; the caller adds it)
  std::vector<store::CatalogObject> objects;  // the catalog afterwards, in order
  std::vector<std::string> added, updated, removed;  // Describe() of each, for the audit entry
  std::vector<std::string> notes;                    // lines worth logging
};

// The config file wins for what it defines: its objects are written with origin "config"
// (replacing a same-named object created through the API, with a note), and stored "config"
// objects it no longer defines are removed. Objects created through the API are kept, except
// routes whose source or destination no longer exists (removed, with a note). `config` nullopt
// means "no config file given": nothing stored is touched.
SeedPlan PlanSeed(const std::vector<store::CatalogObject>& stored,
                  const std::optional<std::vector<store::CatalogObject>>& config);

// RFC 7396 JSON merge patch: `patch`'s members replace `target`'s, null removes a member,
// objects merge recursively; a non-object patch replaces the whole target.
boost::json::value MergePatch(const boost::json::value& target, const boost::json::value& patch);

}  // namespace hookrelay::catalog
