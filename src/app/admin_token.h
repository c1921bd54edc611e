#pragma once

#include <ostream>
#include <string>

#include "common/result.h"

namespace hookrelay::app {

// Checks bearer tokens for the management API against a stored SHA-256 hash; the token itself
// is never stored or logged.
class AdminToken {
 public:
  explicit AdminToken(std::string sha256_hex) : sha256_hex_(std::move(sha256_hex)) {}
  bool Check(std::string_view presented) const;
  // From an "Authorization: Bearer <token>" header value.
  bool CheckAuthorizationHeader(std::string_view header_value) const;

 private:
  std::string sha256_hex_;
};

// Sets up the admin token for a data directory:
// - HOOKRELAY_ADMIN_TOKEN set (`env_token` non-empty): that token is used (and its hash stored).
// - else, a stored hash in dir/admin-token.sha256 is used.
// - else a token is generated, printed once to `out`, and only its hash stored (mode 0600).
Result<AdminToken> SetUpAdminToken(const std::string& dir, const std::string& env_token,
                                   std::ostream& out);

}  // namespace hookrelay::app
