#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "access/scope.h"

// Who may do what through the management API (docs/access.md). Pure: no I/O.

namespace hookrelay::access {

// Each role may do what the ones before it may. 0 is no role: a route table entry that forgets
// its role has it, and the route-table test fails (RoleName gives "none").
enum class Role {
  kViewer = 1,  // every GET: events, destinations, sources, routes, replays, audit, stats
  kOperator,    // viewer + replay, bulk replay, pause, resume, reset-breaker
  kAdmin,       // everything: the catalog, secrets' rotation, tokens
};

std::string_view RoleName(Role role);  // "viewer", "operator", "admin"; "none" for 0
std::optional<Role> ParseRole(std::string_view name);
// True when `have` may do what needs `need`.
inline bool RoleAllows(Role have, Role need) {
  return static_cast<int>(have) >= static_cast<int>(need);
}

// Who a request comes from: the token's name, role and scope.
struct Principal {
  std::string name;  // "bootstrap" for HOOKRELAY_TOKEN / the token printed at the first start
  Role role{};       // none until authenticated
  std::optional<Scope> scope;  // none: every source and destination
  bool operator==(const Principal&) const = default;
};

}  // namespace hookrelay::access
