#include "api/api_routes.h"

#include <algorithm>

namespace hookrelay::api {

namespace {

constexpr ApiRoute kRoutes[] = {
    {RouteId::kListEvents, "GET", "/api/v1/events"},
    {RouteId::kGetEvent, "GET", "/api/v1/events/{id}"},
    {RouteId::kReplayEvent, "POST", "/api/v1/events/{id}/replay"},
    {RouteId::kListBulkReplays, "GET", "/api/v1/replays"},
    {RouteId::kCreateBulkReplay, "POST", "/api/v1/replays"},
    {RouteId::kGetBulkReplay, "GET", "/api/v1/replays/{id}"},
    {RouteId::kCancelBulkReplay, "DELETE", "/api/v1/replays/{id}"},
    {RouteId::kListDestinations, "GET", "/api/v1/destinations"},
    {RouteId::kCreateDestination, "POST", "/api/v1/destinations"},
    {RouteId::kGetDestination, "GET", "/api/v1/destinations/{name}"},
    {RouteId::kUpdateDestination, "PATCH", "/api/v1/destinations/{name}"},
    {RouteId::kDeleteDestination, "DELETE", "/api/v1/destinations/{name}"},
    {RouteId::kPauseDestination, "POST", "/api/v1/destinations/{name}/pause"},
    {RouteId::kResumeDestination, "POST", "/api/v1/destinations/{name}/resume"},
    {RouteId::kResetBreaker, "POST", "/api/v1/destinations/{name}/reset-breaker"},
    {RouteId::kRotateDestinationSecret, "POST", "/api/v1/destinations/{name}/rotate-secret"},
    {RouteId::kDestinationSchedule, "GET", "/api/v1/destinations/{name}/schedule"},
    {RouteId::kListSources, "GET", "/api/v1/sources"},
    {RouteId::kCreateSource, "POST", "/api/v1/sources"},
    {RouteId::kGetSource, "GET", "/api/v1/sources/{name}"},
    {RouteId::kUpdateSource, "PATCH", "/api/v1/sources/{name}"},
    {RouteId::kDeleteSource, "DELETE", "/api/v1/sources/{name}"},
    {RouteId::kRotateSourceSecret, "POST", "/api/v1/sources/{name}/rotate-secret"},
    {RouteId::kListSourceRejections, "GET", "/api/v1/sources/{name}/rejections"},
    {RouteId::kListRoutes, "GET", "/api/v1/routes"},
    {RouteId::kCreateRoute, "POST", "/api/v1/routes"},
    {RouteId::kTestRoute, "POST", "/api/v1/routes/test"},
    {RouteId::kGetRoute, "GET", "/api/v1/routes/{id}"},
    {RouteId::kUpdateRoute, "PATCH", "/api/v1/routes/{id}"},
    {RouteId::kDeleteRoute, "DELETE", "/api/v1/routes/{id}"},
    {RouteId::kTestTransform, "POST", "/api/v1/transforms/test"},
    {RouteId::kListAudit, "GET", "/api/v1/audit"},
    {RouteId::kStats, "GET", "/api/v1/stats"},
    {RouteId::kSimulate, "GET", "/api/v1/simulate"},
    {RouteId::kOpenApi, "GET", "/api/v1/openapi.json"},
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
