#pragma once

#include <boost/json/object.hpp>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/list_limits.h"
#include "common/result.h"
#include "delivery/engine.h"
#include "http/request.h"
#include "ingest/rejection_recorder.h"
#include "model/registry.h"
#include "sim/herd_input.h"
#include "store/store.h"

// The management API's JSON, as plain functions of plain data (no HTTP, no threads), so each
// shape is unit-tested on its own. Field names follow ARCHITECTURE.md section 3; times are
// RFC 3339 UTC with milliseconds; absent values are JSON null, never omitted, unless noted.

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

// What holds a destination's waiting deliveries back (the API's "paused_by"), by precedence:
// the catalog's `paused` (only a change of the destination lifts it) "config"; the stored pause,
// "gone" when the engine made it after a 410 Gone (store::kGonePauseReason), else "operator" (a
// pause through the API or CLI); the breaker, open or half-open, "breaker" (with, while open,
// when it half-opens). `by` is nullptr when nothing holds them.
struct PauseCause {
  const char* by = nullptr;
  std::optional<TimePoint> breaker_open_until;
};
PauseCause PauseCauseOf(bool paused_in_catalog, const store::DestinationControl& control);
// By destination name. A destination missing from it reads as nothing holding it back.
using PauseCauses = std::map<std::string, PauseCause>;
// Every destination of `catalog`'s cause, from one read of the stored controls.
Result<PauseCauses> LoadPauseCauses(store::Store& store, const model::Catalog& catalog);
// Sets a delivery's "paused_by" and "breaker_open_until": the cause of its destination's pause
// while `status` is paused (both null otherwise, and when `causes` is null or has no cause).
void AddPauseCause(boost::json::object& delivery, const std::string& destination,
                   store::DeliveryStatus status, const PauseCauses* causes);

// {"id", "source", "received_at", "size", "deliveries": [{"destination", "status", "chain",
// "paused_by", "breaker_open_until"}]}: each destination's current delivery (its latest chain),
// from Event::current, with the cause of a pause (AddPauseCause).
boost::json::object EventSummaryToJson(const store::Event& e, const PauseCauses* causes = nullptr);
// {"items": [summary…], "next_cursor": "…" | null}
boost::json::object EventPageToJson(const store::EventPage& page,
                                    const PauseCauses* causes = nullptr);

struct DeliveryDetail {
  store::Delivery delivery;
  std::vector<store::Attempt> attempts;  // in attempt order
  // An ordered delivery not final yet that is not its queue's head: the head it waits for.
  std::optional<store::Delivery> held_behind;
};

// The event detail of ARCHITECTURE.md section 3: {"id", "source", "received_at", "size",
// "headers": [[name, value]…], "body_base64", "deliveries": [{"destination", "status", "attempt",
// "max_attempts", "next_attempt_at" (null unless scheduled), "deadline", "reason", "chain",
// "attempts": [{"n", "started_at", "duration_ms", "status_code", "error", "retry_after",
// "response_snippet" (string or null), "response_snippet_encoding" ("utf-8" | "base64", only
// with a snippet)}]}]}. Header values whose names look like credentials
// (model::IsCredentialName) are shown as model::kRedacted.
// Without `with_body`, "body_base64" is left out (a 5 MiB body is ~7 MB of base64).
// Sets "response_snippet" of an attempt's JSON (null when nothing was recorded) and, with one,
// "response_snippet_encoding": the recorded bytes as text when they are UTF-8 ("utf-8"; a
// character cut in two at the very end by the 4 KiB limit is left out), else their base64
// ("base64").
void AddResponseSnippet(boost::json::object& attempt, const std::string& snippet);

// The head of an ordered queue, which the deliveries behind it wait for: {"event", "chain",
// "status", "attempt", "max_attempts", "next_attempt_at" (null unless scheduled), "reason"}.
boost::json::object OrderHeadToJson(const store::Delivery& head);
// A destination's held queues (Store::ListHeldQueues): {"total", "queues": [{"order_key",
// "head": OrderHeadToJson, "waiting", "waiting_since"}]}.
boost::json::object HeldQueuesToJson(const store::HeldQueues& held);

// Each delivery also has "paused_by" and "breaker_open_until" (AddPauseCause).
boost::json::object EventDetailToJson(const store::Event& e,
                                      const std::vector<DeliveryDetail>& deliveries,
                                      bool with_body = true, const PauseCauses* causes = nullptr);
// Reads the event, its deliveries and their attempts; nullopt when there is no such event. With
// `catalog`, a paused delivery's cause is read too (LoadPauseCauses).
Result<std::optional<boost::json::object>> LoadEventDetail(store::Store& store,
                                                           const std::string& id,
                                                           bool with_body = true,
                                                           const model::Catalog* catalog = nullptr);
// The query of GET /api/v1/events/{id}: `body=true|false` (default true), whether to include
// body_base64. kInvalidArgument (field "body") for another value.
Result<bool> ParseEventDetailQuery(const http::RequestHead& head);

