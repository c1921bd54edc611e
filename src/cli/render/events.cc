#include <algorithm>
#include <boost/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/render.h"
#include "cli/render/render_internal.h"
#include "cli/wrap.h"
#include "common/crypto.h"
#include "common/time_format.h"
#include "common/units.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

// A response snippet in one table cell: at most `width` characters, control characters and
// backslashes escaped (\n, \x1b), "…" when cut. A snippet that is not UTF-8 (sent as base64) is
// decoded and its bytes past ASCII escaped too (\xff), so mostly-text bodies stay readable.
std::string SnippetCell(const json::object& a, size_t width = 60) {
  const json::value* v = Field(a, "response_snippet");
  if (!v || !v->is_string() || v->get_string().empty()) return "-";
  std::string raw(v->get_string());
  const bool binary = Text(a, "response_snippet_encoding") == "base64";
  if (binary) {
    auto decoded = Base64Decode(raw);
    if (!decoded) return "(not base64)";
    raw = std::move(*decoded);
  }
  std::string out = Escaped(raw, binary);
  // Cut by characters (UTF-8 continuation bytes do not count), keeping whole characters.
  size_t chars = 0, cut = out.size();
  for (size_t i = 0; i < out.size(); ++i) {
    if ((static_cast<unsigned char>(out[i]) & 0xc0) == 0x80) continue;
    if (chars == width - 1) cut = i;
    ++chars;
  }
  if (chars > width) out = out.substr(0, cut) + "…";
  return out;
}

// "HTTP 500", "error: connection refused", or both.
std::string AttemptResult(const json::object& a) {
  std::string out;
  if (Present(a, "status_code")) out = "HTTP " + Text(a, "status_code");
  if (Present(a, "error"))
    out += (out.empty() ? "" : ", ") + std::string("error: ") + Text(a, "error");
  if (out.empty()) out = "-";
  // The breaker's half-open probe: a failed one did not spend one of the event's attempts.
  if (const json::value* probe = Field(a, "probe"); probe && probe->is_bool() && probe->as_bool()) {
    const json::value* counted = Field(a, "counted");
    out += counted && counted->is_bool() && !counted->as_bool() ? " (breaker probe, not counted)"
                                                                : " (breaker probe)";
  }
  return out;
}

// A delivery's status with what holds it back when paused (the API's paused_by): "paused (breaker
// open until 09:02)" ("paused (breaker)" without `with_time`), "paused (by operator)", "paused
// (410 Gone)", "paused (in config)"; the status alone otherwise.
std::string StatusWithCause(const json::object& d, TimePoint now, bool with_time = true) {
  const std::string status = Text(d, "status");
  const json::value* by = Field(d, "paused_by");
  if (status != "paused" || !by || !by->is_string()) return status;
  if (by->get_string() == "breaker") {
    if (!with_time) return "paused (breaker)";
    const json::value* until = Field(d, "breaker_open_until");
    if (until && until->is_string()) {
      if (std::optional<TimePoint> t = ParseRfc3339(until->get_string())) {
        return "paused (breaker open until " + LocalClock(*t, now, /*seconds=*/false) + ")";
      }
    }
    return "paused (breaker half-open)";
  }
  if (by->get_string() == "operator") return "paused (by operator)";
  if (by->get_string() == "gone") return "paused (410 Gone)";
  if (by->get_string() == "config") return "paused (in config)";
  return status;
}

