#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/destination.h"
#include "store/store.h"

namespace hookrelay::delivery {

using HeaderPairs = std::vector<std::pair<std::string, std::string>>;

// The headers of a request to `destination` for an event that arrived with `received` headers
// (pure; the sender adds Host and Content-Length, and User-Agent "hookrelay/…" when none is
// given). In this order:
//  1. the received headers forward_headers selects ("all": every one, "none": none, a list:
//     those names, case-insensitively), never the ones model::IsNeverForwarded names (hop-by-hop,
//     Host, Content-Length, Expect, Authorization, Cookie, Proxy-*), never the Standard Webhooks
//     headers webhook-id, webhook-timestamp, webhook-signature (hookrelay's own set replaces
//     them as a whole), and never one whose name hookrelay sets below;
//  2. Content-Type: the event's (application/octet-stream when it had none);
//  3. the destination's configured headers, then Authorization from its "auth" (if set);
//  4. `standard`: hookrelay's webhook-id, webhook-timestamp and webhook-signature.
// So hookrelay's own and the configured headers win over received ones of the same name, and
// each name appears once (received duplicates of a forwarded name are all kept, in order).
HeaderPairs OutgoingHeaders(const std::vector<store::Header>& received,
                            const std::string& content_type, const model::Destination& destination,
                            HeaderPairs standard);

}  // namespace hookrelay::delivery
