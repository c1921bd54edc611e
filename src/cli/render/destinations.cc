#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/render.h"
#include "cli/render/render_internal.h"
#include "cli/wrap.h"
#include "common/time_format.h"
#include "delivery/ssrf.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

// "closed", "open until 14:05:31, in 3m", "half_open, probe sent 14:15:31, 2m ago"; with the
// failure count when there is one. open_until counts only while open: an older server also sent
// it for half_open, where it is the past end of the open period.
std::string BreakerText(const json::object* b, TimePoint now, bool with_details) {
  if (!b) return "-";
  const std::string state = Text(*b, "state");
  std::string out = state;
  // The detail names the zone; the list is short: "open (in 10m)", "half_open (probe 2m ago)".
  auto add_time = [&](std::string_view field, std::string_view detail, std::string_view list) {
    const json::value* v = Field(*b, field);
    std::optional<TimePoint> t = v->is_string() ? ParseRfc3339(v->get_string()) : std::nullopt;
    if (!t) {
      out += std::string(detail) + Text(v);
    } else if (with_details) {
      out += std::string(detail) + FormatLocalAndRelative(*t, now, /*with_zone=*/true);
    } else {
      out += " (" + std::string(list) + FormatRelative(*t, now) + ")";
    }
  };
  if (state == "open" && Present(*b, "open_until")) add_time("open_until", " until ", "");
  if (state == "half_open" && Present(*b, "probe_sent_at")) {
    add_time("probe_sent_at", ", probe sent ", "probe ");
  }
  if (with_details) {
    const json::value* failures = Field(*b, "consecutive_failures");
    if (failures && failures->is_number()) {
      out += "; " + Plural(failures->to_number<int64_t>(), "consecutive failure");
    }
    const json::value* trips = Field(*b, "trips");
    if (trips && trips->is_number()) {
      out += "; tripped " + Plural(trips->to_number<int64_t>(), "time");
    }
  }
  return out;
}

// The breaker's settings ("breaker_settings"), for `destinations show`: "opens after 20
// consecutive failures, for 10m, 30m, 2h (the last repeats; from the first again after 1d
// closed)"; "" when the server did not say.
std::string BreakerSettingsText(const json::object* b) {
  if (!b) return "";
  const json::value* threshold = Field(*b, "threshold");
  const json::value* open = Field(*b, "open");
  if (!threshold || !threshold->is_number() || !open || !open->is_array()) return "";
  std::string out =
      "opens after " + Plural(threshold->to_number<int64_t>(), "consecutive failure") + ", for ";
  bool first = true;
  for (const json::value& p : open->get_array()) {
    out += (first ? "" : ", ") + Text(&p);
    first = false;
  }
  if (open->get_array().size() > 1) {
    out += " (the last repeats";
    if (Present(*b, "escalation_reset")) {
      out += "; from the first again after " + Text(*b, "escalation_reset") + " closed";
    }
    out += ")";
  }
  return out;
}

// The rest of a policy, for `destinations show`: "delays 5m, 30m (the last repeats); jitter
// none; cap 1d" or "base 1m; jitter equal; cap 30m"; "" when the server did not say.
std::string PolicyDetailText(const json::object* p) {
  if (!p || !Present(*p, "jitter")) return "";
  std::string out;
  const json::value* delays = Field(*p, "delays");
  if (delays && delays->is_array() && !delays->get_array().empty()) {
    out = "delays ";
    bool first = true;
    for (const json::value& d : delays->get_array()) {
      out += (first ? "" : ", ") + Text(&d);
      first = false;
    }
    out += " (the last repeats)";
  } else if (Present(*p, "base")) {
    out = "base " + Text(*p, "base");
  }
  out += (out.empty() ? "" : "; ") + std::string("jitter ") + Text(*p, "jitter");
  if (Present(*p, "cap")) out += "; cap " + Text(*p, "cap");
  return out;
}

std::string PolicyText(const json::object* p) {
  if (!p) return "-";
  std::string out = Present(*p, "preset") ? Text(*p, "preset") : "custom";
  out += ": " + Text(*p, "strategy") + ", " + Text(*p, "max_attempts") +
         (Text(*p, "max_attempts") == "1" ? " attempt" : " attempts");
  if (Present(*p, "max_duration") && Text(*p, "max_duration") != "0s") {
    out += " within " + Text(*p, "max_duration");
  }
  out += ", timeout " + Text(*p, "timeout");
  return out;
}

std::string PausedText(const json::object& d) {
  const json::value* p = Field(d, "paused");
  if (!p || !p->is_bool()) return "-";
  if (!p->get_bool()) return "active";
  return Present(d, "paused_reason") ? "paused (" + Text(d, "paused_reason") + ")" : "paused";
}

