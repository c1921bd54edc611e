#include "cli/render.h"

#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <string_view>
#include <vector>

#include "common/crypto.h"
#include "common/time_format.h"
#include "delivery/sender.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

const json::value* Field(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it == o.end() ? nullptr : &it->value();
}

// Null and missing fields are "-"; strings as they are; numbers plainly.
std::string Text(const json::value* v) {
  if (!v || v->is_null()) return "-";
  if (v->is_string()) return std::string(v->get_string());
  if (v->is_int64()) return std::to_string(v->get_int64());
  if (v->is_uint64()) return std::to_string(v->get_uint64());
  if (v->is_bool()) return v->get_bool() ? "yes" : "no";
  return json::serialize(*v);
}

std::string Text(const json::object& o, std::string_view key) { return Text(Field(o, key)); }

bool Present(const json::object& o, std::string_view key) {
  const json::value* v = Field(o, key);
  return v && !v->is_null();
}

const json::object* Object(const json::object& o, std::string_view key) {
  const json::value* v = Field(o, key);
  return v && v->is_object() ? &v->get_object() : nullptr;
}

// Columns left-aligned, two spaces apart, no trailing blanks.
std::string Table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows,
                  const std::string& indent = "") {
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l = indent;
    for (size_t i = 0; i < cells.size(); ++i) {
      l += cells[i];
      if (i + 1 < cells.size()) l += std::string(width[i] - cells[i].size() + 2, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
  return out;
}

// A span of time, truncated to seconds: its two largest non-zero units ("3m", "1h5m", "2d3h").
std::string Span(Duration d) {
  int64_t s = d.count() / 1000;
  struct Unit {
    int64_t seconds;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  std::string out;
  int parts = 0;
  for (const Unit& u : kUnits) {
    int64_t n = s / u.seconds;
    s %= u.seconds;
    if (parts > 0) ++parts;  // a zero unit after the first still uses up a place
    if (n == 0) continue;
    if (parts == 0) parts = 1;
    if (parts > 2) break;
    out += std::to_string(n) + u.suffix;
  }
  return out.empty() ? "0s" : out;
}

std::tm LocalTm(TimePoint t) {
  std::time_t secs = static_cast<std::time_t>(
      std::chrono::floor<std::chrono::seconds>(t).time_since_epoch().count());
  std::tm tm{};
  localtime_r(&secs, &tm);
  return tm;
}

std::string Bytes(const json::value* v) {
  if (!v || !(v->is_int64() || v->is_uint64())) return Text(v);
  return Text(v) + " B";
}

std::string Plural(int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// "closed", "open until 14:05:31, in 3m", "half_open"; with the failure count when there is one.
std::string BreakerText(const json::object* b, TimePoint now, bool with_details) {
  if (!b) return "-";
  std::string out = Text(*b, "state");
  if (Present(*b, "open_until")) out += " until " + FormatApiTime(Field(*b, "open_until"), now);
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
  std::string out;
  for (unsigned char c : raw) {
    std::string piece;
    if (c == '\n') {
      piece = "\\n";
    } else if (c == '\r') {
      piece = "\\r";
    } else if (c == '\t') {
      piece = "\\t";
    } else if (c == '\\') {
      piece = "\\\\";
    } else if (c < 0x20 || c == 0x7f || (binary && c >= 0x80)) {
      static const char* kHex = "0123456789abcdef";
      piece = std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    } else {
      piece = std::string(1, static_cast<char>(c));
    }
    out += piece;
  }
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

std::string PolicyText(const json::object* p) {
  if (!p) return "-";
  std::string out = Present(*p, "preset") ? Text(*p, "preset") : "custom";
  out += ": " + Text(*p, "strategy") + ", " + Text(*p, "max_attempts") + " attempts";
  if (Present(*p, "max_duration") && Text(*p, "max_duration") != "0s") {
    out += " within " + Text(*p, "max_duration");
  }
  out += ", timeout " + Text(*p, "timeout");
  return out;
}

std::string VerifyText(const json::object& s) {
  const json::object* v = Object(s, "verify");
  if (!v) return "none";
  return Text(*v, "scheme");
}

std::string DedupText(const json::object& s) {
  const json::object* d = Object(s, "dedup");
  if (!d) return "none";
  if (Present(*d, "header")) return "header " + Text(*d, "header");
  if (Present(*d, "json")) return "json " + Text(*d, "json");
  return json::serialize(*d);
}

std::string PausedText(const json::object& d) {
  const json::value* p = Field(d, "paused");
  if (!p || !p->is_bool()) return "-";
  if (!p->get_bool()) return "active";
  return Present(d, "paused_reason") ? "paused (" + Text(d, "paused_reason") + ")" : "paused";
}

// "HTTP 500", "error: connection refused", or both.
std::string AttemptResult(const json::object& a) {
  std::string out;
  if (Present(a, "status_code")) out = "HTTP " + Text(a, "status_code");
  if (Present(a, "error"))
    out += (out.empty() ? "" : ", ") + std::string("error: ") + Text(a, "error");
  return out.empty() ? "-" : out;
}

}  // namespace

std::string FormatRelative(TimePoint t, TimePoint now) {
  Duration diff = t - now;
  if (diff < std::chrono::seconds(1) && diff > -std::chrono::seconds(1)) return "now";
  if (diff > Duration::zero()) return "in " + Span(diff);
  return Span(-diff) + " ago";
}

std::string FormatLocalAndRelative(TimePoint t, TimePoint now) {
  std::tm tm = LocalTm(t);
  std::tm today = LocalTm(now);
  char buf[64];
  if (tm.tm_year == today.tm_year && tm.tm_yday == today.tm_yday) {
    std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  } else {
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  }
  return std::string(buf) + ", " + FormatRelative(t, now);
}

std::string FormatApiTime(const json::value* t, TimePoint now) {
  if (!t || t->is_null()) return "-";
  if (!t->is_string()) return Text(t);
  std::optional<TimePoint> parsed = ParseRfc3339(t->get_string());
  if (!parsed) return std::string(t->get_string());
  return FormatLocalAndRelative(*parsed, now);
}

std::string RenderEventList(const json::array& items, TimePoint now) {
  if (items.empty()) return "No events.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& e = v.get_object();
    rows.push_back({Text(e, "id"), Text(e, "source"), FormatApiTime(Field(e, "received_at"), now),
                    Bytes(Field(e, "size"))});
  }
  return Table({"ID", "SOURCE", "RECEIVED", "SIZE"}, rows);
}

std::string RenderEventDetail(const json::object& event, TimePoint now) {
  std::ostringstream out;
  out << "Event " << Text(event, "id") << "\n";
  out << "  source    " << Text(event, "source") << "\n";
  out << "  received  " << FormatApiTime(Field(event, "received_at"), now) << "\n";
  out << "  size      " << Bytes(Field(event, "size")) << "\n";
  const json::value* deliveries = Field(event, "deliveries");
  if (!deliveries || !deliveries->is_array() || deliveries->get_array().empty()) {
    out << "\nNo deliveries (no route matched).\n";
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
    out << ": " << Text(d, "status") << ", attempt " << Text(d, "attempt") << " of "
        << Text(d, "max_attempts") << "\n";
    if (Present(d, "next_attempt_at")) {
      out << "  next retry " << FormatApiTime(Field(d, "next_attempt_at"), now) << "\n";
    }
    if (Present(d, "deadline")) {
      out << "  deadline " << FormatApiTime(Field(d, "deadline"), now) << "\n";
    }
    if (Present(d, "reason")) {
      out << "  reason: " << Text(d, "reason") << "\n";
    } else if (Text(d, "status") == "failed") {
      out << "  reason: not recorded\n";
    }
    const json::value* attempts = Field(d, "attempts");
    if (attempts && attempts->is_array() && !attempts->get_array().empty()) {
      std::vector<std::vector<std::string>> rows;
      for (const json::value& av : attempts->get_array()) {
        if (!av.is_object()) continue;
        const json::object& a = av.get_object();
        std::string duration = Present(a, "duration_ms") ? Text(a, "duration_ms") + "ms" : "-";
        rows.push_back({Text(a, "n"), FormatApiTime(Field(a, "started_at"), now), AttemptResult(a),
                        duration, Text(a, "retry_after"), SnippetCell(a)});
      }
      out << Table({"#", "STARTED", "RESULT", "DURATION", "RETRY-AFTER", "RESPONSE"}, rows, "    ");
    }
  }
  return out.str();
}

namespace {

// Where a catalog object was defined: "config file" or "API" ("-" when the server does not say).
std::string OriginText(const json::object& o) {
  const json::value* origin = Field(o, "origin");
  if (!origin || !origin->is_string()) return "-";
  if (origin->get_string() == "config") return "config file";
  if (origin->get_string() == "api") return "API";
  return std::string(origin->get_string());
}

}  // namespace

std::string RenderSourceList(const json::array& items) {
  if (items.empty()) return "No sources.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& s = v.get_object();
    rows.push_back(
        {Text(s, "name"), VerifyText(s), DedupText(s), Text(s, "max_body"), OriginText(s)});
  }
  return Table({"NAME", "VERIFY", "DEDUP", "MAX BODY", "DEFINED IN"}, rows);
}

std::string RenderSourceDetail(const json::object& s) {
  std::ostringstream out;
  out << "Source " << Text(s, "name") << "\n";
  out << "  verify    " << VerifyText(s);
  if (const json::object* v = Object(s, "verify")) {
    out << " ("
        << Plural(Field(*v, "secrets_set") && Field(*v, "secrets_set")->is_number()
                      ? Field(*v, "secrets_set")->to_number<int64_t>()
                      : 0,
                  "secret")
        << ", tolerance " << Text(*v, "tolerance") << ")";
  }
  out << "\n";
  out << "  dedup     " << DedupText(s) << "\n";
  out << "  max body  " << Text(s, "max_body") << "\n";
  out << "  defined   " << OriginText(s) << "\n";
  return out.str();
}

std::string RenderDestinationList(const json::array& items, TimePoint now) {
  if (items.empty()) return "No destinations.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& d = v.get_object();
    const json::object* b = Object(d, "breaker");
    rows.push_back({Text(d, "name"), Text(d, "url"), PausedText(d), BreakerText(b, now, false),
                    b ? Text(*b, "consecutive_failures") : "-", Text(d, "allowed_concurrency")});
  }
  return Table({"NAME", "URL", "STATE", "BREAKER", "FAILURES", "CONCURRENCY"}, rows);
}

namespace {

// The host of `url` when the sender refuses it without allow_private (IsRefusedLiteralHost),
// else "" (a name may still resolve to such an address; only the sender can tell).
std::string RefusedLiteralHost(const std::string& url) {
  auto u = boost::urls::parse_absolute_uri(url);
  if (!u) return "";
  const std::string host = u->host_address();
  return delivery::IsRefusedLiteralHost(host) ? host : "";
}

}  // namespace

std::string RenderDestinationDetail(const json::object& d, TimePoint now) {
  std::ostringstream out;
  out << "Destination " << Text(d, "name") << "\n";
  out << "  url          " << Text(d, "url") << "\n";
  const json::value* allow = Field(d, "allow_private");
  if (const std::string host = RefusedLiteralHost(Text(d, "url"));
      !host.empty() && !(allow && allow->is_bool() && allow->get_bool())) {
    out << "  note         " << host
        << " is a loopback or private address: deliveries to it are refused unless the\n"
           "               destination allows it (--allow-private) or the server runs with\n"
           "               --allow-private-destinations\n";
  }
  out << "  state        " << PausedText(d) << "\n";
  out << "  breaker      " << BreakerText(Object(d, "breaker"), now, true) << "\n";
  out << "  concurrency  " << Text(d, "allowed_concurrency") << " allowed of "
      << Text(d, "max_concurrency") << " max";
  if (Present(d, "in_flight")) out << ", " << Text(d, "in_flight") << " in flight";
  out << "\n";
  out << "  policy       " << PolicyText(Object(d, "policy")) << "\n";
  if (std::string more = PolicyDetailText(Object(d, "policy")); !more.empty()) {
    out << "               " << more;
    if (Present(d, "replay_window")) out << "; replay window " << Text(d, "replay_window");
    out << "\n";
  }
  out << "  rate limit   " << (Present(d, "rate_limit") ? Text(d, "rate_limit") : "none") << "\n";
  const json::value* secret = Field(d, "signing_secret_set");
  out << "  signing      "
      << (secret && secret->is_bool() ? (secret->get_bool() ? "secret set" : "none") : "-") << "\n";
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

std::string RenderRouteList(const json::array& items) {
  if (items.empty()) return "No routes.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& r = v.get_object();
    rows.push_back({Text(r, "id"), Text(r, "source"), Text(r, "destination"), OriginText(r)});
  }
  return Table({"ID", "SOURCE", "DESTINATION", "DEFINED IN"}, rows);
}

std::string RenderRouteDetail(const json::object& r) {
  return "Route " + Text(r, "id") + "\n  from     " + Text(r, "source") + "\n  to       " +
         Text(r, "destination") + "\n  defined  " + OriginText(r) + "\n";
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
