#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>

#include "common/clock.h"

// The management commands' human output, as pure functions of the API's JSON and a fixed "now"
// (no I/O, no clock), so every table is unit-tested. Field names are those of the management API
// (ARCHITECTURE.md section 3). Missing or null fields render as "-" rather than failing, so an
// older or newer server still gets readable output. Times are shown in the local time zone (TZ)
// and relative to `now`.

namespace hookrelay::cli {

// "in 3m", "5m12s ago", "now" (under a second): the two largest units, truncated to seconds.
std::string FormatRelative(TimePoint t, TimePoint now);

// Local time, and relative: "14:05:31, in 3m" on now's local day, else
// "2026-12-01 06:00:00, in 23h55m".
std::string FormatLocalAndRelative(TimePoint t, TimePoint now);

// The same for an RFC 3339 string from the API; "-" for null or missing, the text itself when it
// does not parse.
std::string FormatApiTime(const boost::json::value* t, TimePoint now);

// `hookrelay events list`: ID, SOURCE, RECEIVED, SIZE; "No events." when `items` is empty.
std::string RenderEventList(const boost::json::array& items, TimePoint now);

// `hookrelay events show`: the event, then each delivery ("attempt 2 of 5", the next retry,
// the deadline, the reason when it failed or is paused) and its attempts.
std::string RenderEventDetail(const boost::json::object& event, TimePoint now);

// `hookrelay sources list` / `show`.
std::string RenderSourceList(const boost::json::array& items);
std::string RenderSourceDetail(const boost::json::object& source);

// `hookrelay destinations list` / `show` (breaker state, pause, concurrency).
std::string RenderDestinationList(const boost::json::array& items, TimePoint now);
std::string RenderDestinationDetail(const boost::json::object& destination, TimePoint now);

// `hookrelay routes list` / `show`.
std::string RenderRouteList(const boost::json::array& items);
std::string RenderRouteDetail(const boost::json::object& route);

// The 202 answer of a replay, one line per new chain: "replayed 01J… to billing (chain 1,
// delivery 42)"; "nothing replayed" when there is none.
std::string RenderReplayResult(const boost::json::object& result);

}  // namespace hookrelay::cli
