#pragma once

#include <chrono>

#include "common/clock.h"
#include "model/registry.h"

namespace hookrelay::retention {

// How long events are kept when no destination says otherwise (no destinations at all).
inline constexpr Duration kDefaultRetention = std::chrono::hours(24 * 30);

// How long an event must be kept: the longest replay window among all destinations of `catalog`.
// All destinations count, not only those routed from some source: routes change, and an event may
// have gone to several destinations, so an event is kept while any destination could still replay
// it. Non-positive windows (possible only in hand-built policies) are ignored; with no positive
// window, kDefaultRetention. Pure.
Duration RetentionPeriod(const model::Catalog& catalog);

// The purge cutoff at `now`: events received before it may be deleted (now − RetentionPeriod).
TimePoint PurgeCutoff(const model::Catalog& catalog, TimePoint now);

}  // namespace hookrelay::retention
