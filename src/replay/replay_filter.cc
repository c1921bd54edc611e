#include "replay/replay_filter.h"

#include <boost/json.hpp>

#include "common/time_format.h"
#include "routing/type_pattern.h"

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
    } else if (key == "type") {
      HR_ASSIGN_OR_RETURN(f.type, StringField(value, "type"));
      HR_RETURN_IF_ERROR(routing::ValidateTypePattern(*f.type, "type"));
    } else if (key == "routed") {
      if (!value.is_bool()) {
        return Status::InvalidArgument("routed: must be true or false", "routed");
      }
      f.routed = value.get_bool();
    } else {
      return Status::InvalidArgument("unknown field \"" + std::string(key) + "\"",
                                     std::string(key));
    }
  }
  if (f.routed == false) {
    if (v.get_object().contains("status")) {
      return Status::InvalidArgument(
          "status: does not apply with routed false (events no route took have no deliveries)",
          "status");
    }
    if (!f.destination) {
      return Status::InvalidArgument(
          "destination: is required with routed false (where to send the events no route took)",
          "destination");
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
  if (f.type) o["type"] = *f.type;
  if (f.routed) {
    o["routed"] = *f.routed;
    if (!*f.routed) o.erase("status");
  }
  return json::serialize(o);
}

ReplayFilter AsOfJob(ReplayFilter filter, TimePoint job_created_at) {
  const TimePoint bound = job_created_at + std::chrono::milliseconds(1);  // until is exclusive
  if (!filter.until || *filter.until > bound) filter.until = bound;
  return filter;
}

store::EventFilter ToEventFilter(const ReplayFilter& f) {
  store::EventFilter e;
  e.source = f.source;
  e.since = f.since;
  e.until = f.until;
  e.type = f.type;
  e.routed = f.routed;
  if (f.routed != false) {  // unrouted events have no deliveries to filter by
    e.status = f.status;
    e.destination = f.destination;
  }
  return e;
}

}  // namespace hookrelay::replay
