#include "policy/breaker_json.h"

#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <utility>

#include "common/units.h"

namespace hookrelay::policy {
namespace {

Result<Duration> ReadDuration(const boost::json::value& v, const std::string& field) {
  if (!v.is_string()) {
    return Status::InvalidArgument("must be a duration string such as \"10m\"", field);
  }
  const boost::json::string& s = v.get_string();
  Result<Duration> d = ParseDuration(std::string_view(s.data(), s.size()));
  if (!d.ok()) return Status::InvalidArgument(d.status().message(), field);
  return d;
}

}  // namespace

Result<BreakerConfig> ParseBreakerConfig(const boost::json::value& v) {
  if (!v.is_object()) return Status::InvalidArgument("must be an object");
  BreakerConfig c;
  for (const auto& [key_sv, value] : v.get_object()) {
    const std::string key(key_sv);
    if (key == "threshold") {
      const std::string range = "must be between 1 and " + std::to_string(kMaxBreakerThreshold);
      if (value.is_uint64()) return Status::InvalidArgument(range, key);
      if (!value.is_int64()) return Status::InvalidArgument("must be an integer", key);
      const int64_t n = value.get_int64();
      if (n < 1 || n > kMaxBreakerThreshold) return Status::InvalidArgument(range, key);
      c.threshold = static_cast<int>(n);
    } else if (key == "open") {
      if (!value.is_array()) {
        return Status::InvalidArgument(
            "must be an array of durations such as [\"10m\", \"30m\", \"2h\", \"24h\"]", key);
      }
      c.open_periods.clear();
      const boost::json::array& a = value.get_array();
      for (size_t i = 0; i < a.size(); ++i) {
        Result<Duration> d = ReadDuration(a[i], "open[" + std::to_string(i) + "]");
        if (!d.ok()) return d.status();
        c.open_periods.push_back(*d);
      }
    } else if (key == "escalation_reset") {
      Result<Duration> d = ReadDuration(value, key);
      if (!d.ok()) return d.status();
      c.escalation_reset = *d;
    } else {
      return Status::InvalidArgument(
          "unknown field \"" + key + "\" (known fields: threshold, open, escalation_reset)", key);
    }
  }
  HR_RETURN_IF_ERROR(c.Validate());
  return c;
}

boost::json::object BreakerConfigToJson(const BreakerConfig& c) {
  boost::json::object o;
  o["threshold"] = c.threshold;
  boost::json::array open;
  for (Duration d : c.open_periods) open.emplace_back(FormatDuration(d));
  o["open"] = std::move(open);
  o["escalation_reset"] = FormatDuration(c.escalation_reset);
  return o;
}

}  // namespace hookrelay::policy
