#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "policy/breaker.h"

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

// What arrived, exactly as received, plus one delivery per route.
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
};

// One replay chain to create (Store::CreateReplays).
struct NewReplay {
  std::string event_id;
  std::string destination;
  int max_attempts = 1;
  TimePoint due{};
};

// The new state of a delivery after an attempt (written with the attempt, atomically).
struct DeliveryUpdate {
  DeliveryStatus status = DeliveryStatus::kDelivered;
  TimePoint next_attempt_at{};
  std::optional<TimePoint> deadline;
  std::optional<TimePoint> first_failure_at;
  Duration last_delay{0};
  std::optional<std::string> reason;
};

// One attempt with the delivery's new state, for Store::RecordAttempts.
struct AttemptRecord {
  Attempt attempt;
  DeliveryUpdate update;
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
};

// Newest first. `next_cursor` is opaque; empty when there is no next page. Pages stay stable
// while new events arrive (the cursor is the last id seen, ids are time-ordered). A cursor this
// store did not make is kInvalidArgument (field "cursor"), never silently the first page.
struct EventPage {
  std::vector<Event> items;  // bodies are not loaded in lists (body empty, size set)
  std::string next_cursor;
};

// One line of the audit trail: who did what to which object, when. Written by the management API
// for every change it makes (replays, pause/resume, breaker resets, config changes), read back
// newest first.
struct AuditEntry {
  int64_t id = 0;  // assigned by AppendAudit (ignored there); increasing, never reused
  TimePoint at{};
  // Who: e.g. "token:ab12cd34" — a short prefix of the token's hash, never the token itself.
  std::string actor;
  // What: "replay", "bulk_replay", "pause", "resume", "reset_breaker", "config_change", …
  std::string action;
  std::string target;  // what it was done to: an event id, a destination name, a replay id…
  int64_t count = 0;   // how many objects it touched (events replayed, deliveries paused…)
  std::string detail;  // JSON text with the particulars (a filter, a rate); may be empty
  bool operator==(const AuditEntry&) const = default;
};

// Newest first. `next_cursor` is opaque; empty when there is no next page.
struct AuditPage {
  std::vector<AuditEntry> items;
  std::string next_cursor;
};

// A request to /in/{source} refused because it failed verification (docs/ingest.md, "Rejected
// requests"): what it looked like, never its body. Written by ingest::RejectionRecorder.
struct Rejection {
  int64_t id = 0;  // assigned by AppendRejections (ignored there); increasing, never reused
  std::string source;
  TimePoint received_at{};
  std::string reason;           // ingest::RejectReasonName: "signature_mismatch", …
  std::string message;          // the verifier's words; never a secret
  std::vector<Header> headers;  // as kept for events, with every credential's value replaced
  int64_t size = 0;             // body bytes
  std::string sha256;           // the body's SHA-256, lower-case hex
  std::string remote_addr;      // the peer's IP address ("" when unknown)
  bool operator==(const Rejection&) const = default;
};

// Newest first. `next_cursor` is opaque; empty when there is no next page.
struct RejectionPage {
  std::vector<Rejection> items;
  std::string next_cursor;
};

// An ordered queue whose head holds deliveries back (Store::ListHeldQueues): the head is the
// oldest delivery of (destination, order_key) that is not final, and `waiting` more wait for it.
struct HeldQueue {
  std::string order_key;      // "" for a destination ordered as a whole
  Delivery head;              // with its lease overlaid (kDelivering while being sent)
  int64_t waiting = 0;        // open deliveries behind the head (>= 1)
  TimePoint waiting_since{};  // created_at of the oldest of them: how long the queue has held it
};

// The queues that wait longest first (waiting_since, then the head's id); `total` counts every
// held queue of the destination, `queues` holds at most the limit asked for.
struct HeldQueues {
  std::vector<HeldQueue> queues;
  int64_t total = 0;
};

