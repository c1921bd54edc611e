#pragma once

#include <string>

#include "common/result.h"
#include "delivery/outgoing_headers.h"
#include "model/destination.h"
#include "model/transform_spec.h"
#include "transform/transform.h"

namespace hookrelay::delivery {

// A destination URL cut where a transform may change it (docs/transforms.md): the part a
// transform never touches ("https://host:8443", user-info and all) and the path and query it
// sees and may return. Pure.
struct OutgoingTarget {
  std::string origin;  // scheme://authority
  std::string path;    // "/hooks" ("/" when the URL has none)
  std::string query;   // without '?'; "" when none
};
Result<OutgoingTarget> SplitTarget(const std::string& url);

// The limits a call of `spec` runs with: its own cpu and memory, else `defaults` (the runner's).
// Pure.
transform::Limits LimitsOf(const model::TransformSpec& spec, const transform::Limits& defaults);

// The headers of a transformed request: the script's (`from_script`), without any it may not set
// (hookrelay's webhook-id, webhook-timestamp, webhook-signature; Authorization when the
// destination has "auth"; model::IsHopByHopOrFraming's), then the
// destination's Authorization from "auth" and `standard` (signed over the transformed body).
// Pure.
HeaderPairs TransformedHeaders(HeaderPairs from_script, const model::Destination& destination,
                               HeaderPairs standard);

// The names (lower-case, sorted, ", "-separated) of the headers that differ between what the
// script got and what it returned: added, removed, or with another value (repeated fields
// compared joined with ", "). Pure.
std::string HeadersChanged(const HeaderPairs& before, const HeaderPairs& after);

}  // namespace hookrelay::delivery
