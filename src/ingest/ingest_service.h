#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "http/request.h"
#include "http/server.h"
#include "ingest/rejection_recorder.h"
#include "ingest/type_counts.h"
#include "model/registry.h"
#include "store/store.h"

namespace hookrelay::ingest {

// The headers of an incoming webhook worth keeping: all but hop-by-hop fields (Connection and
// the fields it names, Keep-Alive, Transfer-Encoding, TE, Trailer, Upgrade, Proxy-*), and the
// framing fields Content-Length and Expect. Order and names are kept as received; the values of
// credentials meant for hookrelay (Authorization, Cookie) are replaced by model::kRedacted.
std::vector<store::Header> KeptHeaders(const http::HeaderList& headers);
std::vector<store::Header> KeptHeaders(http::HeaderList&& headers);  // moves the kept fields
// The same in place: drops the fields KeptHeaders drops and redacts the credentials' values.
void KeepHeaders(http::HeaderList& headers);

// The JSON body, parsed into `parsed` the first time (a cache across a fan-out), or nullptr when
// it is not JSON.
const boost::json::value* ParsedBody(std::string_view body,
                                     std::optional<boost::json::value>& parsed);

// The dedup key of a request under `rule`: a header's value, or a top-level JSON field of the
// body: a string as it is; a number or boolean as "\xFF" "number:" + its exact text or
// "\xFF" "bool:true" (0xFF never occurs in a JSON string, so `1`, `"1"`, `1.0`, `true` and
// `"true"` are all different keys). nullopt when the rule is none, the header is
// missing, or the body is not a JSON object with that field.
// A key longer than kMaxPlainDedupKey bytes is kept as "\xFFsha256:" and its hex SHA-256 (so
// that PostgreSQL can index it; the same value still matches).
inline constexpr size_t kMaxPlainDedupKey = 1024;
std::optional<std::string> DedupKey(const model::DedupRule& rule, const http::RequestHead& head,
                                    std::string_view body);

// The order key of a delivery to `d` (docs/delivery.md, "Ordered delivery"): nullopt for an
// unordered destination, and for an event without the key (a missing or empty header; a body that
// is not JSON, or whose path is missing, null, an object, an array or ""): such an event is
// delivered unordered. "" for a destination ordered as a whole. Otherwise the header's value, or
// the value at the JSON path: a string as it is, a number or boolean as its JSON text, each as
// StoredOrderKey keeps it. `parsed` caches the body's parse across a fan-out (parsed once, and
// only for a JSON order key).
std::optional<std::string> OrderKeyOf(const model::Destination& d, const http::RequestHead& head,
                                      std::string_view body,
                                      std::optional<boost::json::value>& parsed);

// An order key as it is stored: the value itself when it is valid UTF-8 of at most
// kMaxPlainOrderKey bytes without control characters; otherwise "sha256:" and the lower-case hex
// SHA-256 of its bytes (71 characters). The same value gives the same queue either way, and every
// key fits PostgreSQL's text column and its index (which refuse a NUL, bytes that are not UTF-8
// and entries past ~2,700 bytes) and can be shown on a terminal. Pure.
inline constexpr size_t kMaxPlainOrderKey = 256;
std::string StoredOrderKey(std::string value);

// How long a dedup key is remembered: the longest replay window of the source's destinations
// (30 days when it has none).
Duration DedupWindow(const model::Catalog& catalog, const std::string& source);

// Builds what to store for a request to `source`: the event with its type and one delivery per
// route that takes it (paused destinations get paused deliveries); the routes that do not take it
// are its route_misses with their reasons, and an event no route took is routed = false. Pure. The
// body and header fields are moved out of `request` (pass a copy to keep them).
store::NewEvent BuildEvent(const model::Catalog& catalog, const model::Source& source,
                           http::Request request, TimePoint now);

// Counters for /metrics and tests. Monotonic.
struct IngestStats {
  std::atomic<int64_t> accepted{0};
  std::atomic<int64_t> duplicates{0};
  std::atomic<int64_t> rejected{0};        // 4xx
  std::atomic<int64_t> store_failures{0};  // 503
};

// POST /in/{source}: verify, dedup, store durably, then answer 202 {"id": …}.
// Never answers 2xx for an event that is not committed: store errors give 503 with
// Retry-After, so the provider retries.
class IngestService {
 public:
  IngestService(model::Registry& registry, store::Store& store, const Clock& clock);
  // Waits until the store has finished with every append this service started: their
  // completions run on a store thread and use the service (its counters, on_stored_), so it must
  // not go before them, even when a node stops while requests are in flight.
  ~IngestService();
  IngestService(const IngestService&) = delete;
  IngestService& operator=(const IngestService&) = delete;

  // Before the body is read: 405 for methods other than POST, 404 for an unknown source,
  // else the source's body limit.
  http::Handler::HeadDecision OnHead(const http::RequestHead& head, const std::string& source);
  void Handle(http::Request request, const std::string& source, http::Responder respond);

  const IngestStats& stats() const { return stats_; }
  const TypeCounts& type_counts() const { return type_counts_; }
  // Called (on a store thread) once new events are durably stored, after their 202s, e.g. to wake
  // the delivery engine: once per batch the store commits together (AppendResult::more_follow),
  // so at least once after each new event. Set before serving.
  void SetOnStored(std::function<void()> on_stored) { on_stored_ = std::move(on_stored); }
  // Where requests that fail verification are recorded (docs/ingest.md, "Rejected requests");
  // none when null. Set before serving; must outlive the service.
  void SetRejections(RejectionRecorder* rejections) { rejections_ = rejections; }

 private:
  model::Registry& registry_;
  store::Store& store_;
  const Clock& clock_;
  IngestStats stats_;
  TypeCounts type_counts_;
  std::function<void()> on_stored_;
  RejectionRecorder* rejections_ = nullptr;

  // Appends whose completion the store still holds (a count the destructor waits to reach 0).
  Mutex appends_mu_;
  std::condition_variable appends_done_;
  int appends_pending_ GUARDED_BY(appends_mu_) = 0;
};

}  // namespace hookrelay::ingest
