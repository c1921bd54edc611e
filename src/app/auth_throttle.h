#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/clock.h"
#include "common/mutex.h"

namespace hookrelay::app {

struct AuthThrottleOptions {
  // Wrong tokens one client address may present within `window` before it is blocked.
  int max_failures = 5;
  Duration window = std::chrono::minutes(1);
  // The first block; each further block of the same address doubles it, up to `max_block`. An
  // address that presents no wrong token for `max_block` after its block ended is forgotten.
  Duration block = std::chrono::minutes(1);
  Duration max_block = std::chrono::hours(1);
  // Addresses tracked at most (one of them the shared overflow entry). When all are in use (and
  // none can be forgotten), further addresses share one budget, so a flood from many addresses
  // cannot push a tracked one out.
  size_t max_addresses = 10000;
};

// Throttles wrong bearer tokens on the management API per client address. Pure: time comes
// from the injected clock; no I/O. Thread-safe.
//
// Per request the token is checked first, and only a wrong one reaches the throttle: a valid token
// is never refused, whatever its address did (behind a NAT or a proxy one operator's typos, or
// an attacker filling the table from many addresses, must not lock the others out).
// RecordFailure() counts a wrong token and says whether the address is blocked (refuse it with
// 429 then). Addresses are keyed by KeyOf(): IPv4 per address, IPv6 per /64, as the HTTP
// server's per-client connection cap counts them.
class AuthThrottle {
 public:
  struct Failure {
    int failures = 0;         // wrong tokens in the current window, this one included
    Duration blocked_for{0};  // > 0: this failure started a block this long
    Duration retry_after{0};  // > 0: the address was already blocked (whole seconds, rounded
                              // up); the failure is counted in Stats::throttled, not in the window
  };
  struct Stats {
    int64_t failures = 0;   // wrong tokens seen
    int64_t throttled = 0;  // requests refused because their address was blocked
    int64_t blocks = 0;     // blocks started
    size_t tracked = 0;     // addresses tracked now
  };

  explicit AuthThrottle(const Clock& clock, AuthThrottleOptions options = {});

  // 0 when `address` may present a token now; else how long it must still wait (whole seconds,
  // rounded up). A refusal is counted in Stats::throttled.
  Duration RetryAfter(const std::string& address);
  Failure RecordFailure(const std::string& address);
  void RecordSuccess(const std::string& address);

  Stats stats() const;
  const AuthThrottleOptions& options() const { return options_; }

  // The key `address` is throttled under: an IPv6 address's /64 ("2001:db8:1:2::/64"; an
  // IPv4-mapped one as its IPv4 address), anything else as it is. Pure.
  static std::string KeyOf(const std::string& address);

  // The key shared by addresses beyond max_addresses.
  static constexpr const char* kOverflowKey = "*";

 private:
  struct Entry {
    TimePoint window_start{};
    int failures = 0;
    int blocks = 0;  // blocks so far: the next one lasts block * 2^blocks
    TimePoint blocked_until{};
    TimePoint last_failure{};
  };
  // The entry `address` is counted under; may evict forgotten entries.
  Entry& EntryFor(const std::string& address, TimePoint now) REQUIRES(mu_);
  bool Forgettable(const Entry& e, TimePoint now) const;
  bool Full() const REQUIRES(mu_);
  // The entry `address` is counted under now, or null. No insertion.
  Entry* Find(const std::string& address) REQUIRES(mu_);

  const Clock& clock_;
  const AuthThrottleOptions options_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);
  Stats stats_ GUARDED_BY(mu_);
};

}  // namespace hookrelay::app
