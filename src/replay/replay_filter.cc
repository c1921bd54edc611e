#include "replay/replay_filter.h"

#include <boost/json.hpp>

#include "common/time_format.h"

namespace hookrelay::replay {

namespace json = boost::json;

namespace {

Result<std::string> StringField(const json::value& v, std::string_view name) {
  if (!v.is_string()) {
    return Status::InvalidArgument(std::string(name) + ": must be a string", std::string(name));
  }
  return std::string(v.get_string());
}

Result<TimePoint> TimeField(const json::value& v, std::string_view name) {
  Result<std::string> s = StringField(v, name);
  if (!s.ok()) return s.status();
  std::optional<TimePoint> t = ParseRfc3339(*s);
  if (!t) {
    return Status::InvalidArgument(std::string(name) + ": must be an RFC 3339 time",
                                   std::string(name));
  }
  return *t;
}

}  // namespace

Result<ReplayFilter> ParseReplayFilter(std::string_view json_text) {
  boost::system::error_code ec;
  json::value v = json::parse(json_text, ec);
  if (ec || !v.is_object()) return Status::InvalidArgument("filter: must be a JSON object");
  ReplayFilter f;
  for (const auto& [key, value] : v.get_object()) {
    if (key == "status") {
      Result<std::string> s = StringField(value, "status");
      if (!s.ok()) return s.status();
      std::optional<store::DeliveryStatus> st = store::ParseDeliveryStatus(*s);
      if (!st) return Status::InvalidArgument("status: unknown status \"" + *s + "\"", "status");
      f.status = *st;
    } else if (key == "source" || key == "destination") {
      HR_ASSIGN_OR_RETURN((key == "source" ? f.source : f.destination), StringField(value, key));
    } else if (key == "since" || key == "until") {
      HR_ASSIGN_OR_RETURN((key == "since" ? f.since : f.until), TimeField(value, key));
    } else {
      return Status::InvalidArgument("unknown field \"" + std::string(key) + "\"",
                                     std::string(key));
    }
  }
  return f;
}

std::string ReplayFilterToJson(const ReplayFilter& f) {
  json::object o;
  o["status"] = store::DeliveryStatusName(f.status);
  if (f.source) o["source"] = *f.source;
  if (f.destination) o["destination"] = *f.destination;
  if (f.since) o["since"] = FormatRfc3339(*f.since);
  if (f.until) o["until"] = FormatRfc3339(*f.until);
  return json::serialize(o);
}

ReplayFilter AsOfJob(ReplayFilter filter, TimePoint job_created_at) {
  const TimePoint bound = job_created_at + std::chrono::milliseconds(1);  // until is exclusive
  if (!filter.until || *filter.until > bound) filter.until = bound;
  return filter;
}

store::EventFilter ToEventFilter(const ReplayFilter& f) {
  store::EventFilter e;
  e.status = f.status;
  e.source = f.source;
  e.destination = f.destination;
  e.since = f.since;
  e.until = f.until;
  return e;
}

}  // namespace hookrelay::replay
