#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/render.h"
#include "common/clock.h"

// What the per-resource renderers (src/cli/render/*.cc) share: reading the API's JSON leniently,
// cutting and fitting cells, and clock times. Internal to the renderers (defined in
// cli/render.cc); callers use cli/render.h.

namespace hookrelay::cli {

// The field `key` of `o`, or nullptr.
const boost::json::value* Field(const boost::json::object& o, std::string_view key);
// Null and missing fields are "-"; strings as they are; numbers plainly; booleans "yes"/"no".
std::string Text(const boost::json::value* v);
std::string Text(const boost::json::object& o, std::string_view key);
// The field is there and not null.
bool Present(const boost::json::object& o, std::string_view key);
// The field as an object, or nullptr.
const boost::json::object* Object(const boost::json::object& o, std::string_view key);

inline std::string Table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows,
                         const std::string& indent = "") {
  return RenderTable(header, rows, indent);
}

// "123 B" for a number, else as Text.
std::string Bytes(const boost::json::value* v);
// "1 attempt", "2 attempts".
std::string Plural(int64_t n, const char* word);

// `raw` with control characters and backslashes escaped (\n, \x1b), and with `binary` the bytes
// past ASCII too (\xff): text from outside (a response, an order key taken from a webhook) can
// never move the cursor or recolour the terminal.
std::string Escaped(std::string_view raw, bool binary = false);

// The characters of `text` (UTF-8), as byte offsets of where each begins.
std::vector<size_t> CharStarts(const std::string& text);
// `text` cut to `width` characters, the last one "…", when it is longer.
std::string Cut(const std::string& text, size_t width);
// `text` cut in the middle to `width` characters: its first `head` characters, "…", and as
// many of its last ones as fit.
std::string CutMiddle(const std::string& text, size_t width, size_t head);

// Cuts cells of the columns in `shrinkable` (in the middle, "…"; those in `cut_end` at their
// end) until the table's lines fit in `width`: the widest of those columns loses a character at
// a time, none below 8 characters.
void FitColumns(const std::vector<std::string>& header, std::vector<std::vector<std::string>>& rows,
                size_t width, const std::vector<size_t>& shrinkable,
                const std::vector<size_t>& cut_end = {});

// "14:05:31" on now's local day, else "2026-12-01 14:05:31" (without seconds: "14:05").
std::string LocalClock(TimePoint t, TimePoint now, bool seconds = true);
// "23:08:19 (in 28m)": a time inside a sentence.
std::string ClockInText(TimePoint t, TimePoint now, bool seconds = true);

// Where a catalog object was defined: "config file" or "API" ("-" when the server does not say).
std::string OriginText(const boost::json::object& o);

}  // namespace hookrelay::cli
