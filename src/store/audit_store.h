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
#include "store/event_store.h"

namespace hookrelay::store {

// One line of the audit trail: who did what to which object, when. Written by the management API
// for every change it makes (replays, pause/resume, breaker resets, config changes), read back
// newest first.
struct AuditEntry {
  int64_t id = 0;  // assigned by AppendAudit (ignored there); increasing, never reused
  TimePoint at{};
  // Who: "token:<name>", the API token's name ("token:bootstrap": HOOKRELAY_TOKEN); never a token.
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

// The audit trail and the rejected requests. A role of Store (store.h); the embedded store
// implements it in sqlite/audit.cc (PurgeRejectionsBefore: sqlite/retention.cc).
class AuditStore {
 public:
  virtual ~AuditStore() = default;

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
};

}  // namespace hookrelay::store
