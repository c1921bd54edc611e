#include "policy/schedule_json.h"

#include <boost/json.hpp>

namespace hookrelay::policy {

namespace json = boost::json;

namespace {

// Seconds as a JSON number: an integer when whole, else a fraction (millisecond policies).
json::value Seconds(Duration d) {
  if (d.count() % 1000 == 0) return json::value(d.count() / 1000);
  return json::value(static_cast<double>(d.count()) / 1000.0);
}

}  // namespace

json::object ScheduleToJson(const RetryPolicy& p, const Schedule& s) {
  json::array attempts;
  for (const auto& a : s.attempts) {
    attempts.push_back(
        json::object{{"n", a.n}, {"delay_s", Seconds(a.delay)}, {"at_s", Seconds(a.at)}});
  }
  return json::object{
      {"policy", PolicyToJson(p)},
      {"attempts", std::move(attempts)},
      {"gives_up", json::object{{"after_s", Seconds(s.gives_up_after)},
                                {"kind", DecisionKindName(s.gives_up_kind)},
                                {"reason", s.gives_up_reason}}},
  };
}

}  // namespace hookrelay::policy
