#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "alerts/alert.h"
#include "common/clock.h"

namespace hookrelay::alerts {

// Stable snake_case name of a kind, as in the webhook JSON: "breaker_opened",
// "breaker_closed", "deliveries_failed", "destination_paused", "destination_resumed", "stalled".
std::string_view AlertKindName(Alert::Kind kind);

// One line, ASCII-safe apart from what the destination name holds:
// "[hookrelay] billing: circuit breaker opened".
std::string AlertSubject(const Alert& a);

// Plain text saying what happened, what hookrelay does about it and what to do, e.g.
//   37 deliveries to billing failed permanently in the last 5m (since 2026-11-30 14:00:31 UTC).
//   Last reason: 404 Not Found is not retried.
//   ...
//   Fix the endpoint, then replay them: hookrelay replay --status failed --destination billing
// `window` is the batching window (AlertBatcher), for "in the last 5m". Lines end in "\n".
std::string AlertBody(const Alert& a, Duration window);

// The webhook form: {"kind": "breaker_opened", "destination", "at" (RFC 3339), "reason",
// "count", "until" (RFC 3339 or null), "sample_reasons": [...], "subject", "text" (the body)}.
boost::json::object AlertToJson(const Alert& a, Duration window);

// "2026-11-30 14:05:31 UTC".
std::string FormatUtc(TimePoint t);

}  // namespace hookrelay::alerts
