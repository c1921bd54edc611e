#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/result.h"
#include "model/source.h"

namespace hookrelay::app {

// The bootstrap admin token's SHA-256 (the token itself is never stored or logged), which
// access::TokenRegistry checks requests against.
class AdminToken {
 public:
  explicit AdminToken(std::string sha256_hex) : sha256_hex_(std::move(sha256_hex)) {}
  const std::string& sha256_hex() const { return sha256_hex_; }

 private:
  std::string sha256_hex_;
};

// Tokens from the environment shorter than this get a warning at start.
inline constexpr size_t kStrongTokenLength = 32;

// Where the admin token comes from, decided before anything is written or printed, so that a
// start-up that fails later (address in use) neither shows a token nor stores its hash.
struct AdminTokenPlan {
  enum class Origin { kEnvironment, kStored, kGenerated };
  Origin origin = Origin::kGenerated;
  std::string env_name;               // kEnvironment: the variable it came from
  std::string sha256_hex;             // the hash requests are checked against
  std::string generated;              // kGenerated: the token, to be shown once
  bool store_hash = false;            // write sha256_hex to dir/admin-token.sha256 on commit
  std::vector<std::string> warnings;  // e.g. a weak token from the environment

  AdminToken token() const { return AdminToken(sha256_hex); }
};

// Decides the admin token for a data directory, reading only:
// - `env_token` non-empty (from `env_name`, HOOKRELAY_TOKEN or its alias HOOKRELAY_ADMIN_TOKEN):
//   that token (its hash will be stored). Under 16 characters is refused (InvalidArgument);
//   under kStrongTokenLength gives a warning.
// - else a stored hash in dir/admin-token.sha256.
// - else a new random token.
Result<AdminTokenPlan> PlanAdminToken(const std::string& dir, const std::string& env_token,
                                      const std::string& env_name);

// What the catalog holds when the token is shown, so the next steps fit it.
struct NextStepsContext {
  std::string url;                   // the server's, "http://127.0.0.1:8080"
  std::vector<std::string> sources;  // their names, the ones that check no signature first
  // How sources.front() verifies signatures; nullopt when it checks none (a plain curl works).
  // Its secrets are never printed.
  std::optional<model::VerifyConfig> first_verify;
  size_t destinations = 0;
};

// Shell lines that send a test event to `source` at `url`, signed as `verify` requires, with
// the secret taken from $SECRET (never printed): for github, shopify, stripe and hmac an
// openssl + curl command; for the standard scheme a line saying what must be signed. Each line
// begins with two spaces and ends with a newline.
std::string SignedTestEventHint(const std::string& url, const std::string& source,
                                const model::VerifyConfig& verify);

// Once the server is listening: stores the hash when the plan says so (mode 0600), and prints
// where the token comes from to `out` — a generated one once, followed by the next steps: with
// an empty catalog `hookrelay sources add …`; when the config (or the API) already defined
// sources or destinations, `hookrelay sources list` and a `curl` to the first source (one that
// checks no signature if there is one; else signed, see SignedTestEventHint).
Status CommitAdminToken(const std::string& dir, const AdminTokenPlan& plan, std::ostream& out,
                        const NextStepsContext& next = {});

}  // namespace hookrelay::app
