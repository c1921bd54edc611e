#pragma once

#include <boost/json/object.hpp>
#include <string>

#include "cli/api_client.h"
#include "cli/args.h"
#include "common/clock.h"
#include "common/list_limits.h"
#include "common/result.h"

namespace hookrelay::cli {

// The API's default and largest page (common/list_limits.h), so `--limit` means what the
// API's `limit` means.
inline constexpr int kDefaultEventListLimit = kDefaultListLimit;
inline constexpr int kEventPageLimit = kMaxListLimit;

// `hookrelay events list` filters. Empty strings are absent.
struct EventListOptions {
  std::string status;
  std::string source;
  std::string destination;
  std::string since;  // RFC 3339, or a duration meaning that long before now ("2h")
  std::string until;
  std::string type;                    // "invoice.*"
  std::string routed;                  // "true", "false" or "" (either)
  int limit = kDefaultEventListLimit;  // events to show in all, across pages
  std::string cursor;                  // where to start: a next_cursor of an earlier answer
};

// --since / --until: an RFC 3339 time, or a duration ("90m", "1d") meaning that long before
// `now`; returned as RFC 3339 UTC. InvalidArgument naming `flag` otherwise.
Result<std::string> ResolveTimeFlag(const std::string& text, TimePoint now,
                                    const std::string& flag);

// "/api/v1/events?status=failed&since=…&limit=N[&cursor=C]": the filters of `options` (times
// already resolved), percent-encoded.
std::string EventListPath(const EventListOptions& options, int page_limit,
                          const std::string& cursor);

// Follows next_cursor until `options.limit` events (or the end); returns {"items": […],
// "next_cursor": where to continue, or null}. `options` times must be resolved.
Result<boost::json::object> FetchEvents(ApiClient& client, const EventListOptions& options);

// Registers `events list` and `events show ID`; `exit_code` is set after parsing.
void AddEventsCommand(Command app, int& exit_code);

}  // namespace hookrelay::cli