// A bulk replay job (POST /api/v1/replays): any node may claim it, so all its state is here.
enum class ReplayJobState { kQueued, kRunning, kDone, kCancelled, kFailed };
std::string_view ReplayJobStateName(ReplayJobState s);  // "queued", "running", …
std::optional<ReplayJobState> ParseReplayJobState(std::string_view name);
inline bool IsFinal(ReplayJobState s) {
  return s == ReplayJobState::kDone || s == ReplayJobState::kCancelled ||
         s == ReplayJobState::kFailed;
}

struct ReplayJob {
  std::string id;  // ULID, chosen by the caller
  TimePoint created_at{};
  TimePoint updated_at{};  // set by the store on every write
  std::string filter;      // JSON text: {"status", "source", "destination", "since", "until"}
  double rate = 0;         // chains created per second
  ReplayJobState state = ReplayJobState::kQueued;
  // Events to replay: counted once, before the first chain is created (by the API when it
  // creates the job), and never changed afterwards.
  int64_t total = 0;
  int64_t done = 0;    // events whose replay chains were created
  int64_t failed = 0;  // events that could not be replayed (past the replay window, …)
  std::string cursor;  // where the runner resumes (a ListEvents cursor); empty: from the start
  std::optional<std::string> error;  // why the job failed
  // JSON text of why the job cannot make progress now ({"reason", "destination", "until",
  // "message"}: an open breaker, a paused destination); nullopt while it can. Written by the
  // runner with its progress.
  std::optional<std::string> waiting;
  std::optional<TimePoint> lease_until;
  std::string lease_owner;
  bool operator==(const ReplayJob&) const = default;
};

// The catalog (sources, destinations, routes) as written: the API's JSON of each object, secrets
// included, so the store can rebuild the live catalog at start. The config file's objects are
// written here at every start (origin "config"); objects created through the API have origin
// "api" and survive restarts.
enum class CatalogKind { kSource, kDestination, kRoute };
std::string_view CatalogKindName(CatalogKind k);  // "source", "destination", "route"

struct CatalogObject {
  CatalogKind kind = CatalogKind::kSource;
  std::string name;        // a source's or destination's name; a route's id
  std::string spec;        // JSON text of the object, secrets included: never shown as it is
  std::string origin;      // "config" or "api"
  TimePoint created_at{};  // set by the store when the object is first written
  TimePoint updated_at{};  // set by the store on every write
  bool operator==(const CatalogObject&) const = default;
};

// One change to the catalog, applied in one transaction with its audit entry: `put` objects are
// inserted or replaced (keeping their created_at and their place in the order), `remove` ones are
// deleted (absent ones are ignored); a removed destination's stored breaker and pause are
// deleted with it (unless the change also puts it), so one made again starts afresh.
struct CatalogChange {
  std::vector<CatalogObject> put;
  std::vector<std::pair<CatalogKind, std::string>> remove;
  std::optional<AuditEntry> audit;  // appended in the same transaction when set
  // Destinations that must have no delivery left that is not final (scheduled, delivering,
  // paused), checked in the change's own transaction: a replay that adds one just before
  // cannot slip between the check and a delete. Otherwise FailedPrecondition ("destination "d"
  // has N deliveries that are not delivered or failed yet"), nothing written.
  std::vector<std::string> require_no_open_deliveries;
  // When set, the change is written only if the catalog's version (Store::CatalogVersion) is
  // still this one: a node that validated the change against an older catalog (another node
  // changed it meanwhile) gets kUnavailable ("the catalog was changed meanwhile"), nothing
  // written, and reloads before trying again.
  std::optional<int64_t> if_version;
};

// Newest first. `next_cursor` is opaque; empty when there is no next page.
struct ReplayJobPage {
  std::vector<ReplayJob> items;
  std::string next_cursor;
};

// The reason of the pause the engine stores when an endpoint answers 410 Gone (pause_on_gone):
// the API tells it from the operator's pause by it (paused_by "gone").
inline constexpr std::string_view kGonePauseReason =
    "paused: the endpoint answered 410 Gone; fix it, then resume";

