#pragma once

#include <boost/json/object.hpp>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "http/request.h"
#include "store/store.h"

namespace hookrelay::api {

// GET /api/v1/stats?window=1h&step=1m: `window` 1m…7d (default 1h), `step` 1m…window and a
// whole number of minutes (default 1m), at most 1440 steps.
struct StatsQuery {
  Duration window{std::chrono::hours(1)};
  Duration step{std::chrono::minutes(1)};
};
Result<StatsQuery> ParseStatsQuery(const http::RequestHead& head);

// The answer, from the store's per-minute rows (pure):
// {"window": "1h", "step": "1m", "since": t, "until": t,
//  "points": [{"at": t, "received", "delivered", "failed", "attempts", "attempt_failures"}…],
//  "totals": {…the same counts over the window…},
//  "destinations": [{"name", "delivered", "failed", "attempts", "attempt_failures"}…],
//  "due": {"count": n, "oldest_due_at": t | null}}
// Points are oldest first; the last one ends at the minute after `now` (the current minute is
// partial); every step has a point, zeros included.
boost::json::object StatsToJson(const StatsQuery& q, TimePoint now,
                                const std::vector<store::StatsRow>& rows, int64_t due_count,
                                std::optional<TimePoint> oldest_due);

// [since, until) of the window ending with the current minute, for Store::GetStats.
std::pair<TimePoint, TimePoint> StatsRange(const StatsQuery& q, TimePoint now);

}  // namespace hookrelay::api
