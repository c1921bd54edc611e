#include "app/token_refresher.h"

#include <spdlog/spdlog.h>

namespace hookrelay::app {

TokenRefresher::TokenRefresher(store::TokenStore& store, access::TokenRegistry& registry)
    : store_(store), registry_(registry) {}

TokenRefresher::~TokenRefresher() {
  loop_.Stop();
  (void)Refresh();  // the last uses noted
}

Status TokenRefresher::Refresh() {
  for (auto& [name, use] : registry_.TakeUses()) {
    if (Status s = store_.TouchToken(name, use.at, use.addr); !s.ok()) {
      // Only "last used" is late; the token still works.
      registry_.NoteUse(name, use.at, std::move(use.addr));
    }
  }
  auto tokens = store_.ListTokens();
  if (!tokens.ok()) return tokens.status();
  registry_.Replace(*tokens);
  return Status::Ok();
}

void TokenRefresher::Start() {
  loop_.Start([this] {
    // Said once when reading fails and once when it works again, not twice a second.
    const Status s = Refresh();
    if (!s.ok() && !failing_) {
      spdlog::warn("cannot read the API tokens (the last list read stays in force): {}",
                   s.message());
    } else if (s.ok() && failing_) {
      spdlog::info("the API tokens are read again");
    }
    failing_ = !s.ok();
    return kEvery;
  });
}

}  // namespace hookrelay::app