// A destination paused by the operator (or by a 410 Gone): shared by every node using the store.
struct DestinationPause {
  std::string reason;
  TimePoint since{};
  bool operator==(const DestinationPause&) const = default;
};

// What every node must obey for one destination: its breaker and its pause.
struct DestinationControl {
  policy::BreakerSnapshot breaker;        // a closed breaker when none was stored
  std::optional<DestinationPause> pause;  // nullopt: not paused
  bool operator==(const DestinationControl&) const = default;
};

// One input for Store::UpdateBreaker, at the time it happened.
struct BreakerInputAt {
  policy::BreakerInput input = policy::BreakerInput::kFailure;
  TimePoint at{};
};

// The store of events, deliveries and attempts. Every method is thread-safe.
// Implementations: SqliteStore (embedded, default) and PostgresStore (docs/postgres.md); OpenStore
// (store/open_store.h) opens the one an address names.
class Store {
 public:
  using AppendCallback = std::function<void(Result<AppendResult>)>;

  virtual ~Store() = default;

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

  // Leases up to `limit` deliveries that are kScheduled with next_attempt_at <= now, or
  // kDelivering with an expired lease (a crashed sender), oldest due first: they become
  // kDelivering with lease_until = now + lease and lease_owner = owner. With a non-empty
  // `destination`, only that destination's deliveries are considered. Either way the cost grows
  // with `limit`, not with the backlog (of this destination or of others).
  // A store used by one process only (the embedded one: its data directory is locked) may keep
  // leases in memory and write nothing durable here; reads still show a leased delivery as
  // kDelivering with its lease. After a crash such leases are gone and what was in flight is
  // simply due again (sent again with the same webhook-id: at-least-once). A store shared by
  // several nodes persists them, so that a dead node's leases expire and are taken over.
  virtual Result<std::vector<Delivery>> ClaimDue(TimePoint now, int limit, Duration lease,
                                                 const std::string& owner,
                                                 const std::string& destination = "") = 0;
  // The earliest next_attempt_at among kScheduled deliveries that may be claimed (of
  // `destination` when it is not empty), to sleep until; nullopt when there are none. An ordered
  // delivery held behind its queue's head is not one of them: it is claimable only once it is
  // the head.
  virtual Result<std::optional<TimePoint>> NextDueAt(const std::string& destination = "") = 0;
  // For the stall metrics: how many kScheduled deliveries are due at `now` (next_attempt_at <=
  // now), and the earliest next_attempt_at among those that may be claimed (now minus it is the
  // age of the oldest due-but-unsent delivery; nullopt when none is due). Leases, expired or not,
  // are not counted. The count includes ordered deliveries held behind their queue's head (they
  // are waiting to be sent); the age does not (a head retrying on its schedule is not a stalled
  // engine): at most 4,096 held ones in a row are looked past (SQLite).
  virtual Result<int64_t> CountDue(TimePoint now) = 0;
  virtual Result<std::optional<TimePoint>> OldestDueAt(TimePoint now) = 0;
  // CountDue per destination (destinations with none due are absent), for the per-destination
  // metrics. The default answers kUnavailable (the gauges then stay 0).
  virtual Result<std::map<std::string, int64_t>> CountDueByDestination(TimePoint /*now*/) {
    return Status::Unavailable("this store does not count due deliveries per destination");
  }
  // The per-minute counts of the minutes that overlap [since, until) (at most one row per minute
  // and destination: kept as counters when events arrive and attempts are recorded, never computed
  // by scanning events). The default answers kUnavailable.
  virtual Result<std::vector<StatsRow>> GetStats(TimePoint /*since*/, TimePoint /*until*/) {
    return Status::Unavailable("this store keeps no statistics");
  }
  // Records an attempt and the delivery's new state in one transaction; clears the lease.
  // `attempt.n` is the attempt's number among all of the delivery's attempts (counted or not):
  // a counted attempt sets the delivery's attempts to n - uncounted_attempts, one not counted
  // sets its uncounted_attempts to n - attempts (so attempt n + 1 comes next either way).
  // kFailedPrecondition when the delivery is no longer leased by `owner`; kNotFound when there is
  // no such delivery. Nothing is written when it fails.
  virtual Status RecordAttempt(const Attempt& attempt, const DeliveryUpdate& update,
                               const std::string& owner) = 0;
  // Records many attempts as RecordAttempt does, all in one transaction (one commit for the
  // batch). Returns one Status per record, in order: kFailedPrecondition / kNotFound for a record
  // whose delivery is not leased by `owner` / does not exist (nothing of that record is written;
  // the others are). When the batch cannot be written (a failed commit, a full disk), every
  // record reports that error and nothing is written. Each record is durable when this returns OK
  // for it.
  virtual std::vector<Status> RecordAttempts(const std::vector<AttemptRecord>& records,
                                             const std::string& owner) = 0;
  // Gives back claims that will not be sent (the destination was paused while the claim ran):
  // each delivery still leased by `owner` is unleased, unchanged and claimable again; no attempt
  // is recorded. Others (not leased, or leased by another owner) are left alone. Returns how many
  // were released.
  virtual Result<int64_t> ReleaseClaims(const std::vector<int64_t>& delivery_ids,
                                        const std::string& owner) = 0;

