#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/audit_store.h"

namespace hookrelay::store {

// The catalog (sources, destinations, routes) as written: the API's JSON of each object, secrets
// included, so the store can rebuild the live catalog at start. The config file's objects are
// written here at every start (origin "config"); objects created through the API have origin
// "api" and survive restarts.
enum class CatalogKind { kSource, kDestination, kRoute };
std::string_view CatalogKindName(CatalogKind k);  // "source", "destination", "route"

struct CatalogObject {
  CatalogKind kind = CatalogKind::kSource;
  std::string name;        // a source's or destination's name; a route's id
  std::string spec;        // JSON text of the object, secrets included: never shown as it is
  std::string origin;      // "config" or "api"
  TimePoint created_at{};  // set by the store when the object is first written
  TimePoint updated_at{};  // set by the store on every write
  bool operator==(const CatalogObject&) const = default;
};

// One change to the catalog, applied in one transaction with its audit entry: `put` objects are
// inserted or replaced (keeping their created_at and their place in the order), `remove` ones are
// deleted (absent ones are ignored); a removed destination's stored breaker and pause are
// deleted with it (unless the change also puts it), so one made again starts afresh.
struct CatalogChange {
  std::vector<CatalogObject> put;
  std::vector<std::pair<CatalogKind, std::string>> remove;
  std::optional<AuditEntry> audit;  // appended in the same transaction when set
  // Destinations that must have no delivery left that is not final (scheduled, delivering,
  // paused), checked in the change's own transaction: a replay that adds one just before
  // cannot slip between the check and a delete. Otherwise FailedPrecondition ("destination "d"
  // has N deliveries that are not delivered or failed yet"), nothing written.
  std::vector<std::string> require_no_open_deliveries;
  // When set, the change is written only if the catalog's version (Store::CatalogVersion) is
  // still this one: a node that validated the change against an older catalog (another node
  // changed it meanwhile) gets kUnavailable ("the catalog was changed meanwhile"), nothing
  // written, and reloads before trying again.
  std::optional<int64_t> if_version;
};

// The catalog (sources, destinations, routes) and its version. A role of Store (store.h); the
// embedded store implements it in sqlite/catalog.cc.
class CatalogStore {
 public:
  virtual ~CatalogStore() = default;

  // The catalog: every object, in the order they were first written. ApplyCatalogChange writes
  // a change and its audit entry atomically (kInvalidArgument for an empty name or spec).
  virtual Result<std::vector<CatalogObject>> ListCatalog() = 0;
  virtual Status ApplyCatalogChange(const CatalogChange& change) = 0;
  // The catalog's version: 0 until the first ApplyCatalogChange, then raised by one by every
  // change, in the change's own transaction (so a version read before ListCatalog never names a
  // catalog newer than the list). Cheap (one row): nodes poll it to notice another node's change.
  virtual Result<int64_t> CatalogVersion() = 0;
};

}  // namespace hookrelay::store
