#pragma once

#include <boost/json/object.hpp>

#include "policy/decision.h"
#include "policy/retry_policy.h"

namespace hookrelay::policy {

// The JSON document of a planned schedule, shared by `hookrelay schedule --json` and
// GET /api/v1/destinations/{name}/schedule: {"policy", "attempts": [{"n", "delay_s", "at_s"}],
// "gives_up": {"after_s", "kind", "reason"}}. Seconds are integers when whole.
boost::json::object ScheduleToJson(const RetryPolicy& p, const Schedule& s);

}  // namespace hookrelay::policy