  // Breaker state per destination, shared by all nodes using the store.
  virtual Result<std::optional<policy::BreakerSnapshot>> GetBreaker(
      const std::string& destination) = 0;
  virtual Status PutBreaker(const std::string& destination,
                            const policy::BreakerSnapshot& snapshot) = 0;

  // The shared breaker, changed atomically (docs/postgres.md, "Shared breaker and pause"): in one
  // transaction holding the destination's row (a closed breaker when there is none yet), applies
  // `inputs` in order with policy::ApplyBreakerInput under `config`, writes the row only when it
  // changed, and returns one step per input (its transition, kProbe's answer, the snapshot after
  // it). Failures counted by several nodes thus add up, and a transition (the trip, the half-open
  // probe, the close) is returned to exactly one caller. kInvalidArgument for no inputs.
  virtual Result<std::vector<policy::BreakerStep>> UpdateBreaker(
      const std::string& destination, const policy::BreakerConfig& config,
      const std::vector<BreakerInputAt>& inputs) = 0;
  // The destination's breaker and pause (a closed breaker, no pause, when nothing is stored).
  virtual Result<DestinationControl> GetDestinationControl(const std::string& destination) = 0;
  // Every destination with stored control state (a breaker or a pause), by name.
  virtual Result<std::map<std::string, DestinationControl>> ListDestinationControls() = 0;
  // Pauses the destination durably for every node (reason, since = now; a destination already
  // paused keeps its `since` and takes the new reason) and, in the same transaction, moves its
  // kScheduled deliveries to kPaused as PauseDeliveries does. Returns how many deliveries changed.
  virtual Result<int64_t> PauseDestination(const std::string& destination,
                                           const std::string& reason, TimePoint now) = 0;
  // Clears the pause and, in the same transaction, makes the kPaused deliveries due at `now` (as
  // ResumeDeliveries). Returns how many deliveries changed.
  virtual Result<int64_t> ResumeDestination(const std::string& destination, TimePoint now) = 0;

  // Moves every kScheduled delivery of `destination` to kPaused (with `reason`), or every kPaused
  // one back to kScheduled due at `now`. Returns how many changed.
  virtual Result<int64_t> PauseDeliveries(const std::string& destination,
                                          const std::string& reason) = 0;
  virtual Result<int64_t> ResumeDeliveries(const std::string& destination, TimePoint now) = 0;