// DestinationToJson (no secrets) plus the live state: "breaker": {"state",
// "consecutive_failures", "open_until" (null unless open), "trips", and while half-open with the
// probe out "probe_sent_at"}, "paused" (configured or by the engine),
// "paused_reason", "allowed_concurrency", "in_flight". `state` is null for a destination the
// engine has not looked at yet (closed breaker, the initial concurrency).
boost::json::object DestinationViewToJson(const model::Destination& d,
                                          const delivery::DestinationState* state);
// {"items": [destination view…], "next_cursor": null}, by name.
boost::json::object DestinationListToJson(
    const model::Catalog& catalog, const std::map<std::string, delivery::DestinationState>& states);
// {"items": [SourceToJson…], "next_cursor": null}, by name (no secrets).
boost::json::object SourceListToJson(const model::Catalog& catalog);
// {"items": [RouteToJson…], "next_cursor": null}, in catalog order.
boost::json::object RouteListToJson(const model::Catalog& catalog);

// The audit actor for an Authorization header value ("Bearer <token>"): "token:" and the first 8
// hex digits of the token's SHA-256 — enough to tell tokens apart, never the token itself.
std::string AuditActor(std::string_view authorization);

// The JSON body of a catalog create or update: required, a JSON object.
Result<boost::json::value> ParseCatalogBody(std::string_view body);

// The optional body of POST /api/v1/destinations/{name}/pause: {"reason": "…"}. An empty body
// gives `default_reason`. InvalidArgument for malformed JSON (field "body"), a field other than
// "reason" (field names it) or a reason that is not a non-empty string.
Result<std::string> ParsePauseBody(std::string_view body, const std::string& default_reason);
// The optional body of resume and reset-breaker: empty or {}. InvalidArgument otherwise.
Status ParseEmptyBody(std::string_view body);
// The optional body of POST /api/v1/events/{id}/replay: {"destination": "name"}. nullopt: all
// of the event's destinations. Errors as for ParsePauseBody.
Result<std::optional<std::string>> ParseReplayBody(std::string_view body);

// "30-day" for whole days, else the duration as configured ("90m", "1s").
std::string ReplayWindowName(Duration window);
// True when `now` is past received_at + window: the event can no longer be replayed there.
bool PastReplayWindow(TimePoint received_at, Duration window, TimePoint now);

// The 202 answer of a replay: {"event": id, "replays": [{"destination", "chain",
// "delivery_id"}]}.
boost::json::object ReplayResultToJson(const std::string& event_id,
                                       const std::vector<store::Delivery>& created);

inline constexpr int kDefaultPageLimit = kDefaultListLimit;
// ?cursor=&limit= of the paged lists other than events (audit, replays; limit 1–1000).
// InvalidArgument names the parameter.
struct PageQuery {
  std::string cursor;
  int limit = kDefaultPageLimit;
};
Result<PageQuery> ParsePageQuery(const http::RequestHead& head);
// {"id", "at", "actor", "action", "target", "count", "detail"}; detail is the stored JSON text
// parsed back (null when empty or not JSON).
boost::json::object AuditEntryToJson(const store::AuditEntry& e);
// {"items": [entry…], "next_cursor": "…" | null}
boost::json::object AuditPageToJson(const store::AuditPage& page);

// GET /api/v1/sources/{name}/rejections: {"items": [{"id", "received_at", "reason", "message",
// "headers": [[name, value]…], "size", "sha256", "remote_addr"}…], "next_cursor": "…" | null,
// "counts": RejectionCountsToJson}. Ids are strings, like every other id of the API.
boost::json::object RejectionPageToJson(const store::RejectionPage& page,
                                        const ingest::RejectionCounts& counts);
// {"since_start", "not_recorded", "last_at": RFC 3339 | null, "by_reason": {reason: n…}}.
boost::json::object RejectionCountsToJson(const ingest::RejectionCounts& counts);

// The body of POST /api/v1/replays: {"status"?: "failed", "source"?, "destination"?, "since"?,
// "until"?, "rate"?: "100/s" | 100}. An empty body is {}. InvalidArgument names the field.
struct BulkReplayRequest {
  std::string filter_json;     // the filter part, for replay::ParseReplayFilter
  std::optional<double> rate;  // per second; nullopt: the default
};
Result<BulkReplayRequest> ParseBulkReplayBody(std::string_view body);
// {"id", "state", "total", "done", "failed", "skipped", "rate", "filter": {…}, "created_at",
// "updated_at", "error": null | "…", "waiting": null | {"reason", "destination", "until",
// "message"}}. `skipped`: of a finished job, the events counted in total that no longer
// matched when the job reached them (replayed or changed meanwhile); 0 before the end.
boost::json::object ReplayJobToJson(const store::ReplayJob& job);
// {"items": [ReplayJobToJson…], "next_cursor": "…" | null}.
boost::json::object ReplayJobPageToJson(const store::ReplayJobPage& page);

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
