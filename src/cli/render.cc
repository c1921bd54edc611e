#include "cli/render.h"

#include <algorithm>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <string_view>
#include <vector>

#include "cli/wrap.h"
#include "common/crypto.h"
#include "common/time_format.h"
#include "common/units.h"
#include "delivery/ssrf.h"
#include "http/json_text.h"

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
  return http::SerializeJson(*v);  // plain numbers, never "3E0"
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

std::string Table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows,
                  const std::string& indent = "") {
  return RenderTable(header, rows, indent);
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

// `raw` with control characters and backslashes escaped (\n, \x1b), and with `binary` the bytes
// past ASCII too (\xff): text from outside (a response, an order key taken from a webhook) can
// never move the cursor or recolour the terminal.
std::string Escaped(std::string_view raw, bool binary = false) {
  std::string out;
  for (unsigned char c : raw) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7f || (binary && c >= 0x80)) {
      static const char* kHex = "0123456789abcdef";
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
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

// The characters of `text` (UTF-8), as byte offsets of where each begins.
std::vector<size_t> CharStarts(const std::string& text) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  return starts;
}

// `text` cut to `width` characters, the last one "…", when it is longer.
std::string Cut(const std::string& text, size_t width) {
  const std::vector<size_t> starts = CharStarts(text);
  if (width == 0 || starts.size() <= width) return text;
  return text.substr(0, starts[width - 1]) + "…";
}

// `text` cut in the middle to `width` characters: its first `head` characters, "…", and as
// many of its last ones as fit.
std::string CutMiddle(const std::string& text, size_t width, size_t head) {
  const std::vector<size_t> starts = CharStarts(text);
  if (starts.size() <= width) return text;
  if (width < 2) return Cut(text, width);
  head = std::min(head, width - 1);
  const size_t tail = width - 1 - head;
  return text.substr(0, head < starts.size() ? starts[head] : text.size()) + "…" +
         (tail == 0 ? "" : text.substr(starts[starts.size() - tail]));
}

// Where the last `room` characters of `url` begin, moved on to the next "/" in them when there is
// one at or after `path_start` that leaves at least `min_tail` characters.
size_t TailStart(const std::string& url, size_t room, size_t path_start, size_t min_tail) {
  const std::vector<size_t> starts = CharStarts(url);
  const size_t from = starts[starts.size() - std::min(room, starts.size())];
  const size_t slash = url.find('/', from);
  if (slash != std::string::npos && path_start != std::string::npos && slash >= path_start &&
      DisplayWidth(url.substr(slash)) >= min_tail) {
    return slash;
  }
  return from;
}

}  // namespace

// So that URLs of one host still differ, the end of the path is kept (from a "/" when one is in
// reach); the scheme is kept so the reader still tells http from https.
std::string CutUrl(const std::string& url, size_t width) {
  const size_t count = DisplayWidth(url);
  if (count <= width) return url;
  const size_t scheme_end = url.find("://");
  const size_t host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const size_t path_start = url.find('/', host_start);
  constexpr size_t kMinTail = 8;  // enough of the path to tell URLs of one host apart
  const size_t scheme = DisplayWidth(url.substr(0, host_start));
  // "https://host…/in", else "https://…/hooks/in".
  size_t head = std::string::npos;
  if (path_start != std::string::npos &&
      DisplayWidth(url.substr(0, path_start)) + 1 + kMinTail <= width) {
    head = path_start;
  } else if (scheme + 1 + kMinTail <= width) {
    head = host_start;
  }
  if (head == std::string::npos) return CutMiddle(url, width, width / 2);
  const size_t room = width - DisplayWidth(url.substr(0, head)) - 1;
  return url.substr(0, head) + "…" + url.substr(TailStart(url, room, path_start, kMinTail));
}