// Each destination's current status (its latest chain) by its real name, in at most `width`
// characters, naming which destination is in which state as long as that fits: "billing
// delivered, crm paused (breaker open until 09:02)"; else grouped, failures first (a breaker's
// time left out): "failed: brk, flaky; delivered: okd"; else only the failed and paused named:
// "failed: brk, flaky; 1 delivered"; else counted: "1 failed, 1 paused (breaker), 1 delivered",
// "1 failed, 2 paused, 1 delivered"; else the failed and paused counted: "2 failed, 1 other".
std::string EventStatusCell(const json::array& deliveries, size_t width, TimePoint now) {
  std::string each;
  // Per status (with its cause): the destinations in it, in order of first appearance.
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const json::value& d : deliveries) {
    if (!d.is_object()) continue;
    const std::string status = StatusWithCause(d.get_object(), now, /*with_time=*/false);
    const std::string name = Text(d.get_object(), "destination");
    each += (each.empty() ? "" : ", ") + name + " " + StatusWithCause(d.get_object(), now);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == status; });
    if (it == groups.end()) {
      groups.push_back({status, {name}});
    } else {
      it->second.push_back(name);
    }
  }
  if (each.empty()) return "-";
  auto fits = [width](const std::string& text) { return DisplayWidth(text) <= width; };
  if (fits(each)) return each;
  // Failures first, then what is held back: they are what a reader looks for.
  auto rank = [](const std::string& status) {
    return status == "failed" ? 0 : status.rfind("paused", 0) == 0 ? 1 : 2;
  };
  std::stable_sort(groups.begin(), groups.end(),
                   [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  // `named`: the groups up to that rank list their destinations, the others are counted.
  auto summary = [&](int named) {
    std::string out;
    for (const auto& [status, names] : groups) {
      out += out.empty() ? "" : (rank(status) <= named ? "; " : ", ");
      if (rank(status) <= named) {
        out += status + ":";
        for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : " ") + names[i];
      } else {
        out += std::to_string(names.size()) + " " + status;
      }
    }
    return out;
  };
  for (int named : {2, 1, -1}) {
    if (std::string text = summary(named); fits(text)) return text;
  }
  // Counted by the bare status ("2 paused" whatever holds them), in the same order; then the
  // failed and paused counted and the rest as "other".
  std::vector<std::pair<std::string, size_t>> bare;
  for (const auto& [status, names] : groups) {
    const std::string name = status.substr(0, status.find(" ("));
    auto it =
        std::find_if(bare.begin(), bare.end(), [&](const auto& b) { return b.first == name; });
    if (it == bare.end()) {
      bare.emplace_back(name, names.size());
    } else {
      it->second += names.size();
    }
  }
  std::string all, out;
  size_t others = 0;
  for (const auto& [status, n] : bare) {
    all += (all.empty() ? "" : ", ") + std::to_string(n) + " " + status;
    if (rank(status) < 2) {
      out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + status;
    } else {
      others += n;
    }
  }
  if (fits(all)) return all;
  if (others > 0) out += (out.empty() ? "" : ", ") + std::to_string(others) + " other";
  return Cut(out, width);
}

// A delivery's attempts, one row each, within `width` (indented by 4): RETRY-AFTER and RESPONSE
// only when an attempt has one; past the width the widest of the start, the result, the
// Retry-After and the response is cut at its end ("…"), a character at a time (the delivery's
// reason above and `--json` have them whole).
std::string AttemptsTable(const json::array& attempts, TimePoint now, size_t width) {
  std::vector<std::string> header = {"#",        "STARTED",     "RESULT",
                                     "DURATION", "RETRY-AFTER", "RESPONSE"};
  std::vector<std::vector<std::string>> rows;
  for (const json::value& av : attempts) {
    if (!av.is_object()) continue;
    const json::object& a = av.get_object();
    const json::value* ms = Field(a, "duration_ms");
    std::string duration =
        ms && ms->is_number() ? FormatDurationRounded(Duration(ms->to_number<int64_t>())) : "-";
    rows.push_back({Text(a, "n"), FormatApiTime(Field(a, "started_at"), now), AttemptResult(a),
                    duration, Text(a, "retry_after"), SnippetCell(a)});
  }
  for (size_t column : {size_t{5}, size_t{4}}) {  // from the last, so indices stay valid
    const bool any = std::any_of(rows.begin(), rows.end(),
                                 [column](const auto& row) { return row[column] != "-"; });
    if (any) continue;
    header.erase(header.begin() + static_cast<std::ptrdiff_t>(column));
    for (auto& row : rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(column));
  }
  std::vector<size_t> shrinkable = {1, 2};  // STARTED, RESULT, and RETRY-AFTER, RESPONSE
  for (size_t i = 4; i < header.size(); ++i) shrinkable.push_back(i);
  FitColumns(header, rows, width > 4 ? width - 4 : width, shrinkable, shrinkable);
  return Table(header, rows, "    ");
}

}  // namespace

