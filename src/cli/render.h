#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"

// The management commands' human output, as pure functions of the API's JSON and a fixed "now"
// (no I/O, no clock), so every table is unit-tested. Field names are those of the management API
// (docs/api.md). Missing or null fields render as "-" rather than failing, so an
// older or newer server still gets readable output. Times are shown in the local time zone (TZ)
// and relative to `now`.
//
// One file per resource renders it (src/cli/render/events.cc, destinations.cc, sources.cc,
// rejections.cc, routes.cc, replays.cc, audit.cc); cli/render.cc has the shared table, column
// and time code (render/render_internal.h).

namespace hookrelay::cli {

// The width the renderers lay their output out for unless told otherwise (terminal.h finds the
// real one). Tables cut or wrap their widest cells so that lines fit in the width given.
inline constexpr size_t kRenderWidth = 80;

// "in 3m", "5m12s ago", "now" (under a second): the two largest units, truncated to seconds.
std::string FormatRelative(TimePoint t, TimePoint now);

// Local time, and relative: "14:05:31, in 3m" on now's local day, else
// "2026-12-01 06:00:00, in 23h55m"; with `with_zone`, the zone after the clock:
// "14:05:31 CET, in 3m". A table or a detail view names the zone once (a column header
// "RECEIVED (CET)", or its first time), not in every cell.
std::string FormatLocalAndRelative(TimePoint t, TimePoint now, bool with_zone = false);

// The same for an RFC 3339 string from the API; "-" for null or missing, the text itself when it
// does not parse.
std::string FormatApiTime(const boost::json::value* t, TimePoint now, bool with_zone = false);

// The local zone's abbreviation at `now` ("UTC", "CET", "PDT").
std::string LocalZoneName(TimePoint now);

// `text` with every RFC 3339 timestamp in it ("until 2026-11-30T23:08:19.642Z") rendered like
// the rest of the output: local clock and relative, "until 23:08:19 (in 28m)" (with the date
// when not on now's local day). Text without timestamps is returned as it is.
std::string LocalizeTimes(std::string_view text, TimePoint now);

// A bulk replay job's "waiting" field (null, or {"reason", "destination", "until", "message"}):
// "breaker open on analytics until 23:39 (in 28m)", "destination analytics is paused"; the
// message with its times localized for a reason this CLI does not know; "" when null or absent.
std::string RenderWaiting(const boost::json::value* waiting, TimePoint now);

// Columns left-aligned, two spaces apart, no trailing blanks.
std::string RenderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows,
                        const std::string& indent = "");

// `url` cut to `width` characters: its scheme always ("https://…/hooks/in"), the host when it
// fits with the end of the path, "…" where it is cut. A URL that fits is returned whole.
std::string CutUrl(const std::string& url, size_t width);

// `hookrelay events list`: ID, SOURCE, RECEIVED, SIZE; "No events." when `items` is empty.
std::string RenderEventList(const boost::json::array& items, TimePoint now,
                            size_t width = kRenderWidth);

// `hookrelay events show`: the event, then each delivery ("attempt 2 of 5", the next retry,
// the deadline, the reason when it failed or is paused) and its attempts.
std::string RenderEventDetail(const boost::json::object& event, TimePoint now,
                              size_t width = kRenderWidth);

// `hookrelay sources list` / `show`.
std::string RenderSourceList(const boost::json::array& items);
std::string RenderSourceDetail(const boost::json::object& source, TimePoint now);

// `hookrelay sources rejections NAME`: the page of GET /api/v1/sources/{name}/rejections, a
// summary of its "counts" ("1250 refused since the server started, 1190 not kept; the last
// 14:05:31 UTC, 3m ago; by reason: signature_mismatch 1240, …"), then RECEIVED, FROM, REASON,
// SIZE; "No rejected requests kept." when `items` is empty.
std::string RenderRejectionList(const boost::json::object& page, TimePoint now,
                                size_t width = kRenderWidth);

// What ends a list with more pages: "(more events: --cursor C for the next page, with the same
// filters; or raise --limit)", wrapped to `width`. `what` is "events", "entries", …
std::string RenderNextPageHint(const std::string& what, const std::string& cursor, size_t width,
                               bool has_filters);

// `hookrelay audit list`: AT, ACTOR, ACTION, TARGET, COUNT, DETAIL (the detail object as JSON,
// cut to what is left of the width); "No audit entries." when `items` is empty.
std::string RenderAuditList(const boost::json::array& items, TimePoint now,
                            size_t width = kRenderWidth);

// `hookrelay tokens list`: NAME, ROLE, CREATED, EXPIRES ("never", "(expired)", "revoked"), LAST
// USED (when, from which address); "No tokens." when `items` is empty.
std::string RenderTokenList(const boost::json::array& items, TimePoint now,
                            size_t width = kRenderWidth);
// `hookrelay tokens create`: the token's name, role, creation and expiry.
std::string RenderTokenDetail(const boost::json::object& t, TimePoint now);

// `hookrelay keys list`: the master keys that open the store (GET /api/v1/keys items), oldest
// first, the one the answering node runs with marked.
std::string RenderKeyList(const boost::json::array& items, TimePoint now);

// `hookrelay destinations list` / `show` (breaker state, pause, concurrency).
std::string RenderDestinationList(const boost::json::array& items, TimePoint now,
                                  size_t width = kRenderWidth);
std::string RenderDestinationDetail(const boost::json::object& destination, TimePoint now,
                                    size_t width = kRenderWidth);

// `hookrelay routes list` / `show`.
std::string RenderRouteList(const boost::json::array& items, size_t width = kRenderWidth);
std::string RenderRouteDetail(const boost::json::object& route);
// The dry run's answer (POST /api/v1/routes/test): a count, then each event with "takes" or
// "skips" and, for one it skips, the reason on the line below.
std::string RenderRouteTest(const boost::json::object& result, size_t width = kRenderWidth);

// The 202 answer of a replay, one line per new chain: "replayed 01J… to billing (chain 1,
// delivery 42)"; "nothing replayed" when there is none.
std::string RenderReplayResult(const boost::json::object& result);

}  // namespace hookrelay::cli