  // The head of an ordered delivery queue: the oldest delivery of `destination` with this
  // order key that is not final (delivered or failed), which the others of the queue wait for;
  // nullopt when the queue is empty. For the event detail ("held behind …").
  virtual Result<std::optional<Delivery>> OrderHead(const std::string& destination,
                                                    const std::string& order_key) = 0;

  // The ordered queues of `destination` whose head holds at least one delivery back, longest
  // waiting first, at most `limit` (clamped to 1..kMaxListLimit) of them; for the destination's
  // detail ("held behind evt_… since 14:02"). Reads the open ordered deliveries of the
  // destination (the partial index deliveries_ordered), so it costs one pass over its backlog.
  virtual Result<HeldQueues> ListHeldQueues(const std::string& destination, int limit) = 0;

  // Starts a new delivery chain for an event to one destination (a replay): chain = previous
  // max + 1, attempts 0, due at `now`. kNotFound when the event does not exist. The new chain
  // keeps the order key of the chain before it, and as a new delivery it queues at the tail of
  // that key's queue.
  virtual Result<Delivery> CreateReplay(const std::string& event_id, const std::string& destination,
                                        int max_attempts, TimePoint now) = 0;

  // Many replays in one transaction (a bulk replay's batch): each starts a chain as CreateReplay
  // does, due at its own `due` (which may be in the future: the engine sends it then). Replays of
  // events that no longer exist are skipped. Returns how many chains were created.
  virtual Result<int64_t> CreateReplays(const std::vector<NewReplay>& replays) = 0;

  // Deletes up to `batch` events received before `cutoff` whose deliveries are all final
  // (delivered or failed; or that have none), with their deliveries and attempts, in one short
  // transaction (so ingest never waits long). Events with a delivery still scheduled,
  // delivering or paused are kept. Returns how many were deleted. The PostgreSQL store also drops
  // whole days before `cutoff` with no open delivery (docs/postgres.md), which may exceed `batch`.
  virtual Result<int64_t> PurgeEventsBefore(TimePoint cutoff, int batch) = 0;

  // Counts for metrics and readiness: current deliveries (latest chains, as EventFilter::status
  // means) in `status`. For kScheduled, kDelivering and kPaused it costs an index count or less,
  // not a walk of the table; the embedded store walks its deliveries for kDelivered and kFailed
  // (no index covers them, so that ingest and results write less).
  virtual Result<int64_t> CountDeliveries(DeliveryStatus status) = 0;

  // Appends one entry to the audit trail (its `id` is ignored: the store assigns the next one),
  // durably, before returning. kInvalidArgument when `action` is empty.
  virtual Status AppendAudit(const AuditEntry& entry) = 0;
  // Up to `limit` (clamped to [1, 1000]) entries, newest first, starting after `cursor` (a
  // next_cursor from an earlier page; empty for the first page). Pages stay stable while new
  // entries are appended. kInvalidArgument for a cursor this store did not make.
  virtual Result<AuditPage> ListAudit(const std::string& cursor, int limit) = 0;

  // Rejected requests. AppendRejections writes `rejections` (their ids are ignored: the store
  // assigns increasing ones) and then, in the same transaction, deletes all but the newest
  // `keep_per_source` rows of each source it wrote for, so a source never holds more than that.
  // kInvalidArgument for keep_per_source < 1 or a rejection without a source or reason; nothing
  // is written then.
  virtual Status AppendRejections(const std::vector<Rejection>& rejections,
                                  int keep_per_source) = 0;
  // Up to `limit` (clamped to [1, 1000]) of `source`'s rejections, newest first, starting after
  // `cursor` (a next_cursor from an earlier page; empty for the first). Pages stay stable while
  // rejections are appended. kInvalidArgument for a cursor this store did not make.
  virtual Result<RejectionPage> ListRejections(const std::string& source, const std::string& cursor,
                                               int limit) = 0;
  // Deletes up to `batch` rejections (of any source) received before `cutoff`, oldest first.
  // Returns how many were deleted.
  virtual Result<int64_t> PurgeRejectionsBefore(TimePoint cutoff, int batch) = 0;

