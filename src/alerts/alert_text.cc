#include "alerts/alert_text.h"

#include <boost/json.hpp>

#include "common/time_format.h"
#include "common/units.h"

namespace hookrelay::alerts {

namespace json = boost::json;

namespace {

// `s` as the end of a sentence: a final '.' added unless it already ends in punctuation.
std::string Sentence(std::string_view s) {
  std::string out(s);
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  if (!out.empty() && out.back() != '.' && out.back() != '!' && out.back() != '?') out += '.';
  return out;
}

// "14:05:31 UTC" when `t` falls on the same UTC day as `ref`, else the full FormatUtc.
std::string FormatUtcNear(TimePoint t, TimePoint ref) {
  std::string full = FormatUtc(t);
  if (full.substr(0, 10) == FormatUtc(ref).substr(0, 10)) return full.substr(11);
  return full;
}

std::string Times(int64_t n) { return n == 1 ? "once" : std::to_string(n) + " times"; }

// "at X" for one occurrence; "N times in the last 5m; the latest at X" for repeats.
std::string When(const Alert& a, Duration window) {
  if (a.count <= 1) return "at " + FormatUtc(a.at);
  return Times(a.count) + " in the last " + FormatDuration(window) + "; the latest at " +
         FormatUtc(a.at);
}

std::string BreakerOpened(const Alert& a, Duration window) {
  const std::string& d = a.destination;
  std::string s = "The circuit breaker for destination " + d + " opened " + When(a, window);
  s += a.reason.empty() ? ".\n" : " after " + Sentence(a.reason) + "\n";
  s += "No requests will be sent to " + d + " until ";
  s += a.until ? FormatUtcNear(*a.until, a.at) : std::string("the breaker closes");
  s += "; deliveries wait as paused and spend no attempts. Then a single probe request goes out: "
       "if it succeeds the breaker closes and deliveries resume, slowly at first; if it fails "
       "the breaker opens again, for longer.\n\n";
  s += "What to do: check the endpoint's health and logs. Once it is fixed you can close the "
       "breaker at once instead of waiting: POST /api/v1/destinations/" +
       d + "/reset-breaker\n";
  return s;
}

std::string BreakerClosed(const Alert& a, Duration window) {
  const std::string& d = a.destination;
  std::string s = "The circuit breaker for destination " + d + " closed " + When(a, window);
  s += a.reason.empty() ? ".\n" : ": " + Sentence(a.reason) + "\n";
  s += "Requests to " + d +
       " resume: paused deliveries are scheduled again and concurrency ramps up from 1.\n";
  if (a.count > 1) {
    s += "\nThe breaker is flapping: the endpoint recovers and fails again. Check its capacity "
         "and logs.\n";
  } else {
    s += "\nNothing to do unless it opens again.\n";
  }
  return s;
}

std::string DeliveriesFailed(const Alert& a, Duration window) {
  const std::string& d = a.destination;
  std::string s;
  if (a.count == 1) {
    s = "1 delivery to " + d + " failed permanently at " + FormatUtc(a.at) + ".\n";
  } else {
    s = std::to_string(a.count) + " deliveries to " + d + " failed permanently in the last " +
        FormatDuration(window) + " (since " + FormatUtc(a.at) + ").\n";
  }
  if (!a.reason.empty()) s += "Last reason: " + Sentence(a.reason) + "\n";
  if (a.sample_reasons.size() > 1) {
    s += "Reasons seen:\n";
    for (const auto& r : a.sample_reasons) s += "  - " + r + "\n";
  }
  s += "\nhookrelay will not retry ";
  s += a.count == 1 ? "it" : "them";
  s += " again on its own; the events are kept for the destination's replay window.\n";
  s += "Fix the endpoint, then replay ";
  s += a.count == 1 ? "it" : "them";
  s += ": hookrelay replay --status failed --destination " + d + "\n";
  return s;
}

std::string Paused(const Alert& a, Duration window) {
  const std::string& d = a.destination;
  std::string s = "Destination " + d + " was paused " + When(a, window);
  s += a.reason.empty() ? ".\n" : ": " + Sentence(a.reason) + "\n";
  s += "Nothing is sent to " + d +
       " while it is paused; its deliveries wait as paused and spend no attempts.\n\n";
  s += "What to do: fix the endpoint, then resume it: POST /api/v1/destinations/" + d +
       "/resume (deliveries then restart slowly).\n";
  return s;
}

std::string Resumed(const Alert& a, Duration window) {
  const std::string& d = a.destination;
  std::string s = "Destination " + d + " was resumed " + When(a, window);
  s += a.reason.empty() ? ".\n" : ": " + Sentence(a.reason) + "\n";
  s += "Waiting deliveries are sent again, slowly at first while concurrency ramps up.\n";
  return s;
}

std::string Stalled(const Alert& a, Duration window) {
  const std::string& d = a.destination;
  std::string s = "Deliveries to " + d + " are stalled (reported " + When(a, window) + ")";
  s += a.reason.empty() ? ".\n" : ": " + Sentence(a.reason) + "\n";
  s += "Due deliveries are not being sent or not completing.\n\n";
  s += "What to do: check that hookrelay is healthy (GET /healthz, /metrics) and whether " + d +
       "'s endpoint hangs until the timeout.\n";
  return s;
}

}  // namespace

std::string_view AlertKindName(Alert::Kind kind) {
  switch (kind) {
    case Alert::Kind::kBreakerOpened: return "breaker_opened";
    case Alert::Kind::kBreakerClosed: return "breaker_closed";
    case Alert::Kind::kDeliveriesFailed: return "deliveries_failed";
    case Alert::Kind::kDestinationPaused: return "destination_paused";
    case Alert::Kind::kDestinationResumed: return "destination_resumed";
    case Alert::Kind::kStalled: return "stalled";
  }
  return "unknown";
}

std::string FormatUtc(TimePoint t) {
  std::string s = FormatRfc3339(t, /*with_millis=*/false);  // 2026-11-30T14:05:31Z
  if (s.size() == 20 && s[10] == 'T' && s.back() == 'Z') {
    s[10] = ' ';
    s.pop_back();
    s += " UTC";
  }
  return s;
}

std::string AlertSubject(const Alert& a) {
  std::string what;
  switch (a.kind) {
    case Alert::Kind::kBreakerOpened: what = "circuit breaker opened"; break;
    case Alert::Kind::kBreakerClosed: what = "circuit breaker closed"; break;
    case Alert::Kind::kDeliveriesFailed:
      what = a.count == 1 ? "1 delivery failed" : std::to_string(a.count) + " deliveries failed";
      break;
    case Alert::Kind::kDestinationPaused: what = "destination paused"; break;
    case Alert::Kind::kDestinationResumed: what = "destination resumed"; break;
    case Alert::Kind::kStalled: what = "deliveries stalled"; break;
  }
  if (a.kind != Alert::Kind::kDeliveriesFailed && a.count > 1) what += " (" + Times(a.count) + ")";
  return "[hookrelay] " + a.destination + ": " + what;
}

std::string AlertBody(const Alert& a, Duration window) {
  switch (a.kind) {
    case Alert::Kind::kBreakerOpened: return BreakerOpened(a, window);
    case Alert::Kind::kBreakerClosed: return BreakerClosed(a, window);
    case Alert::Kind::kDeliveriesFailed: return DeliveriesFailed(a, window);
    case Alert::Kind::kDestinationPaused: return Paused(a, window);
    case Alert::Kind::kDestinationResumed: return Resumed(a, window);
    case Alert::Kind::kStalled: return Stalled(a, window);
  }
  return {};
}

json::object AlertToJson(const Alert& a, Duration window) {
  json::array samples;
  for (const auto& r : a.sample_reasons) samples.emplace_back(r);
  json::object o{
      {"kind", AlertKindName(a.kind)},
      {"destination", a.destination},
      {"at", FormatRfc3339(a.at)},
      {"reason", a.reason},
      {"count", a.count},
      {"until", nullptr},
      {"sample_reasons", std::move(samples)},
      {"subject", AlertSubject(a)},
      {"text", AlertBody(a, window)},
  };
  if (a.until) o["until"] = FormatRfc3339(*a.until);
  return o;
}

}  // namespace hookrelay::alerts
