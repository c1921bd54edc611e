#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/background_loop.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "http/request.h"
#include "ingest/verify.h"
#include "model/source.h"
#include "store/store.h"

namespace hookrelay::ingest {

struct RejectionOptions {
  // Rows kept per source: each write deletes the source's older ones (Store::AppendRejections).
  int keep_per_source = 1000;
  // Rows written per source and second (of the request's receive time); more are counted, not
  // written, so a flood of bad requests costs the store at most this many rows a second.
  int rows_per_second = 20;
  // Rows waiting for the writer thread, all sources together, and their bytes (headers); past
  // either, a rejection is counted, not written.
  size_t queue_rows = 2000;
  size_t queue_bytes = 4 << 20;
  // How often the writer thread writes what is queued (one store transaction per flush).
  Duration flush_interval = std::chrono::milliseconds(200);
  // (Rows past their age are deleted by retention: RetentionOptions::rejections_max_age.)
};

// A source's counts since this process started. Exact: every rejection is counted when it is
// refused, whether or not a row is written for it.
struct RejectionCounts {
  int64_t total = 0;
  // Counted but not written: over rows_per_second, the queue full, or the store failed.
  int64_t not_recorded = 0;
  std::array<int64_t, std::size(kRejectReasons)> by_reason{};  // indexed like kRejectReasons
  std::optional<TimePoint> last_at;
};

// What a rejected request looks like once kept: the headers as kept for events (KeptHeaders),
// with the value of every credential (IsCredentialHeader, the source's signature header, which
// carries a MAC) replaced by model::kRedacted, at most kMaxRejectionHeaders of them, each name
// and value cut to kMaxRejectionHeaderName / kMaxRejectionHeaderValue bytes; the body's size and
// SHA-256, never the body. Pure.
inline constexpr size_t kMaxRejectionHeaders = 50;
inline constexpr size_t kMaxRejectionHeaderName = 128;
inline constexpr size_t kMaxRejectionHeaderValue = 256;
store::Rejection DescribeRejection(const model::Source& source, RejectReason reason,
                                   std::string_view message, const http::Request& request,
                                   TimePoint now);

// Records requests to /in/{source} that failed verification (docs/ingest.md, "Rejected
// requests"), without ever slowing down or endangering good ingest: Record() counts at once and
// only queues a row in memory; a thread of its own writes the queue every flush_interval in one
// store call. Rows are bounded three ways: per source and second (rows_per_second), in the queue
// (queue_rows, queue_bytes) and in the store (keep_per_source, and max_age through retention).
//
// Thread-safe. `store` and `clock` must outlive the recorder.
class RejectionRecorder {
 public:
  RejectionRecorder(store::Store& store, const Clock& clock, RejectionOptions options = {});
  // Stops the thread (writing what is queued).
  ~RejectionRecorder();
  RejectionRecorder(const RejectionRecorder&) = delete;
  RejectionRecorder& operator=(const RejectionRecorder&) = delete;

  // Starts the writer thread. REQUIRES: not started.
  void Start();
  // Writes what is queued and stops the thread. Idempotent.
  void Stop();

  // On the request path: counts the rejection and, when the source's rate and the queue allow,
  // queues its row. Never waits for the store.
  void Record(const model::Source& source, RejectReason reason, std::string_view message,
              const http::Request& request, TimePoint now);

  // Writes what is queued now, on the calling thread (the writer thread does this every
  // flush_interval). A store error drops the rows (counted as not recorded) and is returned.
  Status Flush();

  RejectionCounts Counts(const std::string& source) const;
  std::map<std::string, RejectionCounts> AllCounts() const;
  const RejectionOptions& options() const { return options_; }

 private:
  struct PerSource {
    RejectionCounts counts;
    int64_t second = 0;  // the Unix second rows_this_second counts in
    int rows_this_second = 0;
  };
  // One pass of the loop: writes what is queued.
  Duration Pass();

  store::Store& store_;
  const Clock& clock_;
  const RejectionOptions options_;

  Mutex flush_mu_;  // one flush at a time, so rows are written in the order they were queued

  mutable Mutex mu_;
  std::map<std::string, PerSource> sources_ GUARDED_BY(mu_);
  std::vector<store::Rejection> queue_ GUARDED_BY(mu_);
  size_t queue_bytes_ GUARDED_BY(mu_) = 0;
  BackgroundLoop loop_;  // last: stopped first, while what its passes use still exists
};

}  // namespace hookrelay::ingest
