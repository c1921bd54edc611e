#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "access/role.h"

namespace hookrelay::api {

// The management API's routes: the one table that both the handler's dispatch and the OpenAPI
// cross-check test use, so the two cannot drift apart.
enum class RouteId {
  kListEvents,
  kGetEvent,
  kReplayEvent,
  kListBulkReplays,
  kCreateBulkReplay,
  kGetBulkReplay,
  kCancelBulkReplay,
  kListDestinations,
  kCreateDestination,
  kGetDestination,
  kUpdateDestination,
  kDeleteDestination,
  kPauseDestination,
  kResumeDestination,
  kResetBreaker,
  kRotateDestinationSecret,
  kDestinationSchedule,
  kListSources,
  kCreateSource,
  kGetSource,
  kUpdateSource,
  kDeleteSource,
  kRotateSourceSecret,
  kListSourceRejections,
  kListRoutes,
  kCreateRoute,
  kTestRoute,
  kGetRoute,
  kUpdateRoute,
  kDeleteRoute,
  kTestTransform,
  kListAudit,
  kListTokens,
  kCreateToken,
  kDeleteToken,
  kWhoAmI,
  kListKeys,
  kAddKey,
  kRetireKey,
  kStats,
  kSimulate,
  kOpenApi,
};

struct ApiRoute {
  RouteId id;
  std::string_view method;  // "GET", "POST", "PATCH" or "DELETE" (HEAD is served wherever GET is)
  // OpenAPI-style template; a "{name}" segment matches any one non-empty path segment.
  std::string_view path;
  // The least role a token needs for it (docs/access.md): every GET is the viewer's; replays and
  // the destination controls the operator's; changes and secrets the admin's.
  access::Role role;
};

// Every implemented route, in the order the docs list them.
std::span<const ApiRoute> ApiRoutes();

// The result of matching a request path against the table.
struct RouteMatch {
  const ApiRoute* route = nullptr;   // set when the path and the method match
  std::vector<std::string> params;   // the decoded "{…}" segments, in order
  std::vector<std::string> allowed;  // methods the path supports; empty: no such path
};

// Matches decoded path segments ({"api", "v1", "events", "01J…"}) and a method. HEAD matches a
// GET route. When the path exists but not for `method`, route is null and `allowed` lists what
// does ("GET", "HEAD").
RouteMatch MatchRoute(const std::vector<std::string>& segments, std::string_view method);

}  // namespace hookrelay::api
