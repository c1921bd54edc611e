#pragma once

#include <boost/json/value.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"
#include "model/destination.h"
#include "model/source.h"
#include "routing/route_rule.h"

namespace hookrelay::model {

// A route sends the events of `source` that pass its rule (types and filter: docs/routing.md) to
// `destination` (fan-out: one event, many deliveries). A route without a rule takes every event.
struct Route {
  std::string id;  // "source:destination" unless given
  std::string source;
  std::string destination;
  routing::RouteRule rule;  // empty: every event
  // Replaces the destination's transform for the events this route sends (nullopt: the
  // destination's, if any).
  std::optional<TransformSpec> transform;
  std::string origin;  // "config" or "api"; set by the catalog, not parsed
};
// {"source", "destination", "id"?, "types"?, "filter"?}. Accepts any id of 1 to 128 printable
// characters, so routes stored before ValidateRouteId stay readable and deletable. Errors name
// the field, inside the filter too ("filter.body.amount.$gt").
Result<Route> ParseRoute(const boost::json::value& v);
// An id given for a new route: 1 to 128 characters, starting with a letter or digit, of letters,
// digits, '_', '-', '.' and ':' (the names' rule, plus the ':' of the default "source:dest").
// kInvalidArgument naming `field` otherwise.
Status ValidateRouteId(std::string_view id, std::string_view field = "id");
boost::json::object RouteToJson(const Route& r);

// An immutable, consistent set of sources, destinations and routes.
struct Catalog {
  std::map<std::string, Source> sources;
  std::map<std::string, Destination> destinations;
  std::vector<Route> routes;

  const Source* FindSource(const std::string& name) const;
  const Destination* FindDestination(const std::string& name) const;
  // The destinations of the routes from `source`, in route order (whatever their rules).
  std::vector<const Destination*> DestinationsOf(const std::string& source) const;
  // The routes from `source` with their destinations, in route order.
  struct RouteTo {
    const Route* route;
    const Destination* destination;
  };
  std::vector<RouteTo> RoutesOf(const std::string& source) const;
  // The transform a delivery of an event of `source` to `destination` runs: its route's, else
  // the destination's; nullptr for none.
  const TransformSpec* TransformFor(const std::string& source,
                                    const Destination& destination) const;

  // Every route names an existing source and destination; ids and pairs are unique.
  // Errors name the field ("routes[2].destination").
  Status Validate() const;
};

// The live catalog, swapped whole on change so readers never lock for long or see a half-done
// update. Thread-safe.
class Registry {
 public:
  explicit Registry(Catalog catalog = {});
  std::shared_ptr<const Catalog> Get() const;
  // Validates and installs `catalog`; the old one stays in force on error.
  Status Replace(Catalog catalog);

 private:
  mutable Mutex mu_;
  std::shared_ptr<const Catalog> current_ GUARDED_BY(mu_);
};

}  // namespace hookrelay::model
