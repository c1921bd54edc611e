#include "access/token_registry.h"

#include <cctype>
#include <utility>

#include "common/crypto.h"
#include "common/time_format.h"

namespace hookrelay::access {

namespace {

constexpr std::string_view kBootstrap = "bootstrap";

// The token of a "Bearer <token>" header value; empty for another scheme or none.
std::string_view BearerToken(std::string_view authorization) {
  constexpr std::string_view kBearer = "bearer ";
  if (authorization.size() <= kBearer.size()) return {};
  for (size_t i = 0; i < kBearer.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kBearer[i]) return {};
  }
  return authorization.substr(kBearer.size());
}

}  // namespace

TokenRegistry::TokenRegistry(std::string bootstrap_sha256_hex, const Clock& clock)
    : bootstrap_sha256_hex_(std::move(bootstrap_sha256_hex)), clock_(clock) {}

TokenRegistry::Authentication TokenRegistry::Authenticate(std::string_view authorization) const {
  const std::string_view token = BearerToken(authorization);
  if (token.empty()) return {std::nullopt, "wrong bearer token"};
  const std::string hash = HexEncode(Sha256(token));
  MutexLock lock(mu_);
  if (!bootstrap_sha256_hex_.empty() && ConstantTimeEqual(hash, bootstrap_sha256_hex_)) {
    if (bootstrap_revoked_) {
      return {std::nullopt, "the bootstrap token was revoked: use a named token (docs/access.md)"};
    }
    return {Principal{std::string(kBootstrap), Role::kAdmin}, ""};
  }
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return {std::nullopt, "wrong bearer token"};
  const Entry& e = it->second;
  if (e.expires_at && clock_.Now() >= *e.expires_at) {
    return {std::nullopt, "token \"" + e.principal.name + "\" expired at " +
                              FormatRfc3339(*e.expires_at, /*with_millis=*/false)};
  }
  return {e.principal, ""};
}

void TokenRegistry::Replace(const std::vector<store::ApiToken>& tokens) {
  std::map<std::string, Entry> by_hash;
  bool bootstrap_revoked = false;
  for (const store::ApiToken& t : tokens) {
    if (t.name == kBootstrap) {
      bootstrap_revoked = t.revoked;
      continue;
    }
    std::optional<Role> role = ParseRole(t.role);
    // A row this version cannot read (a role from a later one) grants nothing.
    if (t.revoked || t.hash.empty() || !role) continue;
    // Nor does one whose scope cannot be read: it must not reach everything instead.
    Result<std::optional<Scope>> scope = ScopeFromText(t.scope);
    if (!scope.ok()) continue;
    by_hash[t.hash] = Entry{Principal{t.name, *role, std::move(*scope)}, t.expires_at};
  }
  MutexLock lock(mu_);
  by_hash_ = std::move(by_hash);
  bootstrap_revoked_ = bootstrap_revoked;
}

void TokenRegistry::NoteUse(const std::string& name, TimePoint at, std::string addr) {
  MutexLock lock(mu_);
  Use& u = uses_[name];
  if (at >= u.at) u = Use{at, std::move(addr)};
}

std::map<std::string, TokenRegistry::Use> TokenRegistry::TakeUses() {
  MutexLock lock(mu_);
  return std::exchange(uses_, {});
}

}  // namespace hookrelay::access
