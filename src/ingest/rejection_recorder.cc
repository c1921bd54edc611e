#include "ingest/rejection_recorder.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "common/crypto.h"
#include "ingest/ingest_service.h"
#include "model/destination.h"

namespace hookrelay::ingest {
namespace {

size_t ReasonIndex(RejectReason r) {
  for (size_t i = 0; i < std::size(kRejectReasons); ++i) {
    if (kRejectReasons[i] == r) return i;
  }
  return 0;
}

std::string Cut(std::string s, size_t max) {
  if (s.size() <= max) return s;
  s.resize(max);
  s += "…";
  return s;
}

size_t RowBytes(const store::Rejection& r) {
  size_t n = r.message.size() + r.sha256.size() + r.remote_addr.size() + 64;
  for (const store::Header& h : r.headers) n += h.name.size() + h.value.size() + 8;
  return n;
}

}  // namespace

store::Rejection DescribeRejection(const model::Source& source, RejectReason reason,
                                   std::string_view message, const http::Request& request,
                                   TimePoint now) {
  store::Rejection r;
  r.source = source.name;
  r.received_at = now;
  r.reason = std::string(RejectReasonName(reason));
  r.message = std::string(message);
  r.size = static_cast<int64_t>(request.body.size());
  r.sha256 = HexEncode(Sha256(request.body));
  r.remote_addr = request.remote_address;
  // The signature header carries a MAC of the body under the source's secret: not the secret, but
  // a valid one could be replayed to another receiver sharing it, so it is redacted like any
  // credential. IsCredentialHeader covers the built-in schemes' headers (their names hold
  // "signature" or "hmac"); the generic scheme's header is named in the config.
  std::vector<std::string> secret_headers;
  if (source.verify && !source.verify->header.empty()) {
    secret_headers.push_back(source.verify->header);
  }
  for (store::Header& h : KeptHeaders(request.headers)) {
    if (r.headers.size() == kMaxRejectionHeaders) break;
    if (model::IsCredentialHeader(h.name, secret_headers)) h.value = std::string(model::kRedacted);
    r.headers.push_back({Cut(std::move(h.name), kMaxRejectionHeaderName),
                         Cut(std::move(h.value), kMaxRejectionHeaderValue)});
  }
  return r;
}

RejectionRecorder::RejectionRecorder(store::Store& store, const Clock& clock,
                                     RejectionOptions options)
    : store_(store), clock_(clock), options_(options), loop_("hr-rejections", clock) {}

RejectionRecorder::~RejectionRecorder() { Stop(); }

void RejectionRecorder::Start() {
  loop_.Start([this] { return Pass(); });
}

void RejectionRecorder::Stop() {
  loop_.Stop();
  (void)Flush();  // what is left
}

void RejectionRecorder::Record(const model::Source& source, RejectReason reason,
                               std::string_view message, const http::Request& request,
                               TimePoint now) {
  const int64_t second = ToUnixMillis(now) / 1000;
  {
    MutexLock lock(mu_);
    PerSource& s = sources_[source.name];
    ++s.counts.total;
    ++s.counts.by_reason[ReasonIndex(reason)];
    s.counts.last_at = now;
    if (s.second != second) {
      s.second = second;
      s.rows_this_second = 0;
    }
    if (s.rows_this_second >= options_.rows_per_second || queue_.size() >= options_.queue_rows ||
        queue_bytes_ >= options_.queue_bytes) {
      ++s.counts.not_recorded;
      return;
    }
    ++s.rows_this_second;  // taken now: the row below is described outside the lock
  }
  // The body's hash and the headers' copy, outside the lock: only for the few rows written.
  store::Rejection row = DescribeRejection(source, reason, message, request, now);
  const size_t bytes = RowBytes(row);
  MutexLock lock(mu_);
  queue_bytes_ += bytes;
  queue_.push_back(std::move(row));
}

Status RejectionRecorder::Flush() {
  MutexLock flush(flush_mu_);
  std::vector<store::Rejection> rows;
  {
    MutexLock lock(mu_);
    rows.swap(queue_);
    queue_bytes_ = 0;
  }
  if (rows.empty()) return Status::Ok();
  Status st = store_.AppendRejections(rows, options_.keep_per_source);
  if (!st.ok()) {
    MutexLock lock(mu_);
    for (const store::Rejection& r : rows) ++sources_[r.source].counts.not_recorded;
  }
  return st;
}

Duration RejectionRecorder::Pass() {
  if (Status st = Flush(); !st.ok()) {
    spdlog::warn("rejected requests not recorded (they are still counted): {}", st.ToString());
  }
  return options_.flush_interval;
}

RejectionCounts RejectionRecorder::Counts(const std::string& source) const {
  MutexLock lock(mu_);
  auto it = sources_.find(source);
  return it == sources_.end() ? RejectionCounts{} : it->second.counts;
}

std::map<std::string, RejectionCounts> RejectionRecorder::AllCounts() const {
  MutexLock lock(mu_);
  std::map<std::string, RejectionCounts> out;
  for (const auto& [name, s] : sources_) out.emplace(name, s.counts);
  return out;
}

}  // namespace hookrelay::ingest