// The STATE cell of `destinations list`: "active", "paused (410 Gone)" — the reason only when
// a short one fits in `width` (`destinations show` has it whole), never "paused (paused: …".
std::string PausedCell(const json::object& d, size_t width) {
  const json::value* p = Field(d, "paused");
  if (!p || !p->is_bool()) return "-";
  if (!p->get_bool()) return "active";
  std::string reason = Present(d, "paused_reason") ? Text(d, "paused_reason") : "";
  if (reason.rfind("paused", 0) == 0) {
    reason.erase(0, 6);
    while (!reason.empty() && (reason.front() == ':' || reason.front() == ' ')) reason.erase(0, 1);
  }
  // The engine's "the endpoint answered 410 Gone; fix it, then resume": the status is the gist.
  if (size_t at = reason.find("answered "); at != std::string::npos) {
    reason = reason.substr(at + 9);
  }
  reason = reason.substr(0, reason.find(';'));
  const std::string cell = "paused (" + reason + ")";
  return !reason.empty() && DisplayWidth(cell) <= width ? cell : "paused";
}

// Where a time in a paused reason is rendered like every other time.
std::string PausedText(const json::object& d, TimePoint now) {
  return LocalizeTimes(PausedText(d), now);
}

// The host of `url` when the sender refuses it without allow_private (IsRefusedLiteralHost),
// else "" (a name may still resolve to such an address; only the sender can tell).
std::string RefusedLiteralHost(const std::string& url) {
  auto u = boost::urls::parse_absolute_uri(url);
  if (!u) return "";
  const std::string host = u->host_address();
  return delivery::IsRefusedLiteralHost(host) ? host : "";
}

// An ordered destination's "ordered" line and its held queues ("held" of the destination's GET):
//   ordered      per key, from the header X-Shop
//   held         key "a": 2 held behind 01J… since 14:02:11, 3m ago (scheduled, attempt 3
//                of 100, next retry 14:05:00, in 40s)
// "" for an unordered destination with nothing held.
std::string OrderedText(const json::object& d, TimePoint now, size_t width) {
  std::string out;
  const json::value* ordered = Field(d, "ordered");
  if (ordered && ordered->is_bool() && ordered->get_bool()) {
    std::string how = "the whole destination, one event at a time";
    if (const json::object* key = Object(d, "order_key")) {
      how = Present(*key, "header") ? "per key, from the header " + Text(*key, "header")
                                    : "per key, from the body's " + Text(*key, "json");
    }
    out += "  ordered      " + how + "\n";
  }
  const json::object* held = Object(d, "held");
  const json::value* queues = held ? Field(*held, "queues") : nullptr;
  if (!queues || !queues->is_array() || queues->get_array().empty()) return out;
  std::string first = "  held         ";
  for (const json::value& v : queues->get_array()) {
    if (!v.is_object()) continue;
    const json::object& q = v.get_object();
    const std::string key = Text(q, "order_key");
    std::string line = key.empty() ? "the destination's queue" : "key \"" + Escaped(key) + "\"";
    const json::object* h = Object(q, "head");
    line += ": " + Text(q, "waiting") + " held behind " + (h ? Text(*h, "event") : "-") +
            " since " + FormatApiTime(Field(q, "waiting_since"), now);
    if (h) {
      line += " (" + Text(*h, "status") + ", attempt " + Text(*h, "attempt") + " of " +
              Text(*h, "max_attempts");
      if (Present(*h, "next_attempt_at")) {
        line += ", next " + std::string(Text(*h, "attempt") == "0" ? "attempt " : "retry ") +
                FormatApiTime(Field(*h, "next_attempt_at"), now);
      }
      line += ")";
    }
    out += Wrap(line, first, 15, width);
    first = std::string(15, ' ');
  }
  const json::value* total = Field(*held, "total");
  if (total && total->is_int64() &&
      total->get_int64() > static_cast<int64_t>(queues->get_array().size())) {
    out += first + "and " +
           Plural(total->get_int64() - static_cast<int64_t>(queues->get_array().size()),
                  "more queue") +
           " held\n";
  }
  return out;
}

}  // namespace

std::string RenderDestinationList(const json::array& items, TimePoint now, size_t width) {
  if (items.empty()) return "No destinations.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& d = v.get_object();
    const json::object* b = Object(d, "breaker");
    rows.push_back({Text(d, "name"), PausedCell(d, 20), BreakerText(b, now, false),
                    b ? Text(*b, "consecutive_failures") : "-", Text(d, "url")});
  }
  // The URL goes last and is cut in the middle to what is left of the width (at least 20), so
  // the table reads in a terminal; `show` and --json have it whole, and the concurrency.
  const std::vector<std::string> header = {"NAME", "STATE", "BREAKER", "FAILURES", "URL"};
  size_t used = 0;
  for (size_t i = 0; i + 1 < header.size(); ++i) {
    size_t w = header[i].size();
    for (const auto& row : rows) w = std::max(w, row[i].size());
    used += w + 2;
  }
  const size_t url_width = used + 20 < width ? width - used : 20;
  for (auto& row : rows) row.back() = CutUrl(row.back(), url_width);
  return Table(header, rows);
}

