#include "app/auth_throttle.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace hookrelay::app {

AuthThrottle::AuthThrottle(const Clock& clock, AuthThrottleOptions options)
    : clock_(clock), options_(options) {}

bool AuthThrottle::Forgettable(const Entry& e, TimePoint now) const {
  // Quiet (no wrong token, not blocked) for max_block: a later guess starts from the first block.
  const TimePoint quiet_since = std::max(e.last_failure, e.blocked_until);
  return now - quiet_since >= std::max(options_.window, options_.max_block);
}

bool AuthThrottle::Full() const {
  // One slot stays for the shared overflow entry.
  return entries_.size() + 1 >= std::max<size_t>(2, options_.max_addresses);
}

AuthThrottle::Entry* AuthThrottle::Find(const std::string& address) {
  auto it = entries_.find(address);
  if (it != entries_.end()) return &it->second;
  if (Full()) {
    auto overflow = entries_.find(kOverflowKey);
    if (overflow != entries_.end()) return &overflow->second;
  }
  return nullptr;
}

AuthThrottle::Entry& AuthThrottle::EntryFor(const std::string& address, TimePoint now) {
  if (auto it = entries_.find(address); it != entries_.end()) return it->second;
  if (Full()) {
    std::erase_if(entries_, [&](const auto& kv) { return Forgettable(kv.second, now); });
  }
  if (Full()) return entries_[kOverflowKey];
  return entries_[address];
}

std::string AuthThrottle::KeyOf(const std::string& address) {
  in6_addr a{};
  if (address.find(':') == std::string::npos || inet_pton(AF_INET6, address.c_str(), &a) != 1) {
    return address;
  }
  if (IN6_IS_ADDR_V4MAPPED(&a)) {
    char v4[INET_ADDRSTRLEN] = {};
    return inet_ntop(AF_INET, &a.s6_addr[12], v4, sizeof v4) ? std::string(v4) : address;
  }
  std::memset(&a.s6_addr[8], 0, 8);
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, &a, text, sizeof text) == nullptr) return address;
  return std::string(text) + "/64";
}

Duration AuthThrottle::RetryAfter(const std::string& address) {
  const TimePoint now = clock_.Now();
  MutexLock lock(mu_);
  const Entry* e = Find(KeyOf(address));
  if (e == nullptr || now >= e->blocked_until) return Duration(0);
  ++stats_.throttled;
  const Duration left = e->blocked_until - now;
  return std::chrono::ceil<std::chrono::seconds>(left);
}

AuthThrottle::Failure AuthThrottle::RecordFailure(const std::string& address) {
  const TimePoint now = clock_.Now();
  MutexLock lock(mu_);
  ++stats_.failures;
  Entry& e = EntryFor(KeyOf(address), now);
  Failure f;
  if (now < e.blocked_until) {
    ++stats_.throttled;
    f.retry_after = std::chrono::ceil<std::chrono::seconds>(e.blocked_until - now);
    return f;
  }
  if (e.blocks > 0 && Forgettable(e, now)) e = Entry{};  // quiet for long enough: start afresh
  if (e.failures == 0 || now - e.window_start >= options_.window) {
    e.window_start = now;
    e.failures = 0;
  }
  e.last_failure = now;
  f.failures = ++e.failures;
  if (e.failures >= options_.max_failures) {
    Duration block = options_.block;
    for (int i = 0; i < e.blocks && block < options_.max_block; ++i) block *= 2;
    block = std::min(block, options_.max_block);
    e.blocked_until = now + block;
    e.failures = 0;
    ++e.blocks;
    ++stats_.blocks;
    f.blocked_for = block;
  }
  return f;
}

void AuthThrottle::RecordSuccess(const std::string& address) {
  MutexLock lock(mu_);
  if (entries_.empty()) return;
  entries_.erase(KeyOf(address));
}

AuthThrottle::Stats AuthThrottle::stats() const {
  MutexLock lock(mu_);
  Stats s = stats_;
  s.tracked = entries_.size();
  return s;
}

}  // namespace hookrelay::app