namespace {

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

// Cuts cells of the columns in `shrinkable` (in the middle, "…"; those in `cut_end` at their
// end) until the table's lines fit in `width`: the widest of those columns loses a character at
// a time, none below 8 characters.
void FitColumns(const std::vector<std::string>& header, std::vector<std::vector<std::string>>& rows,
                size_t width, const std::vector<size_t>& shrinkable,
                const std::vector<size_t>& cut_end = {}) {
  constexpr size_t kMinColumn = 8;
  std::vector<size_t> w(header.size());
  for (size_t i = 0; i < header.size(); ++i) {
    w[i] = DisplayWidth(header[i]);
    for (const auto& row : rows) {
      if (i < row.size()) w[i] = std::max(w[i], DisplayWidth(row[i]));
    }
  }
  size_t total = 2 * (w.size() - 1);
  for (size_t x : w) total += x;
  std::vector<size_t> target = w;
  while (total > width) {
    size_t widest = header.size();
    for (size_t i : shrinkable) {
      const size_t floor = std::max(kMinColumn, DisplayWidth(header[i]));
      if (target[i] > floor && (widest == header.size() || target[i] > target[widest])) widest = i;
    }
    if (widest == header.size()) break;
    --target[widest];
    --total;
  }
  for (auto& row : rows) {
    for (size_t i : shrinkable) {
      if (i >= row.size() || target[i] >= w[i]) continue;
      const bool at_end = std::find(cut_end.begin(), cut_end.end(), i) != cut_end.end();
      row[i] = at_end ? Cut(row[i], target[i]) : CutMiddle(row[i], target[i], target[i] / 2);
    }
  }
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

}  // namespace

std::string RenderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows,
                        const std::string& indent) {
  // Widths in characters, not bytes, so "…" or "é" keeps the columns straight.
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) width[i] = DisplayWidth(header[i]);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], DisplayWidth(row[i]));
    }
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l = indent;
    for (size_t i = 0; i < cells.size(); ++i) {
      l += cells[i];
      if (i + 1 < cells.size()) l += std::string(width[i] - DisplayWidth(cells[i]) + 2, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
  return out;
}

std::string FormatRelative(TimePoint t, TimePoint now) {
  Duration diff = t - now;
  if (diff < std::chrono::seconds(1) && diff > -std::chrono::seconds(1)) return "now";
  if (diff > Duration::zero()) return "in " + Span(diff);
  return Span(-diff) + " ago";
}

namespace {

// "14:05:31" on now's local day, else "2026-12-01 14:05:31" (without seconds: "14:05").
std::string LocalClock(TimePoint t, TimePoint now, bool seconds = true) {
  std::tm tm = LocalTm(t);
  std::tm today = LocalTm(now);
  char buf[64];
  const bool same_day = tm.tm_year == today.tm_year && tm.tm_yday == today.tm_yday;
  const char* format = same_day ? (seconds ? "%H:%M:%S" : "%H:%M")
                                : (seconds ? "%Y-%m-%d %H:%M:%S" : "%Y-%m-%d %H:%M");
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

// "23:08:19 (in 28m)": a time inside a sentence.
std::string ClockInText(TimePoint t, TimePoint now, bool seconds = true) {
  return LocalClock(t, now, seconds) + " (" + FormatRelative(t, now) + ")";
}

bool Digits(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return false;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

// The length of an RFC 3339 timestamp starting at `at` ("2026-11-30T23:08:19.642Z"), or 0.
size_t TimestampLength(std::string_view s, size_t at) {
  if (!(Digits(s, at, 4) && s[at + 4] == '-' && Digits(s, at + 5, 2) && s[at + 7] == '-' &&
        Digits(s, at + 8, 2) && at + 10 < s.size() && (s[at + 10] == 'T' || s[at + 10] == 't') &&
        Digits(s, at + 11, 2) && s[at + 13] == ':' && Digits(s, at + 14, 2) && s[at + 16] == ':' &&
        Digits(s, at + 17, 2))) {
    return 0;
  }
  size_t i = at + 19;
  if (i < s.size() && s[i] == '.') {
    size_t j = i + 1;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j == i + 1) return 0;
    i = j;
  }
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) return i + 1 - at;
  if (i < s.size() && (s[i] == '+' || s[i] == '-') && Digits(s, i + 1, 2) && i + 3 < s.size() &&
      s[i + 3] == ':' && Digits(s, i + 4, 2)) {
    return i + 6 - at;
  }
  return 0;
}

}  // namespace

std::string FormatLocalAndRelative(TimePoint t, TimePoint now, bool with_zone) {
  std::string out = LocalClock(t, now);
  if (with_zone) out += " " + LocalZoneName(t);
  return out + ", " + FormatRelative(t, now);
}

std::string FormatApiTime(const json::value* t, TimePoint now, bool with_zone) {
  if (!t || t->is_null()) return "-";
  if (!t->is_string()) return Text(t);
  std::optional<TimePoint> parsed = ParseRfc3339(t->get_string());
  if (!parsed) return std::string(t->get_string());
  return FormatLocalAndRelative(*parsed, now, with_zone);
}

std::string LocalZoneName(TimePoint now) {
  std::tm tm = LocalTm(now);
  char buf[64];
  if (std::strftime(buf, sizeof buf, "%Z", &tm) == 0 || buf[0] == '\0') return "local time";
  return buf;
}

std::string LocalizeTimes(std::string_view text, TimePoint now) {
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i + 20 <= text.size(); ++i) {
    if (i > 0 && text[i - 1] >= '0' && text[i - 1] <= '9') continue;  // inside a longer number
    const size_t n = TimestampLength(text, i);
    if (n == 0) continue;
    std::optional<TimePoint> t = ParseRfc3339(text.substr(i, n));
    if (!t) continue;
    out.append(text.substr(copied, i - copied));
    out += ClockInText(*t, now);
    copied = i + n;
    i = copied - 1;
  }
  out.append(text.substr(copied));
  return out;
}

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