std::string RenderDestinationDetail(const json::object& d, TimePoint now, size_t width) {
  std::ostringstream out;
  out << "Destination " << Text(d, "name") << "\n";
  out << "  url          " << Text(d, "url") << "\n";
  const json::value* allow = Field(d, "allow_private");
  if (const std::string host = RefusedLiteralHost(Text(d, "url"));
      !host.empty() && !(allow && allow->is_bool() && allow->get_bool())) {
    out << "  note         " << host
        << " is a loopback or private address: deliveries to it\n"
           "               are refused unless the destination allows it\n"
           "               (--allow-private) or the server runs with\n"
           "               --allow-private-destinations\n";
  }
  out << "  state        " << PausedText(d, now) << "\n";
  out << Wrap(BreakerText(Object(d, "breaker"), now, true), "  breaker      ", 15, width);
  if (std::string settings = BreakerSettingsText(Object(d, "breaker_settings"));
      !settings.empty()) {
    out << Wrap(settings, std::string(15, ' '), 15, width);
  }
  out << "  concurrency  " << Text(d, "allowed_concurrency") << " allowed of "
      << Text(d, "max_concurrency") << " max";
  if (Present(d, "in_flight")) out << ", " << Text(d, "in_flight") << " in flight";
  out << "\n";
  if (const json::object* latency = Object(d, "latency")) {
    out << "  latency      "
        << (Present(*latency, "p50_ms")
                ? "p50 " + Text(*latency, "p50_ms") + " ms, p99 " + Text(*latency, "p99_ms") +
                      " ms (last " + Text(*latency, "samples") + " attempts)"
                : std::string("no attempt timed yet"))
        << "\n";
  }
  out << Wrap(PolicyText(Object(d, "policy")), "  policy       ", 15, width);
  if (std::string more = PolicyDetailText(Object(d, "policy")); !more.empty()) {
    if (Present(d, "replay_window")) more += "; replay window " + Text(d, "replay_window");
    out << Wrap(more, std::string(15, ' '), 15, width);
  }
  out << "  rate limit   " << (Present(d, "rate_limit") ? Text(d, "rate_limit") : "none") << "\n";
  out << OrderedText(d, now, width);
  const json::value* secret = Field(d, "signing_secret_set");
  std::string signing =
      secret && secret->is_bool() ? (secret->get_bool() ? "secret set" : "none") : "-";
  if (const json::object* rotation = Object(d, "signing_secret_rotation")) {
    signing += "; rotating: the previous secret also signs until " +
               FormatApiTime(Field(*rotation, "old_expires_at"), now);
  }
  out << Wrap(signing, "  signing      ", 15, width);
  if (const json::object* tls = Object(d, "tls")) {
    if (const json::object* cert = Object(*tls, "client_cert")) {
      out << "  client cert  " << Text(*cert, "subject") << ", issued by " << Text(*cert, "issuer")
          << ",\n               expires " << Text(*cert, "not_after") << "; key "
          << (Text(*tls, "client_key_set") == "yes" ? "set (write-only)" : "not set") << "\n";
    }
    if (const json::object* ca = Object(*tls, "ca_file")) {
      std::string subjects;
      if (const json::value* list = Field(*ca, "subjects"); list && list->is_array()) {
        for (const json::value& n : list->get_array()) {
          subjects += (subjects.empty() ? "" : ", ") + Text(&n);
        }
      }
      out << "  trusts       " << subjects << " (not the system's CAs)\n";
    }
  }
  if (const json::object* auth = Object(d, "auth")) {
    out << "  auth         " << Text(*auth, "type")
        << (Present(*auth, "username") ? " as " + Text(*auth, "username") : "")
        << " (write-only)\n";
  }
  if (const json::object* headers = Object(d, "headers"); headers && !headers->empty()) {
    out << "  headers     ";
    bool first = true;
    for (const auto& [k, v] : *headers) {
      out << (first ? " " : "               ") << std::string(k) << ": "
          << (v.is_string() ? std::string(v.get_string()) : "-") << "\n";
      first = false;
    }
  }
  if (const json::value* f = Field(d, "forward_headers")) {
    std::string text;
    if (f->is_string()) text = std::string(f->get_string());
    if (f->is_array()) {
      for (const json::value& n : f->get_array()) text += (text.empty() ? "" : ", ") + Text(&n);
      if (text.empty()) text = "(an empty list)";
    }
    out << "  forwards     "
        << (text == "all"    ? "all received headers"
            : text == "none" ? "no received headers"
                             : "received " + text)
        << "\n";
  }
  out << "  defined      " << OriginText(d) << "\n";
  return out.str();
}

}  // namespace hookrelay::cli