// The widest TYPE cell of the event list: "customer.subscription.updated" is 29 characters.
constexpr size_t kTypeCell = 24;

std::string RenderEventList(const json::array& items, TimePoint now, size_t width) {
  if (items.empty()) return "No events.\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<const json::array*> deliveries;
  std::vector<size_t> unrouted;  // rows of events no route took (and not replayed since)
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& e = v.get_object();
    const json::value* ds = Field(e, "deliveries");
    deliveries.push_back(ds && ds->is_array() ? &ds->get_array() : nullptr);
    const json::value* type = Field(e, "type");
    // A long type gives way (`events show` and --json have it whole).
    rows.push_back({Text(e, "id"), Text(e, "source"),
                    type && type->is_string() ? Cut(Escaped(type->get_string()), kTypeCell) : "-",
                    FormatApiTime(Field(e, "received_at"), now), Bytes(Field(e, "size"))});
    const json::value* routed = Field(e, "routed");
    if (routed && routed->is_bool() && !routed->get_bool() &&
        (!deliveries.back() || deliveries.back()->empty())) {
      deliveries.back() = nullptr;
      unrouted.push_back(rows.size() - 1);
    }
  }
  std::vector<std::string> header = {
      "ID", "SOURCE", "TYPE", "RECEIVED (" + LocalZoneName(now) + ")", "SIZE", "STATUS"};
  // No event with a type (a source whose scheme has none): the column would only take the
  // STATUS column's room.
  if (std::all_of(rows.begin(), rows.end(), [](const auto& row) { return row[2] == "-"; })) {
    header.erase(header.begin() + 2);
    for (auto& row : rows) row.erase(row.begin() + 2);
  }
  // STATUS goes last, in what is left of the width (at least 14).
  size_t used = 0;
  for (size_t i = 0; i + 1 < header.size(); ++i) {
    size_t w = DisplayWidth(header[i]);
    for (const auto& row : rows) w = std::max(w, DisplayWidth(row[i]));
    used += w + 2;
  }
  const size_t status_width = used + 14 < width ? width - used : 14;
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool no_route = std::find(unrouted.begin(), unrouted.end(), i) != unrouted.end();
    rows[i].push_back(no_route        ? "unrouted (no route took it)"
                      : deliveries[i] ? EventStatusCell(*deliveries[i], status_width, now)
                                      : "-");
  }
  return Table(header, rows);
}

// "Routes:" and one line per route of the event's source: "+ stripe:billing → billing" for one
// that took it, "- stripe:crm → crm: body.livemode: expected true, got false" for one that did
// not (the reason wrapped under it). Empty when the detail has no routes.
std::string RenderRouteVerdicts(const json::object& event, size_t width) {
  const json::value* routes = Field(event, "routes");
  if (!routes || !routes->is_array() || routes->get_array().empty()) return "";
  std::string out = "\nRoutes\n";
  for (const json::value& v : routes->get_array()) {
    if (!v.is_object()) continue;
    const json::object& r = v.get_object();
    const json::value* matched = Field(r, "matched");
    const bool took = matched && matched->is_bool() && matched->get_bool();
    const json::value* id = Field(r, "route");
    std::string line = std::string(took ? "  took it      " : "  did not      ") +
                       (id && id->is_string() ? Escaped(id->get_string()) : "(route gone)") +
                       " -> " + Text(r, "destination");
    out += line + "\n";
    if (!took) out += Wrap(Escaped(Text(r, "reason")), std::string(16, ' '), 16, width);
  }
  return out;
}

