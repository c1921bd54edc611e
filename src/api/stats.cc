#include "api/stats.h"

#include <boost/json.hpp>
#include <map>

#include "api/request_params.h"
#include "common/time_format.h"
#include "common/units.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

constexpr Duration kMinute = std::chrono::minutes(1);

Result<Duration> ParseParam(const http::RequestHead& head, std::string_view name, Duration dflt) {
  std::optional<std::string> v = head.QueryParam(name);
  if (!v || v->empty()) return dflt;
  Result<Duration> d = ParseDuration(*v);
  if (!d.ok()) {
    return Status::InvalidArgument(std::string(name) + ": " + d.status().message(),
                                   std::string(name));
  }
  return *d;
}

struct Counts {
  int64_t received = 0, delivered = 0, failed = 0, attempts = 0, attempt_failures = 0;
  void Add(const store::StatsRow& r) {
    received += r.received;
    delivered += r.delivered;
    failed += r.failed;
    attempts += r.attempts;
    attempt_failures += r.attempt_failures;
  }
  json::object ToJson() const {
    return json::object{{"received", received},
                        {"delivered", delivered},
                        {"failed", failed},
                        {"attempts", attempts},
                        {"attempt_failures", attempt_failures}};
  }
};

}  // namespace

Result<StatsQuery> ParseStatsQuery(const http::RequestHead& head) {
  if (Status s = CheckQueryParams(head, {"window", "step"}); !s.ok()) return s;
  StatsQuery q;
  Result<Duration> window = ParseParam(head, "window", q.window);
  if (!window.ok()) return window.status();
  Result<Duration> step = ParseParam(head, "step", q.step);
  if (!step.ok()) return step.status();
  if (*window < kMinute || *window > std::chrono::days(7) || window->count() % kMinute.count()) {
    return Status::InvalidArgument("window: must be whole minutes from 1m to 7d", "window");
  }
  if (*step < kMinute || *step > *window || step->count() % kMinute.count()) {
    return Status::InvalidArgument("step: must be whole minutes from 1m to the window", "step");
  }
  if (*window / *step > 1440) {
    return Status::InvalidArgument("step: at most 1440 steps per window (use a larger step)",
                                   "step");
  }
  q.window = *window;
  q.step = *step;
  return q;
}

std::pair<TimePoint, TimePoint> StatsRange(const StatsQuery& q, TimePoint now) {
  // Steps end at the minute after now, so the current (partial) minute is in the last step.
  const TimePoint until = std::chrono::floor<std::chrono::minutes>(now) + kMinute;
  const int64_t steps = (q.window + q.step - Duration(1)) / q.step;
  return {until - q.step * steps, until};
}

json::object StatsToJson(const StatsQuery& q, TimePoint now,
                         const std::vector<store::StatsRow>& rows, int64_t due_count,
                         std::optional<TimePoint> oldest_due) {
  const auto [since, until] = StatsRange(q, now);
  const int64_t steps = (until - since) / q.step;
  std::vector<Counts> points(static_cast<size_t>(steps));
  Counts totals;
  std::map<std::string, Counts> per_destination;
  for (const store::StatsRow& r : rows) {
    const TimePoint t{std::chrono::minutes(r.minute)};
    if (t < since || t >= until) continue;
    points[static_cast<size_t>((t - since) / q.step)].Add(r);
    totals.Add(r);
    if (!r.destination.empty()) per_destination[r.destination].Add(r);
  }
  json::array pts;
  for (int64_t i = 0; i < steps; ++i) {
    json::object o = points[static_cast<size_t>(i)].ToJson();
    o.emplace("at", FormatRfc3339(since + q.step * i));
    pts.push_back(std::move(o));
  }
  json::array dests;
  for (const auto& [name, c] : per_destination) {
    json::object o = c.ToJson();
    o.erase("received");
    o.emplace("name", name);
    dests.push_back(std::move(o));
  }
  json::object due{{"count", due_count}};
  if (oldest_due) {
    due["oldest_due_at"] = FormatRfc3339(*oldest_due);
  } else {
    due["oldest_due_at"] = nullptr;
  }
  return json::object{{"window", FormatDuration(q.window)}, {"step", FormatDuration(q.step)},
                      {"since", FormatRfc3339(since)},      {"until", FormatRfc3339(until)},
                      {"points", std::move(pts)},           {"totals", totals.ToJson()},
                      {"destinations", std::move(dests)},   {"due", std::move(due)}};
}

}  // namespace hookrelay::api
