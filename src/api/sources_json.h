#pragma once

#include <boost/json/object.hpp>

#include "ingest/rejection_recorder.h"
#include "model/registry.h"
#include "store/store.h"

// The JSON of sources and their rejected requests (GET /api/v1/sources,
// /api/v1/sources/{name}/rejections).

namespace hookrelay::api {

// SourceToJson (no secrets) with, for a source that verifies, "verify.secrets_rotation": the
// rotated-out secrets still valid at `now`, {"old_secrets": n, "old_expires_at": the last of
// their expiries}, or null when there is none.
boost::json::object SourceViewToJson(const model::Source& s, TimePoint now);
// {"items": [SourceViewToJson…], "next_cursor": null}, by name.
boost::json::object SourceListToJson(const model::Catalog& catalog, TimePoint now);

// GET /api/v1/sources/{name}/rejections: {"items": [{"id", "received_at", "reason", "message",
// "headers": [[name, value]…], "size", "sha256", "remote_addr"}…], "next_cursor": "…" | null,
// "counts": RejectionCountsToJson}. Ids are strings, like every other id of the API.
boost::json::object RejectionPageToJson(const store::RejectionPage& page,
                                        const ingest::RejectionCounts& counts);
// {"since_start", "not_recorded", "last_at": RFC 3339 | null, "by_reason": {reason: n…}}.
boost::json::object RejectionCountsToJson(const ingest::RejectionCounts& counts);

}  // namespace hookrelay::api
