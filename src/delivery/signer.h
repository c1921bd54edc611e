#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"

namespace hookrelay::delivery {

// The Standard Webhooks headers for an event: webhook-id, webhook-timestamp (Unix seconds of
// `now`) and, when `signing_keys` (the decoded bytes of whsec_ secrets, model::SigningKeys) has
// any, webhook-signature "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>" per key, separated by
// spaces in the keys' order ("v1,<new> v1,<old>" while a secret rotates).
std::vector<std::pair<std::string, std::string>> StandardWebhookHeaders(
    const std::string& event_id, TimePoint now, const std::string& body,
    const std::vector<std::string>& signing_keys);

}  // namespace hookrelay::delivery
