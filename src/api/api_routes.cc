#include "api/api_routes.h"

#include <algorithm>

namespace hookrelay::api {

namespace {

using access::Role;

constexpr ApiRoute kRoutes[] = {
    {RouteId::kListEvents, "GET", "/api/v1/events", Role::kViewer},
    {RouteId::kGetEvent, "GET", "/api/v1/events/{id}", Role::kViewer},
    {RouteId::kReplayEvent, "POST", "/api/v1/events/{id}/replay", Role::kOperator},
    {RouteId::kListBulkReplays, "GET", "/api/v1/replays", Role::kViewer},
    {RouteId::kCreateBulkReplay, "POST", "/api/v1/replays", Role::kOperator},
    {RouteId::kGetBulkReplay, "GET", "/api/v1/replays/{id}", Role::kViewer},
    {RouteId::kCancelBulkReplay, "DELETE", "/api/v1/replays/{id}", Role::kOperator},
    {RouteId::kListDestinations, "GET", "/api/v1/destinations", Role::kViewer},
    {RouteId::kCreateDestination, "POST", "/api/v1/destinations", Role::kAdmin},
    {RouteId::kGetDestination, "GET", "/api/v1/destinations/{name}", Role::kViewer},
    {RouteId::kUpdateDestination, "PATCH", "/api/v1/destinations/{name}", Role::kAdmin},
    {RouteId::kDeleteDestination, "DELETE", "/api/v1/destinations/{name}", Role::kAdmin},
    {RouteId::kPauseDestination, "POST", "/api/v1/destinations/{name}/pause", Role::kOperator},
    {RouteId::kResumeDestination, "POST", "/api/v1/destinations/{name}/resume", Role::kOperator},
    {RouteId::kResetBreaker, "POST", "/api/v1/destinations/{name}/reset-breaker", Role::kOperator},
    {RouteId::kRotateDestinationSecret, "POST", "/api/v1/destinations/{name}/rotate-secret",
     Role::kAdmin},
    {RouteId::kDestinationSchedule, "GET", "/api/v1/destinations/{name}/schedule", Role::kViewer},
    {RouteId::kListSources, "GET", "/api/v1/sources", Role::kViewer},
    {RouteId::kCreateSource, "POST", "/api/v1/sources", Role::kAdmin},
    {RouteId::kGetSource, "GET", "/api/v1/sources/{name}", Role::kViewer},
    {RouteId::kUpdateSource, "PATCH", "/api/v1/sources/{name}", Role::kAdmin},
    {RouteId::kDeleteSource, "DELETE", "/api/v1/sources/{name}", Role::kAdmin},
    {RouteId::kRotateSourceSecret, "POST", "/api/v1/sources/{name}/rotate-secret", Role::kAdmin},
    {RouteId::kListSourceRejections, "GET", "/api/v1/sources/{name}/rejections", Role::kViewer},
    {RouteId::kListRoutes, "GET", "/api/v1/routes", Role::kViewer},
    {RouteId::kCreateRoute, "POST", "/api/v1/routes", Role::kAdmin},
    {RouteId::kTestRoute, "POST", "/api/v1/routes/test", Role::kViewer},
    {RouteId::kGetRoute, "GET", "/api/v1/routes/{id}", Role::kViewer},
    {RouteId::kUpdateRoute, "PATCH", "/api/v1/routes/{id}", Role::kAdmin},
    {RouteId::kDeleteRoute, "DELETE", "/api/v1/routes/{id}", Role::kAdmin},
    {RouteId::kTestTransform, "POST", "/api/v1/transforms/test", Role::kAdmin},
    {RouteId::kListAudit, "GET", "/api/v1/audit", Role::kViewer},
    {RouteId::kListTokens, "GET", "/api/v1/tokens", Role::kAdmin},
    {RouteId::kCreateToken, "POST", "/api/v1/tokens", Role::kAdmin},
    {RouteId::kDeleteToken, "DELETE", "/api/v1/tokens/{name}", Role::kAdmin},
    {RouteId::kWhoAmI, "GET", "/api/v1/whoami", Role::kViewer},
    {RouteId::kListKeys, "GET", "/api/v1/keys", Role::kAdmin},
    {RouteId::kAddKey, "POST", "/api/v1/keys", Role::kAdmin},
    {RouteId::kRetireKey, "DELETE", "/api/v1/keys/{id}", Role::kAdmin},
    {RouteId::kStats, "GET", "/api/v1/stats", Role::kViewer},
    {RouteId::kSimulate, "GET", "/api/v1/simulate", Role::kViewer},
    {RouteId::kOpenApi, "GET", "/api/v1/openapi.json", Role::kViewer},
};

// Matches `segments` against a template; appends the "{…}" segments to `params`.
bool MatchPath(std::string_view pattern, const std::vector<std::string>& segments,
               std::vector<std::string>& params) {
  params.clear();
  size_t i = 0;
  size_t pos = 1;  // past the leading '/'
  while (pos <= pattern.size()) {
    size_t end = pattern.find('/', pos);
    if (end == std::string_view::npos) end = pattern.size();
    std::string_view part = pattern.substr(pos, end - pos);
    if (i >= segments.size()) return false;
    if (part.size() > 2 && part.front() == '{' && part.back() == '}') {
      if (segments[i].empty()) return false;
      params.push_back(segments[i]);
    } else if (segments[i] != part) {
      return false;
    }
    ++i;
    pos = end + 1;
  }
  return i == segments.size();
}

}  // namespace

std::span<const ApiRoute> ApiRoutes() { return kRoutes; }

RouteMatch MatchRoute(const std::vector<std::string>& segments, std::string_view method) {
  RouteMatch m;
  std::vector<std::string> params;
  for (const ApiRoute& r : kRoutes) {
    if (!MatchPath(r.path, segments, params)) continue;
    if (method == r.method || (method == "HEAD" && r.method == "GET")) {
      m.route = &r;
      m.params = std::move(params);
      m.allowed.clear();
      return m;
    }
    auto add = [&m](std::string_view s) {
      if (std::find(m.allowed.begin(), m.allowed.end(), s) == m.allowed.end()) {
        m.allowed.emplace_back(s);
      }
    };
    add(r.method);
    if (r.method == "GET") add("HEAD");
  }
  return m;
}

}  // namespace hookrelay::api