  // Bulk replay jobs. CreateReplayJob stores `job` as given (kInvalidArgument for an empty id,
  // kFailedPrecondition when the id exists).
  virtual Status CreateReplayJob(const ReplayJob& job) = 0;
  virtual Result<std::optional<ReplayJob>> GetReplayJob(const std::string& id) = 0;
  // Up to `limit` (clamped to [1, 1000]) jobs, newest first, starting after `cursor` (a
  // next_cursor from an earlier page; empty for the first). Pages stay stable while jobs are
  // added (job ids are time-ordered ULIDs). kInvalidArgument for a cursor that cannot be one.
  virtual Result<ReplayJobPage> ListReplayJobs(const std::string& cursor, int limit) = 0;
  // Leases the oldest job that is kQueued, or kRunning with a lease expired at `now` (its node
  // died): it becomes kRunning with lease_until = now + lease and lease_owner = owner. nullopt
  // when there is none.
  virtual Result<std::optional<ReplayJob>> ClaimReplayJob(TimePoint now, Duration lease,
                                                          const std::string& owner) = 0;
  // Writes a claimed job's progress (state, total, done, failed, cursor, error, waiting,
  // lease_until).
  // kFailedPrecondition when the job is no longer leased by `owner` or is no longer kRunning
  // (cancelled: the runner stops); kNotFound when there is no such job. Nothing is written then.
  virtual Status UpdateReplayJob(const ReplayJob& job, const std::string& owner) = 0;
  // A kQueued or kRunning job becomes kCancelled (lease cleared); a final job is left as it is.
  // Returns the job as it is afterwards; nullopt when there is no such job.
  virtual Result<std::optional<ReplayJob>> CancelReplayJob(const std::string& id,
                                                           TimePoint now) = 0;

  // The catalog: every object, in the order they were first written. ApplyCatalogChange writes
  // a change and its audit entry atomically (kInvalidArgument for an empty name or spec).
  virtual Result<std::vector<CatalogObject>> ListCatalog() = 0;
  virtual Status ApplyCatalogChange(const CatalogChange& change) = 0;
  // The catalog's version: 0 until the first ApplyCatalogChange, then raised by one by every
  // change, in the change's own transaction (so a version read before ListCatalog never names a
  // catalog newer than the list). Cheap (one row): nodes poll it to notice another node's change.
  virtual Result<int64_t> CatalogVersion() = 0;

  // --- Several nodes on one store (docs/postgres.md, "Several nodes") ---

  // What another node committed that this node acts on at once, instead of at its next poll.
  enum class Change {
    kNewWork,     // deliveries became due: events stored, replays created, deliveries resumed
    kCatalog,     // the catalog changed (CatalogVersion went up)
    kReplayJobs,  // a bulk replay job was queued or cancelled
  };
  using ChangeCallback = std::function<void(Change)>;
  // Calls `on_change` soon after another node commits such a change (on a store thread: it must
  // return quickly, must not block and must not call the store). Changes this store's own caller
  // made are not reported (the process wakes its parts itself). When the store may have missed
  // some (its listening connection was lost and is back), it reports every kind. Call once,
  // before the changes of interest; the callback must stay valid until the store is destroyed.
  // A store used by one process (the embedded one: its directory is locked) has no other node,
  // and keeps this default, which never calls it.
  virtual void Watch(ChangeCallback /*on_change*/) {}
  // Stops calling the Watch callback: when it returns, no call is running and none follows
  // (before the parts the callback reaches are destroyed). Idempotent.
  virtual void Unwatch() {}

  // For /readyz: OK when the store answers now; otherwise why not, in words that may be shown to
  // anyone (no address, user, password or path: /readyz is not authenticated). The details go
  // to the log. The default probes NextDueAt.
  virtual Status CheckReady();
};

}  // namespace hookrelay::store
