#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "sim/herd.h"

namespace hookrelay::sim {

// The renderings of a herd comparison, shared by `hookrelay simulate herd` and (later) the API.
// Pure: they return text and write nothing.

// {"scenario": {"events", "fail_window", "recover_at", "capacity", "capacity_per_second",
//   "seed"}, "strategies": [{"strategy", "policy", "peak_per_second", "p99_per_second",
//   "requests", "failed_requests", "delivered", "exhausted", "drain_seconds",
//   "peak_failures_per_second", "arrivals_per_second": [[second, count], …]}, …]}
// `strategies` and `results` are parallel. drain_seconds has millisecond precision.
boost::json::object HerdToJson(const HerdScenario& scenario,
                               const std::vector<HerdStrategy>& strategies,
                               const std::vector<HerdResult>& results);

// A table for a terminal: lines of at most `width` columns (at least 72). The scenario is
// wrapped at spaces; a strategy name too long for its column gets a line of its own, with the
// figures on the next.
std::string HerdTable(const HerdScenario& scenario, const std::vector<HerdResult>& results,
                      size_t width = 80);

// A self-contained SVG chart: requests per second at the endpoint over time, one polyline per
// strategy (in `results` order, each with class="strategy" and data-strategy=name), a title,
// axes with tick labels, a legend, the recovery marked and the capacity as a dashed line.
// The chart spans the outage's start to the last request, but at most one hour past the
// recovery (later retries of long ladders are in the table and the subtitle says so); each
// point is the highest per-second count in its bucket of seconds (the chart has at most
// 600 points per line; the y axis's label gives the bucket).
std::string HerdSvg(const HerdScenario& scenario, const std::vector<HerdResult>& results);

}  // namespace hookrelay::sim
