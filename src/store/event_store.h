#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace hookrelay::store {

struct Header {
  std::string name;
  std::string value;
  bool operator==(const Header&) const = default;
};

enum class DeliveryStatus { kScheduled, kDelivering, kDelivered, kFailed, kPaused };
std::string_view DeliveryStatusName(DeliveryStatus s);  // "scheduled", "delivering", …
std::optional<DeliveryStatus> ParseDeliveryStatus(std::string_view name);

// One delivery to create with an event: the event goes to `destination`.
struct NewDelivery {
  std::string destination;
  int max_attempts = 1;
  TimePoint next_attempt_at{};  // normally the event's received_at: due at once
  DeliveryStatus status = DeliveryStatus::kScheduled;  // kPaused when the destination is paused
  std::optional<std::string> reason;                   // why, when created kPaused
  // Ordered delivery (docs/delivery.md, "Ordered delivery"): nullopt for an unordered one. An
  // ordered delivery is claimed only while it is the head of its (destination, order_key) queue:
  // the oldest (lowest id) of that queue's deliveries that are not final. "" is the key of a
  // destination ordered as a whole.
  std::optional<std::string> order_key;
};

// A route of the event's source that did not take the event at ingest (its types or filter said
// no), and why: the first condition that failed (routing::Verdict).
struct RouteMiss {
  std::string route;        // the route's id
  std::string destination;  // where it would have gone
  std::string reason;       // "type invoice.paid is not in [customer.*]"
  bool operator==(const RouteMiss&) const = default;
};

// What arrived, exactly as received, plus one delivery per route that took it.
// The store assigns its id (AppendResult::id): time-ordered, see store/event_id.h.
struct NewEvent {
  std::string source;
  // The store keeps received times from going back: it stores max(this, the last event's
  // received_at) (in SQLite, the key's millisecond), so a time range is a key range; a delivery
  // due at received_at is due at the stored time. Normally the clock's now.
  TimePoint received_at{};
  std::vector<Header> headers;  // hop-by-hop headers already removed
  std::string content_type;
  std::string body;  // raw bytes, may contain NULs
  // The event's type, derived at ingest from its source's scheme or rule (docs/routing.md);
  // nullopt when it has none. Valid UTF-8 without control characters, at most 256 bytes.
  std::optional<std::string> type;
  // False when no route took the event at ingest (it then has no delivery until replayed to a
  // destination): listed with routed = false so that nothing is dropped silently.
  bool routed = true;
  // The routes of the source that did not take the event, with their reasons (in route order).
  std::vector<RouteMiss> route_misses;
  // When set, an event of the same source with the same key received within `dedup_window`
  // of received_at makes this append a no-op that returns the earlier event's id.
  std::optional<std::string> dedup_key;
  Duration dedup_window{0};
  std::vector<NewDelivery> deliveries;
};

struct AppendResult {
  // The stored event's id, assigned by the store (the earlier one's for a duplicate): a
  // time-ordered, ULID-shaped string (store/event_id.h), also the deliveries' webhook-id.
  std::string id;
  bool duplicate = false;  // true when nothing new was stored
  // A hint for callers that react to new events once per commit rather than once per event
  // (waking the delivery engine): true when the completion of another append that stored a new
  // event follows this one at once, on the same thread, for the same commit. Stores that cannot
  // tell leave it false (react to each).
  bool more_follow = false;
};

// A destination's current delivery: its latest chain (a replay supersedes the chains before it,
// which stay as history). "An event's status for a destination" always means this one.
struct CurrentDelivery {
  std::string destination;
  DeliveryStatus status = DeliveryStatus::kScheduled;
  int chain = 0;
  bool operator==(const CurrentDelivery&) const = default;
};

struct Event {
  std::string id;
  std::string source;
  TimePoint received_at{};
  std::vector<Header> headers;
  std::string content_type;
  std::string body;
  int64_t size = 0;  // body size in bytes
  std::optional<std::string> dedup_key;
  std::optional<std::string> type;      // NewEvent::type
  bool routed = true;                   // NewEvent::routed
  std::vector<RouteMiss> route_misses;  // NewEvent::route_misses
  // Filled by ListEvents only (empty from GetEvent): one entry per destination, its latest
  // chain, by destination name.
  std::vector<CurrentDelivery> current;
};

