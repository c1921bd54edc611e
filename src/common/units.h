#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"

namespace hookrelay {

// Durations in config and JSON are strings: "250ms", "5s", "5m", "3h", "1d", or a sum of such
// parts, largest first ("1h30m"). Whole numbers only; no sign. Errors say what was expected
// ("1.5s": "whole numbers only: use \"1500ms\"").
Result<Duration> ParseDuration(std::string_view text);

// The shortest exact rendering: 0 → "0s", 300000 → "5m", 12900000 → "3h35m",
// 90061001 → "1d1h1m1s1ms". Negative durations get a leading '-'.
std::string FormatDuration(Duration d);

// For display (a table column, a message): every human-facing duration, rounded to at most
// 2-3 significant figures. A value of more than one unit from a minute up is rounded to the unit
// below its largest and shows those two: 106692ms → "1m47s", 600458ms → "10m0s",
// 5400000 → "1h30m"; from 10s to a minute whole seconds (46692 → "47s"); under ten seconds
// tenths of a second (1719 → "1.7s", 7042 → "7.0s"); under a second milliseconds ("250ms").
// One-unit values stay exact ("5m", "7s").
// Keep FormatDuration where the value must survive a round trip (config, JSON).
std::string FormatDurationRounded(Duration d);

// Byte sizes: "512", "512B", "64KiB", "5MiB", "1GiB", and decimal "10KB", "5MB", "1GB".
Result<uint64_t> ParseByteSize(std::string_view text);
// "5MiB", "64KiB", "1000B": binary units when exact, else bytes.
std::string FormatByteSize(uint64_t bytes);

// Rates: "100/s", "600/m", "5000/h" → events per second (> 0).
Result<double> ParseRate(std::string_view text);
// A rate in events per second as a flag gives it: "50/s", "1/m", "5/h" when whole in one of
// those units, else per second in plain decimals ("0.00001/s", never "1e-05/s"). The CLI and
// the server log both write rates with it.
std::string FormatRate(double per_second);
// The same, short for a table column: a rate not whole in any unit gets three significant
// figures ("8.57/m", "0.036/h"); FormatRate keeps every digit.
std::string FormatRateShort(double per_second);

}  // namespace hookrelay
