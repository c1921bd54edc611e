// Fuzzes the timestamp parsers: RFC 3339 (API filters), HTTP-date and Retry-After (responses from
// destinations, so attacker-controlled). Invariants: accepted instants format and parse back to
// the same instant, and Retry-After waits are within [0, 365 days] for any `now`.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/time_format.h"
#include "policy/retry_after.h"

namespace {

using hookrelay::Duration;
using hookrelay::TimePoint;

void Fail(const char* what, std::string_view input, const std::string& detail) {
  std::fprintf(stderr, "time_fuzzer: %s for input \"%.*s\": %s\n", what,
               static_cast<int>(input.size()), input.data(), detail.c_str());
  std::abort();
}

// The parsers accept years 1970..9999; an offset can move an instant just outside, where the
// formatter's output is (rightly) not accepted back.
bool InParseableRange(TimePoint t) {
  constexpr int64_t kYear10000Ms = 253402300800000;  // 10000-01-01T00:00:00Z
  const int64_t ms = hookrelay::ToUnixMillis(t);
  return ms >= 0 && ms < kYear10000Ms;
}

void CheckRfc3339(std::string_view text) {
  std::optional<TimePoint> t = hookrelay::ParseRfc3339(text);
  if (!t || !InParseableRange(*t)) return;
  const std::string shown = hookrelay::FormatRfc3339(*t);
  std::optional<TimePoint> again = hookrelay::ParseRfc3339(shown);
  if (!again || *again != *t) Fail("FormatRfc3339 does not round-trip", text, shown);
}

void CheckHttpDate(std::string_view text) {
  std::optional<TimePoint> t = hookrelay::ParseHttpDate(text);
  if (!t) return;
  if (hookrelay::ToUnixMillis(*t) % 1000 != 0) Fail("HTTP-date with milliseconds", text, "");
  if (!InParseableRange(*t)) {
    Fail("HTTP-date outside 1970..9999", text, std::to_string(hookrelay::ToUnixMillis(*t)));
  }
  const std::string shown = hookrelay::FormatHttpDate(*t);
  std::optional<TimePoint> again = hookrelay::ParseHttpDate(shown);
  if (!again || *again != *t) Fail("FormatHttpDate does not round-trip", text, shown);
}

void CheckRetryAfter(std::string_view text) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr Duration kMaxWait = std::chrono::hours(24 * 365);
  for (int64_t now_ms : {int64_t{1'700'000'000'000}, int64_t{0}, kMin, kMax}) {
    std::optional<Duration> wait =
        hookrelay::policy::ParseRetryAfter(text, hookrelay::FromUnixMillis(now_ms));
    if (wait && (*wait < Duration::zero() || *wait > kMaxWait)) {
      Fail("Retry-After wait outside [0, 365d]", text, std::to_string(wait->count()));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckRfc3339(text);
  CheckHttpDate(text);
  CheckRetryAfter(text);
  return 0;
}
