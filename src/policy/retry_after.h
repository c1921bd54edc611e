#pragma once

#include <optional>
#include <string_view>

#include "common/clock.h"

namespace hookrelay::policy {

// Parses a Retry-After header value received at `now`: delta-seconds ("120") or an HTTP-date.
// Returns how long to wait from `now` (0 for a date in the past). nullopt when the value is
// malformed (ignored, not fatal). Absurd values are clamped to 365 days, without overflow.
std::optional<Duration> ParseRetryAfter(std::string_view value, TimePoint now);

}  // namespace hookrelay::policy
