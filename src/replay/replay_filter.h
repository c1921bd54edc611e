#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "store/store.h"

namespace hookrelay::replay {

// What a bulk replay replays: the events matching the filter (as GET /api/v1/events would list
// them), to each of their destinations whose latest delivery chain is in `status` (and is
// `destination`, when set).
struct ReplayFilter {
  store::DeliveryStatus status = store::DeliveryStatus::kFailed;
  std::optional<std::string> source;
  std::optional<std::string> destination;
  std::optional<TimePoint> since;   // received_at >= since
  std::optional<TimePoint> until;   // received_at < until
  std::optional<std::string> type;  // store::EventFilter::type ("invoice.*")
  // false: the events no route took at ingest, each sent to `destination` (required then) unless
  // it already has a delivery there; `status` does not apply (they have no deliveries).
  std::optional<bool> routed;
  bool operator==(const ReplayFilter&) const = default;
};

// {"status": "failed", "source"?, "destination"?, "since"?, "until"?, "type"?, "routed"?} (times
// RFC 3339). Unknown fields and wrong types are kInvalidArgument naming the field; a missing
// status is "failed". With "routed": false, "destination" is required and "status" refused.
Result<ReplayFilter> ParseReplayFilter(std::string_view json_text);
std::string ReplayFilterToJson(const ReplayFilter& filter);

store::EventFilter ToEventFilter(const ReplayFilter& filter);

// `filter` limited to events received up to `job_created_at` (received_at <= it): a bulk replay
// replays what matched when it was asked for, so its count (the job's total) and its walk see
// the same events; events that arrive while it runs are not its business.
ReplayFilter AsOfJob(ReplayFilter filter, TimePoint job_created_at);

}  // namespace hookrelay::replay
