#pragma once

#include <boost/json/object.hpp>
#include <vector>

#include "access/role.h"
#include "common/clock.h"
#include "store/token_store.h"

// The JSON of API tokens (GET /api/v1/tokens) and of the caller (GET /api/v1/whoami): never a
// token nor its hash.

namespace hookrelay::api {

// {"name", "role", "created_at", "created_by", "expires_at" (null: never), "expired" (at `now`),
//  "last_used_at" (null until used), "last_used_addr" (null until used), "revoked"}.
boost::json::object TokenToJson(const store::ApiToken& t, TimePoint now);
// {"items": [TokenToJson…], "next_cursor": null}, by name.
boost::json::object TokenListToJson(const std::vector<store::ApiToken>& tokens, TimePoint now);
// {"name", "role"}.
boost::json::object PrincipalToJson(const access::Principal& p);

}  // namespace hookrelay::api
