#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "store/store.h"

// The audit trail's JSON (GET /api/v1/audit).

namespace hookrelay::api {

// {"id", "at", "actor", "action", "target", "count", "detail"}; detail is the stored JSON text
// parsed back (null when empty or not JSON).
boost::json::object AuditEntryToJson(const store::AuditEntry& e);
// {"items": [entry…], "next_cursor": "…" | null}
boost::json::object AuditPageToJson(const store::AuditPage& page);

}  // namespace hookrelay::api