std::string RenderEventDetail(const json::object& event, TimePoint now, size_t width) {
  std::ostringstream out;
  out << "Event " << Text(event, "id") << "\n";
  out << "  source    " << Text(event, "source") << "\n";
  out << "  received  " << FormatApiTime(Field(event, "received_at"), now, /*with_zone=*/true)
      << "\n";
  out << "  size      " << Bytes(Field(event, "size")) << "\n";
  const json::value* type = Field(event, "type");
  out << "  type      " << (type && type->is_string() ? Escaped(type->get_string()) : "none")
      << "\n";
  out << RenderRouteVerdicts(event, width);
  const json::value* deliveries = Field(event, "deliveries");
  if (!deliveries || !deliveries->is_array() || deliveries->get_array().empty()) {
    out << "\nNo deliveries (no route took it; replay it with --destination once routed).\n";
    return out.str();
  }
  for (const json::value& dv : deliveries->get_array()) {
    if (!dv.is_object()) continue;
    const json::object& d = dv.get_object();
    out << "\nDelivery to " << Text(d, "destination");
    const json::value* chain = Field(d, "chain");
    if (chain && chain->is_number() && chain->to_number<int64_t>() > 0) {
      out << " (replay " << Text(chain) << ")";
    }
    out << ": " << StatusWithCause(d, now) << ", attempt " << Text(d, "attempt") << " of "
        << Text(d, "max_attempts") << "\n";
    if (Present(d, "next_attempt_at")) {
      out << "  next retry " << FormatApiTime(Field(d, "next_attempt_at"), now) << "\n";
    }
    // Ordered delivery: the queue it is in, and while it waits, the head it waits for.
    if (const json::value* key = Field(d, "order_key"); key && key->is_string()) {
      std::string line = key->get_string().empty()
                             ? std::string("ordered (whole destination)")
                             : "ordered (key \"" + Escaped(std::string(key->get_string())) + "\")";
      if (const json::value* held = Field(d, "held_behind"); held && held->is_object()) {
        const json::object& h = held->get_object();
        line += "; held behind " + Text(h, "event") + " (" + Text(h, "status") + ", attempt " +
                Text(h, "attempt");
        if (Present(h, "next_attempt_at")) {
          line += ", next retry " + FormatApiTime(Field(h, "next_attempt_at"), now);
        }
        line += ")";
      }
      out << Wrap(line, "  ", 2, width);
    }
    // The deadline matters only while the delivery can still be tried.
    const std::string status = Text(d, "status");
    if (Present(d, "deadline") &&
        (status == "scheduled" || status == "delivering" || status == "paused")) {
      out << "  deadline " << FormatApiTime(Field(d, "deadline"), now) << "\n";
    }
    if (Present(d, "reason")) {
      out << Wrap(LocalizeTimes(Text(d, "reason"), now), "  reason: ", 10, width);
    } else if (Text(d, "status") == "failed") {
      out << "  reason: not recorded\n";
    }
    const json::value* attempts = Field(d, "attempts");
    if (attempts && attempts->is_array() && !attempts->get_array().empty()) {
      out << AttemptsTable(attempts->get_array(), now, width);
      // What a transform made an attempt send, under the table (one line per such attempt).
      for (const json::value& av : attempts->get_array()) {
        const json::object* a = av.if_object();
        const json::object* t = a ? Object(*a, "transformed") : nullptr;
        if (!t) continue;
        std::string changed;
        if (const json::value* h = Field(*t, "headers_changed"); h && h->is_array()) {
          for (const json::value& name : h->get_array()) {
            changed += (changed.empty() ? "" : ", ") + Escaped(Text(&name));
          }
        }
        const std::string sha = Text(*t, "body_sha256");
        out << Wrap("attempt " + Text(*a, "n") + " sent a transformed request: " +
                        Bytes(Field(*t, "body_size")) + " body, sha256 " + sha.substr(0, 12) +
                        "…, headers changed: " + (changed.empty() ? "none" : changed),
                    "    ", 6, width);
      }
    }
  }
  return out.str();
}

}  // namespace hookrelay::cli
