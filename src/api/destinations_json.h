#pragma once

#include <boost/json/object.hpp>
#include <map>
#include <string>

#include "delivery/engine.h"
#include "model/registry.h"
#include "store/store.h"

// The JSON of destinations (GET /api/v1/destinations and /api/v1/destinations/{name}), as plain
// functions of the catalog and the engine's live state.

namespace hookrelay::api {

// DestinationToJson (no secrets) plus the live state: "breaker": {"state",
// "consecutive_failures", "open_until" (null unless open), "trips", and while half-open with the
// probe out "probe_sent_at"}, "breaker_settings", "paused" (configured or by the engine),
// "paused_reason", "allowed_concurrency", "in_flight", "latency". `state` is null for a
// destination the engine has not looked at yet (closed breaker, the initial concurrency).
// "signing_secret_rotation" is null once the old secret no longer signs at `now`.
boost::json::object DestinationViewToJson(const model::Destination& d,
                                          const delivery::DestinationState* state, TimePoint now);
// {"items": [destination view…], "next_cursor": null}, by name.
boost::json::object DestinationListToJson(
    const model::Catalog& catalog, const std::map<std::string, delivery::DestinationState>& states,
    TimePoint now);

// A destination's held queues (Store::ListHeldQueues): {"total", "queues": [{"order_key",
// "head": OrderHeadToJson, "waiting", "waiting_since"}]}.
boost::json::object HeldQueuesToJson(const store::HeldQueues& held);

}  // namespace hookrelay::api
