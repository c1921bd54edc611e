#pragma once

#include <boost/json/object.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

// The JSON of events and their deliveries (GET /api/v1/events and /api/v1/events/{id}), as plain
// functions of plain data (no HTTP, no store reads), so each shape is unit-tested on its own.
// Field names are those of docs/api.md; times are RFC 3339 UTC with milliseconds; absent values
// are JSON null, never omitted, unless noted.

namespace hookrelay::api {

// What holds a destination's waiting deliveries back (the API's "paused_by"), by precedence:
// the catalog's `paused` (only a change of the destination lifts it) "config"; the stored pause,
// "gone" when the engine made it after a 410 Gone (store::kGonePauseReason), else "operator" (a
// pause through the API or CLI); the breaker, open or half-open, "breaker" (with, while open,
// when it half-opens). `by` is nullptr when nothing holds them.
struct PauseCause {
  const char* by = nullptr;
  std::optional<TimePoint> breaker_open_until;
};
PauseCause PauseCauseOf(bool paused_in_catalog, const store::DestinationControl& control);
// By destination name. A destination missing from it reads as nothing holding it back.
using PauseCauses = std::map<std::string, PauseCause>;
// Sets a delivery's "paused_by" and "breaker_open_until": the cause of its destination's pause
// while `status` is paused (both null otherwise, and when `causes` is null or has no cause).
void AddPauseCause(boost::json::object& delivery, const std::string& destination,
                   store::DeliveryStatus status, const PauseCauses* causes);

// {"id", "source", "received_at", "size", "type" (null: none), "routed", "deliveries":
// [{"destination", "status", "chain", "paused_by", "breaker_open_until"}]}: each destination's
// current delivery (its latest chain), from Event::current, with the cause of a pause
// (AddPauseCause).
boost::json::object EventSummaryToJson(const store::Event& e, const PauseCauses* causes = nullptr);
// {"items": [summary…], "next_cursor": "…" | null}
boost::json::object EventPageToJson(const store::EventPage& page,
                                    const PauseCauses* causes = nullptr);

using DeliveryDetail = store::DeliveryDetail;

// Sets "response_snippet" of an attempt's JSON (null when nothing was recorded) and, with one,
// "response_snippet_encoding": the recorded bytes as text when they are UTF-8 ("utf-8"; a
// character cut in two at the very end by the 4 KiB limit is left out), else their base64
// ("base64").
void AddResponseSnippet(boost::json::object& attempt, const std::string& snippet);

// The head of an ordered queue, which the deliveries behind it wait for: {"event", "chain",
// "status", "attempt", "max_attempts", "next_attempt_at" (null unless scheduled), "reason"}.
boost::json::object OrderHeadToJson(const store::Delivery& head);

// The event detail: {"id", "source", "received_at", "size", "headers": [[name, value]…],
// "body_base64", "deliveries": [{"destination", "status", "attempt", "max_attempts",
// "next_attempt_at" (null unless scheduled), "deadline", "reason", "chain", "order_key",
// "held_behind" (OrderHeadToJson or null), "attempts": [{"n", "started_at", "duration_ms",
// "status_code", "error", "retry_after", "probe", "counted", "response_snippet" (string or null),
// "response_snippet_encoding" (AddResponseSnippet)}]}]}. Header values whose names look like
// credentials (model::IsCredentialName) are shown as model::kRedacted.
// Without `with_body`, "body_base64" is left out (a 5 MiB body is ~7 MB of base64).
// Each delivery also has "paused_by" and "breaker_open_until" (AddPauseCause), and the event
// "routes" (RouteVerdictsToJson).
// The id of the route from the event's source to each destination, by destination name.
using RouteIds = std::map<std::string, std::string>;
boost::json::object EventDetailToJson(const store::Event& e,
                                      const std::vector<DeliveryDetail>& deliveries,
                                      bool with_body = true, const PauseCauses* causes = nullptr,
                                      const RouteIds& route_ids = {});
// What the routes of the event's source did with it at ingest: [{"route", "destination",
// "matched": true, "reason": null}] for each destination its routes gave a delivery (the original
// chain; "route" from `route_ids`, null when that route is gone), then [{…, "matched": false,
// "reason": "type invoice.paid is not in [customer.*]"}] for each route that did not take it.
boost::json::array RouteVerdictsToJson(const store::Event& e,
                                       const std::vector<DeliveryDetail>& deliveries,
                                       const RouteIds& route_ids);

}  // namespace hookrelay::api
