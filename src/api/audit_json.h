#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "store/store.h"

// The audit trail's JSON (GET /api/v1/audit) and who an entry names as its actor.

namespace hookrelay::api {

// The audit actor for an Authorization header value ("Bearer <token>"): "token:" and the first 8
// hex digits of the token's SHA-256 — enough to tell tokens apart, never the token itself.
std::string AuditActor(std::string_view authorization);

// {"id", "at", "actor", "action", "target", "count", "detail"}; detail is the stored JSON text
// parsed back (null when empty or not JSON).
boost::json::object AuditEntryToJson(const store::AuditEntry& e);
// {"items": [entry…], "next_cursor": "…" | null}
boost::json::object AuditPageToJson(const store::AuditPage& page);

}  // namespace hookrelay::api
