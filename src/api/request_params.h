#pragma once

#include <boost/json/value.hpp>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "access/role.h"
#include "common/clock.h"
#include "common/list_limits.h"
#include "common/result.h"
#include "http/request.h"
#include "routing/route_rule.h"
#include "sim/herd_input.h"
#include "store/store.h"

// What the management API reads from a request: its query parameters and its JSON bodies, as
// plain functions of the request (no store, no HTTP server), so each is unit-tested and fuzzed
// (fuzz/api_body_fuzzer.cc) on its own. Errors are InvalidArgument with field() naming the
// parameter or the body's field.

namespace hookrelay::api {

inline constexpr int kDefaultEventLimit = kDefaultListLimit;
inline constexpr int kMaxEventLimit = kMaxListLimit;

// Refuses a query parameter that is not in `known` (a misspelt filter must not silently list
// everything), one given twice, or one that does not decode: InvalidArgument naming it.
Status CheckQueryParams(const http::RequestHead& head,
                        std::initializer_list<std::string_view> known);

// An event id (a ULID) in a path: InvalidArgument (field "id") when `id` cannot be one, so a
// typo is told apart from an event that does not exist (404).
Status CheckEventId(const std::string& id, std::string_view what = "event");

// GET /api/v1/events?status=&source=&destination=&since=&until=&cursor=&limit=
struct EventListQuery {
  store::EventFilter filter;
  std::string cursor;
  int limit = kDefaultEventLimit;
};
// An empty parameter counts as absent. Errors are InvalidArgument with field() naming the query
// parameter ("status", "since", "until", "limit").
Result<EventListQuery> ParseEventListQuery(const http::RequestHead& head);

// The query of GET /api/v1/events/{id}: `body=true|false` (default true), whether to include
// body_base64. kInvalidArgument (field "body") for another value.
Result<bool> ParseEventDetailQuery(const http::RequestHead& head);

inline constexpr int kDefaultPageLimit = kDefaultListLimit;
// ?cursor=&limit= of the paged lists other than events (audit, replays; limit 1–1000).
// InvalidArgument names the parameter.
struct PageQuery {
  std::string cursor;
  int limit = kDefaultPageLimit;
};
Result<PageQuery> ParsePageQuery(const http::RequestHead& head);

// The JSON body of a catalog create or update: required, a JSON object.
Result<boost::json::value> ParseCatalogBody(std::string_view body);

// The optional body of POST /api/v1/destinations/{name}/pause: {"reason": "…"}. An empty body
// gives `default_reason`. InvalidArgument for malformed JSON (field "body"), a field other than
// "reason" (field names it) or a reason that is not a non-empty string.
Result<std::string> ParsePauseBody(std::string_view body, const std::string& default_reason);
// The optional body of POST /api/v1/destinations/{name}/rotate-secret and
// /api/v1/sources/{name}/rotate-secret: {"grace": "24h", "secret": "…"}. grace (default 24h, at
// most model::kMaxSecretGrace, "0s" drops the old secret at once): how long the old secret still
// counts beside the new one; secret: the new secret, a non-empty string whose format the handler
// checks (absent: generated where hookrelay may). Errors as for ParsePauseBody, naming the field.
struct RotateSecretRequest {
  Duration grace = std::chrono::hours(24);
  std::optional<std::string> secret;
};
Result<RotateSecretRequest> ParseRotateSecretBody(std::string_view body);
// The body of POST /api/v1/tokens: {"name": "ci-replays", "role": "operator", "expires": "90d"}.
// name: 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit, not "bootstrap"; role:
// viewer, operator or admin; expires (optional, null: never): from 1m to kMaxTokenLifetime.
// Errors as for ParsePauseBody, naming the field.
inline constexpr Duration kMaxTokenLifetime = std::chrono::hours(24 * 3650);
struct CreateTokenRequest {
  std::string name;
  access::Role role = access::Role::kViewer;
  std::optional<Duration> expires;
  std::optional<access::Scope> scope;  // none: every source and destination
};
Result<CreateTokenRequest> ParseCreateTokenBody(std::string_view body);
// The body of POST /api/v1/keys: {"master_key": "<32 bytes in base64>"}; the text as given.
Result<std::string> ParseAddKeyBody(std::string_view body);
// The optional body of resume and reset-breaker: empty or {}. InvalidArgument otherwise.
Status ParseEmptyBody(std::string_view body);
// The optional body of POST /api/v1/events/{id}/replay: {"destination": "name"}. nullopt: all
// of the event's destinations. Errors as for ParsePauseBody.
Result<std::optional<std::string>> ParseReplayBody(std::string_view body);

// The body of POST /api/v1/replays: {"status"?: "failed", "source"?, "destination"?, "since"?,
// "until"?, "rate"?: "100/s" | 100}. An empty body is {}. InvalidArgument names the field.
struct BulkReplayRequest {
  std::string filter_json;     // the filter part, for replay::ParseReplayFilter
  std::optional<double> rate;  // per second; nullopt: the default
};
Result<BulkReplayRequest> ParseBulkReplayBody(std::string_view body);

// The body of POST /api/v1/routes/test: {"source"?, "types"?, "filter"?, "event"?, "last"?}. The
// rule as a route's (routing::ParseRouteRule: errors name "types[1]", "filter.body.$gt"); the
// events: `event` (one id; its source is the one tested) or the `last` (1 to 100, default 20)
// events of `source`. One of source and event is required.
inline constexpr int kDefaultRouteTestEvents = 20;
inline constexpr int kMaxRouteTestEvents = 100;
struct RouteTestRequest {
  routing::RouteRule rule;
  std::optional<std::string> source;
  std::optional<std::string> event;
  int last = kDefaultRouteTestEvents;
};
Result<RouteTestRequest> ParseRouteTestBody(std::string_view body);

// GET /api/v1/simulate?events=&fail_window=&recover_at=&capacity=&seed=&destination=&policy=…&
// policy_json=…: the herd simulation's arguments (sim::HerdInput, parsed there). policy and
// policy_json may repeat and keep their order; every other parameter is given at most once.
// InvalidArgument names the parameter.
struct SimulateQuery {
  sim::HerdInput input;
  std::optional<std::string> destination;  // its policy is compared first
};
Result<SimulateQuery> ParseSimulateQuery(const http::RequestHead& head);

// What GET /api/v1/simulate may cost: at most 100,000 events (the CLI takes 10,000,000), 10
// policies, and 5,000,000 simulated requests as sim::HerdRequestBound counts them (the default
// comparison of 8 strategies makes at most 48 attempts per event, so 100,000 events fit). Measured
// on the 2-core test machine: that largest default run takes about 2 s of CPU.
sim::HerdLimits ApiHerdLimits();

}  // namespace hookrelay::api
