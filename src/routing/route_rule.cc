#include "routing/route_rule.h"

#include <string>

namespace hookrelay::routing {

bool RouteRule::Matches(std::optional<std::string_view> type, const MatchInput& input) const {
  return types.Matches(type) && (!filter || filter->Matches(input));
}

Verdict RouteRule::Match(std::optional<std::string_view> type, const MatchInput& input) const {
  Verdict v = types.Match(type);
  if (!v.matched || !filter) return v;
  return filter->Match(input);
}

Result<RouteRule> ParseRouteRule(const boost::json::object& route, std::string_view field) {
  const std::string prefix = field.empty() ? std::string() : std::string(field) + ".";
  RouteRule rule;
  if (const boost::json::value* types = route.if_contains("types")) {
    HR_ASSIGN_OR_RETURN(rule.types, ParseTypesFromJson(*types, prefix + "types"));
  }
  if (const boost::json::value* filter = route.if_contains("filter");
      filter && !filter->is_null()) {
    HR_ASSIGN_OR_RETURN(rule.filter, Filter::Parse(*filter, prefix + "filter"));
  }
  return rule;
}

}  // namespace hookrelay::routing
