#include "access/role.h"

namespace hookrelay::access {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kViewer: return "viewer";
    case Role::kOperator: return "operator";
    case Role::kAdmin: return "admin";
  }
  return "none";
}

std::optional<Role> ParseRole(std::string_view name) {
  for (Role r : {Role::kViewer, Role::kOperator, Role::kAdmin}) {
    if (RoleName(r) == name) return r;
  }
  return std::nullopt;
}

}  // namespace hookrelay::access