namespace {

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

}  // namespace

std::string RenderEventList(const json::array& items, TimePoint now, size_t width) {
  if (items.empty()) return "No events.\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<const json::array*> deliveries;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& e = v.get_object();
    const json::value* ds = Field(e, "deliveries");
    deliveries.push_back(ds && ds->is_array() ? &ds->get_array() : nullptr);
    rows.push_back({Text(e, "id"), Text(e, "source"), FormatApiTime(Field(e, "received_at"), now),
                    Bytes(Field(e, "size"))});
  }
  const std::vector<std::string> header = {"ID", "SOURCE", "RECEIVED (" + LocalZoneName(now) + ")",
                                           "SIZE", "STATUS"};
  // STATUS goes last, in what is left of the width (at least 14).
  size_t used = 0;
  for (size_t i = 0; i + 1 < header.size(); ++i) {
    size_t w = DisplayWidth(header[i]);
    for (const auto& row : rows) w = std::max(w, DisplayWidth(row[i]));
    used += w + 2;
  }
  const size_t status_width = used + 14 < width ? width - used : 14;
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].push_back(deliveries[i] ? EventStatusCell(*deliveries[i], status_width, now) : "-");
  }
  return Table(header, rows);
}

std::string RenderEventDetail(const json::object& event, TimePoint now, size_t width) {
  std::ostringstream out;
  out << "Event " << Text(event, "id") << "\n";
  out << "  source    " << Text(event, "source") << "\n";
  out << "  received  " << FormatApiTime(Field(event, "received_at"), now, /*with_zone=*/true)
      << "\n";
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
      std::vector<std::vector<std::string>> rows;
      for (const json::value& av : attempts->get_array()) {
        if (!av.is_object()) continue;
        const json::object& a = av.get_object();
        const json::value* ms = Field(a, "duration_ms");
        std::string duration =
            ms && ms->is_number() ? FormatDurationRounded(Duration(ms->to_number<int64_t>())) : "-";
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

std::string RenderSourceDetail(const json::object& s, TimePoint now) {
  std::ostringstream out;
  out << "Source " << Text(s, "name") << "\n";
  out << "  verify    " << VerifyText(s);
  if (const json::object* v = Object(s, "verify")) {
    out << " ("
        << Plural(Field(*v, "secrets_set") && Field(*v, "secrets_set")->is_number()
                      ? Field(*v, "secrets_set")->to_number<int64_t>()
                      : 0,
                  "secret");
    // Only the schemes that sign a timestamp check it against the tolerance.
    const std::string scheme = Text(*v, "scheme");
    if ((scheme == "stripe" || scheme == "standard") && Present(*v, "tolerance")) {
      out << ", tolerance " << Text(*v, "tolerance");
    }
    out << ")";
  }
  out << "\n";
  out << "  dedup     " << DedupText(s) << "\n";
  out << "  max body  " << Text(s, "max_body") << "\n";
  out << "  defined   " << OriginText(s) << "\n";
  // Requests refused for a bad signature since the server started (GET .../rejections lists them).
  if (const json::object* r = Object(s, "rejections"); r && Object(s, "verify")) {
    out << "  rejected  " << Text(*r, "since_start") << " since the server started";
    if (Text(*r, "not_recorded") != "0") out << " (" << Text(*r, "not_recorded") << " not kept)";
    if (Present(*r, "last_at")) {
      out << ", the last " << FormatApiTime(Field(*r, "last_at"), now, /*with_zone=*/true);
    }
    out << "\n";
  }
  return out.str();
}

std::string RenderRejectionList(const json::object& page, TimePoint now, size_t width) {
  std::string out;
  if (const json::object* c = Object(page, "counts")) {
    std::string summary = Text(*c, "since_start") + " refused since the server started";
    if (Text(*c, "not_recorded") != "0" && Present(*c, "not_recorded")) {
      summary += ", " + Text(*c, "not_recorded") + " not kept";
    }
    if (Present(*c, "last_at")) {
      summary += "; the last " + FormatApiTime(Field(*c, "last_at"), now, /*with_zone=*/true);
    }
    if (const json::object* by = Object(*c, "by_reason")) {
      std::string reasons;
      for (const auto& [reason, n] : *by) {
        if (Text(&n) == "0") continue;
        reasons += (reasons.empty() ? "" : ", ") + std::string(reason) + " " + Text(&n);
      }
      if (!reasons.empty()) summary += "; by reason: " + reasons;
    }
    out += Wrap(summary, "", 0, width) + "\n";
  }
  const json::value* items = Field(page, "items");
  if (!items || !items->is_array() || items->get_array().empty()) {
    return out + "No rejected requests kept.\n";
  }
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items->get_array()) {
    if (!v.is_object()) continue;
    const json::object& r = v.get_object();
    rows.push_back({FormatApiTime(Field(r, "received_at"), now), Text(r, "remote_addr"),
                    Text(r, "reason"), Bytes(Field(r, "size"))});
  }
  const std::vector<std::string> header = {"RECEIVED (" + LocalZoneName(now) + ")", "FROM",
                                           "REASON", "SIZE"};
  FitColumns(header, rows, width, {1});
  return out + Table(header, rows);
}

std::string RenderNextPageHint(const std::string& what, const std::string& cursor, size_t width,
                               bool has_filters) {
  // The flag and its value first, on the first line, to be copied whole.
  return Wrap("(more " + what + ": --cursor " + cursor + " for the next page" +
                  (has_filters ? ", with the same filters" : "") + "; or raise --limit)",
              "", 1, width);
}

std::string RenderAuditList(const json::array& items, TimePoint now, size_t width) {
  if (items.empty()) return "No audit entries.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& a = v.get_object();
    const json::value* detail = Field(a, "detail");
    rows.push_back({FormatApiTime(Field(a, "at"), now), Text(a, "actor"), Text(a, "action"),
                    Escaped(Text(a, "target")), Text(a, "count"),
                    detail && !detail->is_null() ? Escaped(http::SerializeJson(*detail)) : "-"});
  }
  const std::vector<std::string> header = {
      "AT (" + LocalZoneName(now) + ")", "ACTOR", "ACTION", "TARGET", "COUNT", "DETAIL"};
  // The detail gives way first (`--json` has it whole), then the target.
  size_t used = 0;
  for (size_t i = 0; i + 1 < header.size(); ++i) {
    size_t w = DisplayWidth(header[i]);
    for (const auto& row : rows) w = std::max(w, DisplayWidth(row[i]));
    used += w + 2;
  }
  const size_t detail_width = used + 16 < width ? width - used : 16;
  for (auto& row : rows) row.back() = Cut(row.back(), detail_width);
  FitColumns(header, rows, width, {5, 3}, {5});
  return Table(header, rows);
}

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

namespace {

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
  out << "  signing      "
      << (secret && secret->is_bool() ? (secret->get_bool() ? "secret set" : "none") : "-") << "\n";
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

std::string RenderRouteList(const json::array& items, size_t width) {
  if (items.empty()) return "No routes.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& r = v.get_object();
    rows.push_back({Text(r, "id"), Text(r, "source"), Text(r, "destination"), OriginText(r)});
  }
  const std::vector<std::string> header = {"ID", "SOURCE", "DESTINATION", "DEFINED IN"};
  // The id (by default "source:destination", the longest cell) gives way first, then the names;
  // `routes show` and --json have them whole.
  FitColumns(header, rows, width, {0, 1, 2});
  return Table(header, rows);
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