struct Delivery {
  int64_t id = 0;
  std::string event_id;
  std::string destination;
  int chain = 0;  // 0 for the original delivery, 1, 2, … for replays (attempts shown apart)
  DeliveryStatus status = DeliveryStatus::kScheduled;
  // Attempts made so far that count toward max_attempts ("attempt k of N" shows attempts).
  int attempts = 0;
  int max_attempts = 1;
  TimePoint next_attempt_at{};
  std::optional<TimePoint> deadline;
  std::optional<TimePoint> first_failure_at;
  Duration last_delay{0};
  std::optional<std::string> reason;  // why it failed / is paused
  std::optional<TimePoint> lease_until;
  std::string lease_owner;
  TimePoint created_at{};
  TimePoint updated_at{};
  std::optional<std::string> order_key;  // NewDelivery::order_key (a replay keeps its event's)
  // Attempts recorded that do not count toward max_attempts (failed breaker probes, see
  // Attempt::counted). The next attempt recorded is number attempts + uncounted_attempts + 1.
  int uncounted_attempts = 0;
};

struct Attempt {
  int64_t delivery_id = 0;
  int n = 0;
  TimePoint started_at{};
  int64_t duration_ms = 0;
  std::optional<int> status_code;
  std::optional<std::string> error;  // transport error class ("timeout", …) when no response
  std::optional<std::string> retry_after;
  std::string response_snippet;  // the first 4 KiB of the response body
  bool probe = false;            // sent as the circuit breaker's half-open probe
  // Counts toward the delivery's max_attempts. false for a probe that failed (the breaker's
  // question, not the delivery's: docs/delivery.md, "Circuit breaker").
  bool counted = true;
  // Set when a transform made the request (docs/transforms.md): what was sent, so a changed body
  // can be told apart from the event's. nullopt otherwise.
  struct Transformed {
    int64_t body_size = 0;
    std::string body_sha256;      // lower-case hex
    std::string headers_changed;  // names added, changed or removed, ", "-separated
    bool operator==(const Transformed&) const = default;
  };
  std::optional<Transformed> transformed;
};

// Counts of one minute for one destination (GetStats): `destination` is "" for the events received
// in that minute (only `received` set); otherwise the attempts recorded in that minute and the
// deliveries they made final (delivered, or failed for good).
struct StatsRow {
  int64_t minute = 0;  // Unix minutes: the row covers [minute·60 s, (minute+1)·60 s)
  std::string destination;
  int64_t received = 0;
  int64_t delivered = 0;
  int64_t failed = 0;
  int64_t attempts = 0;
  int64_t attempt_failures = 0;  // attempts that did not deliver
};

struct EventFilter {
  // Events with a destination whose *current* delivery (latest chain) is in this status: once a
  // replay of a failed delivery is delivered, the event is no longer listed as failed.
  std::optional<DeliveryStatus> status;
  std::optional<std::string> source;
  std::optional<std::string> destination;  // events with a delivery to this destination
  std::optional<TimePoint> since;          // received_at >= since
  std::optional<TimePoint> until;          // received_at < until
  // Events of this type: an exact name, or a prefix ending in '*' ("invoice.*": types that start
  // with "invoice." and go on; "*": any event with a type). Case-sensitive.
  std::optional<std::string> type;
  std::optional<bool> routed;  // Event::routed
  // A scoped API token's reach (docs/access.md): events of one of `sources`, or with a delivery
  // to one of `destinations` (either list may be empty).
  struct Reach {
    std::vector<std::string> sources;
    std::vector<std::string> destinations;
  };
  std::optional<Reach> within;
};

