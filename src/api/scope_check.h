#pragma once

#include <optional>
#include <string>

#include "access/scope.h"
#include "api/api_routes.h"
#include "http/request.h"
#include "model/registry.h"

namespace hookrelay::api {

// What a scoped token may not reach by name (docs/access.md), checked before a route's handler
// runs: a source, destination or route named in the path it does not reach answers 404 exactly
// as one that does not exist (names must not leak); creating one outside its scope answers 403
// (the name came from the caller). nullopt: go on. The lists, events, replays, audit and stats
// are cut down by their handlers.
std::optional<http::Response> RefuseOutOfScope(const ApiRoute& route, const std::string& param,
                                               const http::Request& request,
                                               const model::Catalog& catalog,
                                               const access::Scope& scope);

}  // namespace hookrelay::api
