#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "store/store.h"

// The JSON of replays: a single event's (POST /api/v1/events/{id}/replay) and bulk replay jobs
// (/api/v1/replays).

namespace hookrelay::api {

// The 202 answer of a replay: {"event": id, "replays": [{"destination", "chain",
// "delivery_id"}]}.
boost::json::object ReplayResultToJson(const std::string& event_id,
                                       const std::vector<store::Delivery>& created);

// {"id", "state", "total", "done", "failed", "skipped", "rate", "filter": {…}, "created_at",
// "updated_at", "error": null | "…", "waiting": null | {"reason", "destination", "until",
// "message"}}. `skipped`: of a finished job, the events counted in total that no longer
// matched when the job reached them (replayed or changed meanwhile); 0 before the end.
boost::json::object ReplayJobToJson(const store::ReplayJob& job);
// {"items": [ReplayJobToJson…], "next_cursor": "…" | null}.
boost::json::object ReplayJobPageToJson(const store::ReplayJobPage& page);

}  // namespace hookrelay::api
