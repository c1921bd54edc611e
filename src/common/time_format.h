#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace hookrelay {

// "2026-11-30T06:00:00.123Z" (with_millis) or "2026-11-30T06:00:00Z", always UTC.
std::string FormatRfc3339(TimePoint t, bool with_millis = true);

// Accepts RFC 3339 timestamps with 'Z' or a numeric offset and optional fractional seconds
// ("2026-11-30T06:00:00Z", "2026-11-30T07:00:00.5+01:00"). nullopt when malformed.
std::optional<TimePoint> ParseRfc3339(std::string_view text);

// HTTP-date (RFC 9110 5.6.7): IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", and the obsolete
// RFC 850 and asctime forms recipients must accept. nullopt when malformed.
std::optional<TimePoint> ParseHttpDate(std::string_view text);
// IMF-fixdate.
std::string FormatHttpDate(TimePoint t);

}  // namespace hookrelay
