#pragma once

#include <boost/json/object.hpp>
#include <optional>
#include <string_view>

#include "common/result.h"
#include "routing/filter.h"
#include "routing/type_pattern.h"
#include "routing/verdict.h"

namespace hookrelay::routing {

// What decides whether a route takes an event: its types, then its content filter. A rule with
// neither takes every event. Immutable once built; safe to share between threads.
struct RouteRule {
  TypeSet types;                 // empty: any type, or none
  std::optional<Filter> filter;  // nullopt: no content condition

  // True when the event (its type, nullopt when it has none, and its headers and body) passes
  // the types and the filter. Does not allocate.
  bool Matches(std::optional<std::string_view> type, const MatchInput& input) const;
  // Matches, with the reason when not matched: the types' reason when they refuse the event
  // (checked first), else the filter's first failed condition.
  Verdict Match(std::optional<std::string_view> type, const MatchInput& input) const;
};

// A route's "types" and "filter" members of `route` (absent or null: none), validated by
// ParseTypes and Filter::Parse with `field` ("routes[2]") prefixed to their fields
// ("routes[2].types[0]", "routes[2].filter.body.$gt"). Other members are not looked at.
Result<RouteRule> ParseRouteRule(const boost::json::object& route, std::string_view field);

}  // namespace hookrelay::routing
