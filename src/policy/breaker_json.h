#pragma once

#include <boost/json/value.hpp>

#include "common/result.h"
#include "policy/breaker.h"

namespace hookrelay::policy {

// {"threshold": 20, "open": ["10m", "30m", "2h", "24h"], "escalation_reset": "24h"}; every
// field optional; unknown fields rejected; errors name the field ("open[1]").
Result<BreakerConfig> ParseBreakerConfig(const boost::json::value& v);
boost::json::object BreakerConfigToJson(const BreakerConfig& c);

}  // namespace hookrelay::policy
