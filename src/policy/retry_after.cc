#include "policy/retry_after.h"

#include <algorithm>
#include <cstdint>

#include "common/time_format.h"

namespace hookrelay::policy {
namespace {

constexpr Duration kMaxRetryAfter = std::chrono::hours(24 * 365);

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<Duration> ParseRetryAfter(std::string_view value, TimePoint now) {
  value = TrimOws(value);
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // Accumulate with an early stop so "99999999999999999999999" clamps instead of overflowing.
    constexpr int64_t kMaxSeconds =
        std::chrono::duration_cast<std::chrono::seconds>(kMaxRetryAfter).count();
    int64_t seconds = 0;
    for (char c : value) {
      seconds = seconds * 10 + (c - '0');
      if (seconds >= kMaxSeconds) return kMaxRetryAfter;
    }
    return std::chrono::seconds(seconds);
  }
  std::optional<TimePoint> at = ParseHttpDate(value);
  if (!at) return std::nullopt;
  int64_t wait_ms;
  if (__builtin_sub_overflow(ToUnixMillis(*at), ToUnixMillis(now), &wait_ms)) {
    // Only an absurd `now` gets here; the sign of `now` says which way it overflowed.
    return ToUnixMillis(now) < 0 ? kMaxRetryAfter : Duration::zero();
  }
  return std::clamp(Duration(wait_ms), Duration::zero(), kMaxRetryAfter);
}

}  // namespace hookrelay::policy