// Newest first. `next_cursor` is opaque; empty when there is no next page. Pages stay stable
// while new events arrive (the cursor is the last id seen, ids are time-ordered). A cursor this
// store did not make is kInvalidArgument (field "cursor"), never silently the first page.
struct EventPage {
  std::vector<Event> items;  // bodies are not loaded in lists (body empty, size set)
  std::string next_cursor;
};

// One delivery as the event's page shows it (EventStore::GetEventDetail).
struct DeliveryDetail {
  Delivery delivery;
  std::vector<Attempt> attempts;  // in attempt order
  // An ordered delivery not final yet that is not its queue's head: the head it waits for.
  std::optional<Delivery> held_behind;
};

// An event with everything done with it, read at one moment (EventStore::GetEventDetail).
struct EventDetail {
  Event event;                             // with its body
  std::vector<DeliveryDetail> deliveries;  // in the order they were created
};

// Events and what was done with them: append (with their deliveries), read, list, purge, and the
// dashboard's per-minute counts. A role of Store (store.h); the embedded store implements it in
// sqlite/events.cc (reads of deliveries and attempts: sqlite/deliveries.cc; purge:
// sqlite/retention.cc; counts: sqlite/stats.cc).
class EventStore {
 public:
  using AppendCallback = std::function<void(Result<AppendResult>)>;

  virtual ~EventStore() = default;

  // Appends an event with its deliveries in one transaction. `done` is called exactly once,
  // on a store thread, after the transaction is durable on disk (or with the error:
  // kUnavailable for a failed commit, kResourceExhausted for a full disk). Concurrent appends
  // are batched into one transaction (group commit); each `done` fires when its batch commits.
  // `done` runs on a store thread: it must return quickly, must not block and must not call the
  // store's synchronous write methods (including AppendEventSync), which would wait for the very
  // thread running it.
  virtual void AppendEvent(NewEvent event, AppendCallback done) = 0;
  // Blocking convenience wrapper around AppendEvent.
  Result<AppendResult> AppendEventSync(NewEvent event);

  virtual Result<std::optional<Event>> GetEvent(const std::string& id) = 0;
  // Several events at once, in the order of `ids` (nullopt where there is no such event): the
  // delivery engine reads a claim's events with one call. A store may read them in one go (the
  // embedded one: one read transaction instead of one per event, measured ~2x cheaper for the
  // claimer); this default calls GetEvent for each.
  virtual Result<std::vector<std::optional<Event>>> GetEvents(const std::vector<std::string>& ids);
  virtual Result<EventPage> ListEvents(const EventFilter& filter, const std::string& cursor,
                                       int limit) = 0;
  virtual Result<std::vector<Delivery>> GetDeliveries(const std::string& event_id) = 0;
  virtual Result<std::vector<Attempt>> GetAttempts(int64_t delivery_id) = 0;
  // The event page's read: the event, its deliveries, each one's attempts and, for an ordered
  // delivery that waits, the head it waits for, all in one read transaction, so that a
  // delivery's status and attempt count agree with the attempts listed (separate reads could
  // straddle a recorded attempt). nullopt when there is no such event.
  virtual Result<std::optional<EventDetail>> GetEventDetail(const std::string& id) = 0;

  // Deletes up to `batch` events received before `cutoff` whose deliveries are all final
  // (delivered or failed; or that have none), with their deliveries and attempts, in one short
  // transaction (so ingest never waits long). Events with a delivery still scheduled,
  // delivering or paused are kept. Returns how many were deleted. The PostgreSQL store also drops
  // whole days before `cutoff` with no open delivery (docs/postgres.md), which may exceed `batch`.
  virtual Result<int64_t> PurgeEventsBefore(TimePoint cutoff, int batch) = 0;

  // The per-minute counts of the minutes that overlap [since, until) (at most one row per minute
  // and destination: kept as counters when events arrive and attempts are recorded, never computed
  // by scanning events). The default answers kUnavailable.
  virtual Result<std::vector<StatsRow>> GetStats(TimePoint /*since*/, TimePoint /*until*/) {
    return Status::Unavailable("this store keeps no statistics");
  }
};

}  // namespace hookrelay::store
