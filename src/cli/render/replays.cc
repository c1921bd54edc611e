#include <boost/json.hpp>
#include <string>
#include <vector>

#include "cli/render.h"
#include "cli/render/render_internal.h"
#include "cli/wrap.h"
#include "common/time_format.h"

namespace hookrelay::cli {

namespace json = boost::json;

std::string RenderWaiting(const json::value* waiting, TimePoint now) {
  if (!waiting || !waiting->is_object()) return "";
  const json::object& w = waiting->get_object();
  const std::string reason = Text(w, "reason");
  const std::string destination = Text(w, "destination");
  std::string out;
  if (reason == "breaker_open") {
    out = "breaker open on " + destination;
  } else if (reason == "destination_paused") {
    out = "destination " + destination + " is paused";
  } else if (Present(w, "message")) {
    return LocalizeTimes(Text(w, "message"), now);
  } else {
    out = reason;
  }
  const json::value* until = Field(w, "until");
  if (until && until->is_string()) {
    if (std::optional<TimePoint> t = ParseRfc3339(until->get_string())) {
      out += " until " + ClockInText(*t, now);  // HH:MM:SS, like every other time
    }
  }
  return out;
}

std::string RenderReplayResult(const json::object& result) {
  const json::value* replays = result.if_contains("replays");
  if (!replays || !replays->is_array() || replays->get_array().empty()) {
    return "Nothing replayed.\n";
  }
  const std::string event = Text(result, "event");
  std::string out;
  for (const json::value& v : replays->get_array()) {
    if (!v.is_object()) continue;
    const json::object& r = v.get_object();
    out += "Replayed " + event + " to " + Text(r, "destination") + " (chain " + Text(r, "chain") +
           ", delivery " + Text(r, "delivery_id") + ")\n";
  }
  return out;
}

}  // namespace hookrelay::cli
