#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "access/role.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "store/token_store.h"

namespace hookrelay::access {

// The tokens the management API accepts: the bootstrap token (its hash, from the environment or
// the data directory) and the named tokens as last read from the store (Replace). A token is
// looked up by its SHA-256, so the lookup says nothing about the token through its timing.
// Thread-safe: Authenticate runs on the server's I/O threads, Replace on the refresher's.
class TokenRegistry {
 public:
  // The prefix of every named token ("hr_" + 64 hex characters).
  static constexpr std::string_view kTokenPrefix = "hr_";

  TokenRegistry(std::string bootstrap_sha256_hex, const Clock& clock);

  struct Authentication {
    std::optional<Principal> principal;
    // Why not, when there is no principal: shown to the client (never the token).
    std::string error;
  };
  // From an Authorization header value ("Bearer <token>"; the scheme's case does not matter).
  Authentication Authenticate(std::string_view authorization) const;

  // The named tokens (and the bootstrap row, which says whether it was revoked), from the store.
  void Replace(const std::vector<store::ApiToken>& tokens);

  // Uses waiting to be written to the store (last used at, from which address): NoteUse keeps
  // the latest per token, TakeUses hands them over and forgets them.
  struct Use {
    TimePoint at{};
    std::string addr;
  };
  void NoteUse(const std::string& name, TimePoint at, std::string addr);
  std::map<std::string, Use> TakeUses();

 private:
  struct Entry {
    Principal principal;
    std::optional<TimePoint> expires_at;
  };

  const std::string bootstrap_sha256_hex_;
  const Clock& clock_;
  mutable Mutex mu_;
  std::map<std::string, Entry> by_hash_ GUARDED_BY(mu_);
  bool bootstrap_revoked_ GUARDED_BY(mu_) = false;
  std::map<std::string, Use> uses_ GUARDED_BY(mu_);
};

}  // namespace hookrelay::access
