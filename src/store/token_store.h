#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace hookrelay::store {

// A named API token (docs/access.md): who may use the management API, with which role. The token
// itself is never stored, only its SHA-256.
struct ApiToken {
  std::string name;  // unique; "bootstrap" is the HOOKRELAY_TOKEN / first-start token's row
  // Lower-case hex SHA-256 of the whole token ("hr_…"); empty for "bootstrap", whose token is
  // checked in memory (it comes from the environment or the data directory, per node).
  std::string hash;
  std::string role;   // "viewer" | "operator" | "admin"
  std::string scope;  // JSON text {"sources": […], "destinations": […]}; empty: everything
  TimePoint created_at{};
  std::optional<TimePoint> expires_at;  // none: never expires
  std::string created_by;               // the audit actor that created it ("" for bootstrap)
  std::optional<TimePoint> last_used_at;
  std::string last_used_addr;  // the client's IP address at that use; "" until used
  bool revoked = false;        // only "bootstrap" is revoked in place (the others are deleted)
  bool operator==(const ApiToken&) const = default;
};

class TokenStore {
 public:
  virtual ~TokenStore() = default;

  // Adds `token` (last_used_* and revoked as given). kAlreadyExists naming "name" when a token of
  // that name exists.
  virtual Status CreateToken(const ApiToken& token) = 0;
  // Adds `token` unless one of its name exists (then changes nothing). Returns whether it added.
  virtual Result<bool> EnsureToken(const ApiToken& token) = 0;
  // Every token, by name.
  virtual Result<std::vector<ApiToken>> ListTokens() = 0;
  // Deletes the token named `name`. Returns whether there was one.
  virtual Result<bool> DeleteToken(const std::string& name) = 0;
  // Marks the token named `name` revoked (kept, so a revoked bootstrap stays revoked). Returns
  // whether there was one not revoked yet.
  virtual Result<bool> RevokeToken(const std::string& name) = 0;
  // Records a use: last_used_at = at and last_used_addr = addr, when `at` is later than the
  // stored last_used_at (or there is none). No error for an unknown name.
  virtual Status TouchToken(const std::string& name, TimePoint at, const std::string& addr) = 0;
};

}  // namespace hookrelay::store
