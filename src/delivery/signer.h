#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"

namespace hookrelay::delivery {

// The Standard Webhooks headers for an event: webhook-id, webhook-timestamp (Unix seconds of
// `now`) and, when `signing_key` (the decoded bytes of a whsec_ secret) is set,
// webhook-signature "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>".
std::vector<std::pair<std::string, std::string>> StandardWebhookHeaders(
    const std::string& event_id, TimePoint now, const std::string& body,
    const std::optional<std::string>& signing_key);

}  // namespace hookrelay::delivery
