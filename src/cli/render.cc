#include "cli/render.h"

#include <algorithm>
#include <boost/json.hpp>
#include <ctime>
#include <string_view>
#include <vector>

#include "cli/render/render_internal.h"
#include "cli/wrap.h"
#include "common/time_format.h"
#include "http/json_text.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

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

std::string Bytes(const json::value* v) {
  if (!v || !(v->is_int64() || v->is_uint64())) return Text(v);
  return Text(v) + " B";
}

std::string Plural(int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// `raw` with control characters and backslashes escaped (\n, \x1b), and with `binary` the bytes
// past ASCII too (\xff): text from outside (a response, an order key taken from a webhook) can
// never move the cursor or recolour the terminal.
std::string Escaped(std::string_view raw, bool binary) {
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

// Cuts cells of the columns in `shrinkable` (in the middle, "…"; those in `cut_end` at their
// end) until the table's lines fit in `width`: the widest of those columns loses a character at
// a time, none below 8 characters.
void FitColumns(const std::vector<std::string>& header, std::vector<std::vector<std::string>>& rows,
                size_t width, const std::vector<size_t>& shrinkable,
                const std::vector<size_t>& cut_end) {
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

// "14:05:31" on now's local day, else "2026-12-01 14:05:31" (without seconds: "14:05").
std::string LocalClock(TimePoint t, TimePoint now, bool seconds) {
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
std::string ClockInText(TimePoint t, TimePoint now, bool seconds) {
  return LocalClock(t, now, seconds) + " (" + FormatRelative(t, now) + ")";
}

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

std::string RenderNextPageHint(const std::string& what, const std::string& cursor, size_t width,
                               bool has_filters) {
  // The flag and its value first, on the first line, to be copied whole.
  return Wrap("(more " + what + ": --cursor " + cursor + " for the next page" +
                  (has_filters ? ", with the same filters" : "") + "; or raise --limit)",
              "", 1, width);
}

// Where a catalog object was defined: "config file" or "API" ("-" when the server does not say).
std::string OriginText(const json::object& o) {
  const json::value* origin = Field(o, "origin");
  if (!origin || !origin->is_string()) return "-";
  if (origin->get_string() == "config") return "config file";
  if (origin->get_string() == "api") return "API";
  return std::string(origin->get_string());
}

}  // namespace hookrelay::cli
