#pragma once

#include "access/token_registry.h"
#include "common/background_loop.h"
#include "common/clock.h"
#include "common/result.h"
#include "store/token_store.h"

namespace hookrelay::app {

// Keeps a node's TokenRegistry in step with the store: every kEvery it writes the uses the API
// noted (last used at, from where) and reads the tokens again, so a token created or revoked
// through another node is accepted or refused here within about a second (docs/access.md).
// Refresh() does the same at once, for a change made through this node.
//
// Thread-safe. `store` and `registry` must outlive it.
class TokenRefresher {
 public:
  static constexpr Duration kEvery = std::chrono::milliseconds(500);

  TokenRefresher(store::TokenStore& store, access::TokenRegistry& registry);
  ~TokenRefresher();
  TokenRefresher(const TokenRefresher&) = delete;
  TokenRefresher& operator=(const TokenRefresher&) = delete;

  // Writes the noted uses, then reads the tokens into the registry. A store error leaves the
  // registry as it was (the next pass tries again) and is returned.
  Status Refresh();
  // Starts the thread (its first pass at once). Stopped by the destructor.
  void Start();

 private:
  store::TokenStore& store_;
  access::TokenRegistry& registry_;
  bool failing_ = false;  // the loop's alone
  // Real time whatever a test's clock says: revocation must reach the node.
  BackgroundLoop loop_{"hr-tokens", SystemClock::Instance()};
};

}  // namespace hookrelay::app
