#include "delivery/engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/redact.h"
#include "common/thread_name.h"
#include "common/time_format.h"
#include "common/units.h"
#include "delivery/outgoing_headers.h"
#include "model/destination.h"
#include "policy/decision.h"

namespace hookrelay::delivery {

namespace {

constexpr Duration kPauseSweepEvery = std::chrono::seconds(1);
constexpr Duration kStallCheckEvery = std::chrono::seconds(1);
// At most this many attempt results are recorded in one store write.
constexpr size_t kMaxRecordBatch = 512;
// Threads claiming (and reading the events of) due deliveries; one claim per destination at a
// time, so this is how many destinations claim at once.
constexpr int kClaimerThreads = 4;

bool IsOverload(const policy::AttemptOutcome& o) {
  return o.error == policy::TransportError::kTimeout ||
         (o.error == policy::TransportError::kNone &&
          (o.status_code == 429 || o.status_code == 503));
}

}  // namespace

struct DeliveryEngine::Dest {
  Dest(const model::Destination& d, policy::BreakerSnapshot snapshot)
      : max_concurrency(d.max_concurrency),
        concurrency(d.max_concurrency),
        breaker(d.breaker, snapshot) {}

  int max_concurrency;
  pacing::AdaptiveConcurrency concurrency;
  std::optional<pacing::TokenBucket> bucket;
  double bucket_rate = 0;
  policy::CircuitBreaker breaker;
  int in_flight = 0;
  bool paused = false;  // by the operator or after 410 Gone
  std::string paused_reason;
  TimePoint last_pause_sweep{};
  int claims_out = 0;      // claims queued or running (at most one)
  int reserved = 0;        // of in_flight: slots held for claims out, not yet requests
  TimePoint idle_until{};  // a claim came up short: nothing is due before this
  // Per-destination counters, see DestinationState.
  int64_t delivered = 0, failed = 0;
  int64_t attempts_success = 0, attempts_retryable = 0, attempts_final = 0;
  int64_t due_backlog = 0;
  // Bumped by ResetBreaker: a transition decided before a reset is stale once it is recorded.
  uint64_t breaker_epoch = 0;
};

struct DeliveryEngine::ClaimJob {
  std::shared_ptr<const model::Destination> destination;
  int want = 0;  // slots reserved for it (Dest::in_flight)
  bool probe = false;
  TimePoint now{};
  uint64_t work_gen = 0;  // DeliveryEngine::work_gen_ when it was queued
};

// What follows from one completion: the decision and what to record.
struct DeliveryEngine::Decided {
  TimePoint now{};
  policy::RetryDecision decision;
  store::Attempt attempt;
  store::DeliveryUpdate update;
};

struct DeliveryEngine::Completion {
  std::shared_ptr<const model::Destination> destination;  // shared by a claim's deliveries
  store::Delivery delivery;
  SendResult result;
  bool not_sent = false;  // the event was gone: record a failure without an HTTP attempt
  // Filled in by Complete, as soon as the attempt ends: the decision, and what the outcome did
  // to the destination's breaker (fed then, not once the record is committed, so no request
  // leaves after the failure that opened it).
  Decided decided;
  policy::BreakerTransition breaker = policy::BreakerTransition::kNone;
  // The breaker right after that transition, and Dest::breaker_epoch then: Settle reports the
  // transition as it happened, and not at all when the operator reset the breaker meanwhile
  // (the breaker's state then says nothing of this transition: trip 0, 0 failures).
  policy::BreakerSnapshot breaker_after;
  uint64_t breaker_epoch = 0;
};

DeliveryEngine::DeliveryEngine(store::Store& store, model::Registry& registry, Sender& sender,
                               alerts::AlertSink* alerts, const Clock& clock, Random& random,
                               EngineOptions options)
    : store_(store),
      registry_(registry),
      sender_(sender),
      alerts_(alerts),
      clock_(clock),
      random_(random),
      options_(std::move(options)) {
  stats_.latency_buckets.assign(std::size(kLatencyBoundsMs) + 1, 0);
}

DeliveryEngine::~DeliveryEngine() { Stop(std::chrono::seconds(0)); }

void DeliveryEngine::Start() {
  scheduler_ = std::thread(&DeliveryEngine::Loop, this);
  for (int i = 0; i < kClaimerThreads; ++i) {
    claimers_.emplace_back(&DeliveryEngine::ClaimerLoop, this);
  }
  for (int i = 0; i < std::max(1, options_.recorder_threads); ++i) {
    recorders_.emplace_back(&DeliveryEngine::RecorderLoop, this);
  }
}

void DeliveryEngine::Stop(Duration grace) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !scheduler_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (scheduler_.joinable()) scheduler_.join();
  // Claims not started are dropped (their deliveries stay due); claims running finish and send.
  {
    std::lock_guard lock(mu_);
    claim_stopping_ = true;
    claim_jobs_.clear();
  }
  claim_cv_.notify_all();
  for (auto& t : claimers_) {
    if (t.joinable()) t.join();
  }
  claimers_.clear();
  // Let attempts in flight finish and be recorded, within the grace period.
  const Duration deadline = clock_.MonotonicNow() + grace;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stats_.in_flight == 0) break;
    }
    if (clock_.MonotonicNow() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  {
    std::lock_guard lock(rec_mu_);
    rec_stopping_ = true;
  }
  rec_cv_.notify_all();
  for (auto& t : recorders_) {
    if (t.joinable()) t.join();
  }
  recorders_.clear();
}

void DeliveryEngine::Wake() {
  {
    std::lock_guard lock(mu_);
    wake_ = true;
    // New work may be due anywhere: forget what short claims said about when to look again (and
    // make claims running now forget it too).
    work_gen_++;
    for (auto& [name, dest] : dests_) dest->idle_until = TimePoint{};
  }
  cv_.notify_all();
}

void DeliveryEngine::Loop() {
  NameThisThread("hr-scheduler");
  for (;;) {
    const TimePoint now = clock_.Now();
    auto catalog = registry_.Get();
    TimePoint wake_at = now + options_.poll_interval;
    for (const auto& [name, d] : catalog->destinations) {
      wake_at = std::min(wake_at, ServeDestination(d, now));
    }
    {
      // Forget destinations deleted from the catalog once nothing of theirs is out, so their
      // breakers leave the metrics and a new destination of the same name starts afresh.
      std::lock_guard lock(mu_);
      for (auto it = dests_.begin(); it != dests_.end();) {
        const Dest& s = *it->second;
        if (!catalog->FindDestination(it->first) && s.in_flight == 0 && s.claims_out == 0) {
          it = dests_.erase(it);
        } else {
          ++it;
        }
      }
    }
    if (now - last_stall_check_ >= kStallCheckEvery) {
      last_stall_check_ = now;
      CheckStall(now);
    }
    std::unique_lock lock(mu_);
    if (stopping_) return;
    if (!wake_) {
      const Duration wait = std::max(Duration(1), wake_at - clock_.Now());
      cv_.wait_for(lock, wait, [this] { return wake_ || stopping_; });
    }
    wake_ = false;
    if (stopping_) return;
  }
}

DeliveryEngine::Dest& DeliveryEngine::StateOf(const std::string& name,
                                              const model::Destination& d) {
  auto it = dests_.find(name);
  if (it == dests_.end()) {
    policy::BreakerSnapshot snapshot;
    if (auto stored = store_.GetBreaker(name); stored.ok() && stored->has_value()) {
      snapshot = **stored;
    }
    it = dests_.emplace(name, std::make_unique<Dest>(d, snapshot)).first;
  }
  Dest& s = *it->second;
  if (!(s.breaker.config() == d.breaker)) {
    // The destination was changed (through the API): new thresholds and open periods apply from
    // now on; the breaker's state (failures counted, open until, trips) carries over.
    s.breaker = policy::CircuitBreaker(d.breaker, s.breaker.snapshot());
  }
  if (s.max_concurrency != d.max_concurrency) {
    s.max_concurrency = d.max_concurrency;
    s.concurrency = pacing::AdaptiveConcurrency(d.max_concurrency);
  }
  if (!d.rate_limit) {
    s.bucket.reset();
  } else if (!s.bucket || s.bucket_rate != *d.rate_limit) {
    s.bucket_rate = *d.rate_limit;
    // A burst of one second's worth (at least one request).
    s.bucket.emplace(*d.rate_limit, std::max(1.0, *d.rate_limit), clock_.Now());
  }
  return s;
}

TimePoint DeliveryEngine::ServeDestination(const model::Destination& d, TimePoint now) {
  const TimePoint later = now + options_.poll_interval;
  int want = 0;
  bool sweep = false, resume = false, probe = false;
  std::string sweep_reason;
  std::optional<policy::BreakerSnapshot> persist;
  TimePoint next = later;
  {
    std::lock_guard lock(mu_);
    Dest& s = StateOf(d.name, d);
    const bool operator_paused = d.paused || s.paused;
    const policy::BreakerSnapshot& b = s.breaker.snapshot();
    if (operator_paused ||
        (b.state == policy::BreakerState::kOpen && b.open_until && now < *b.open_until)) {
      // Nothing is sent; make the waiting deliveries show as paused (new arrivals too).
      if (now - s.last_pause_sweep >= kPauseSweepEvery) {
        s.last_pause_sweep = now;
        sweep = true;
        sweep_reason = operator_paused
                           ? (s.paused_reason.empty() ? "destination paused" : s.paused_reason)
                           : "circuit breaker open until " + FormatRfc3339(*b.open_until);
      }
      if (!operator_paused) next = std::min(later, *b.open_until);
    } else if (s.claims_out > 0 || now < s.idle_until) {
      // A claim is on its way (the slots it frees are taken by the next one, so each claim
      // gathers every slot freed while the last one committed), or nothing is due before
      // idle_until.
      if (s.claims_out == 0) next = std::min(next, s.idle_until);
    } else if (b.state != policy::BreakerState::kClosed) {
      // Half-open (or open and due to half-open): exactly one probe, when none is out.
      if (s.in_flight == 0) {
        policy::BreakerTransition tr = policy::BreakerTransition::kNone;
        if (s.breaker.AllowRequest(now, &tr)) {
          want = 1;
          probe = true;
          if (tr == policy::BreakerTransition::kHalfOpened) {
            resume = true;
            persist = s.breaker.snapshot();
            spdlog::info("breaker of {} half-open: sending one probe", d.name);
          }
        }
      }
    } else {
      want = std::max(0, s.concurrency.allowed() - s.in_flight);
    }
    if (want > 0 && s.bucket) {
      int tokens = 0;
      while (tokens < want && s.bucket->TryTake(now)) ++tokens;
      if (tokens < want) next = std::min(next, now + s.bucket->TimeUntilNext(now));
      want = tokens;
    }
    if (want > 0) {
      // Reserved until the claim answers (RunClaim frees what it did not find).
      s.in_flight += want;
      s.reserved += want;
      s.claims_out++;
    }
  }
  if (persist) PersistBreaker(d.name, *persist);
  if (sweep) (void)store_.PauseDeliveries(d.name, sweep_reason);
  if (resume) (void)store_.ResumeDeliveries(d.name, now);
  if (want <= 0) return next;
  {
    std::lock_guard lock(mu_);
    claim_jobs_.push_back(
        ClaimJob{std::make_shared<const model::Destination>(d), want, probe, now, work_gen_});
  }
  claim_cv_.notify_one();
  return next;
}

void DeliveryEngine::ClaimerLoop() {
  NameThisThread("hr-claimer");
  for (;;) {
    ClaimJob job;
    {
      std::unique_lock lock(mu_);
      claim_cv_.wait(lock, [this] { return claim_stopping_ || !claim_jobs_.empty(); });
      if (claim_stopping_) return;
      job = std::move(claim_jobs_.front());
      claim_jobs_.pop_front();
    }
    RunClaim(job);
  }
}

void DeliveryEngine::RunClaim(const ClaimJob& job) {
  const model::Destination& d = *job.destination;
  const Duration lease = d.policy.timeout + options_.lease_margin;
  auto claimed = store_.ClaimDue(job.now, job.want, lease, options_.node_id, d.name);
  int got = 0;
  std::optional<TimePoint> idle_until;
  if (!claimed.ok()) {
    spdlog::warn("cannot claim deliveries for {}: {}", d.name, claimed.status().message());
    idle_until = job.now + options_.poll_interval;
  } else {
    got = static_cast<int>(claimed->size());
    if (got < job.want) {
      // The due work ran out: no point asking again before the next delivery is due (unless new
      // work arrives meanwhile, see Wake).
      idle_until = job.now + options_.poll_interval;
      auto due = store_.NextDueAt(d.name);
      if (due.ok() && due->has_value()) idle_until = std::min(*idle_until, **due);
    }
  }
  {
    std::lock_guard lock(mu_);
    Dest& s = StateOf(d.name, d);
    // The slots reserved for deliveries that were not there are free again.
    s.in_flight = std::max(0, s.in_flight - (job.want - got));
    s.reserved = std::max(0, s.reserved - job.want);
    s.claims_out = std::max(0, s.claims_out - 1);
    if (idle_until && job.work_gen == work_gen_) s.idle_until = *idle_until;
    if (job.probe && got == 0) {
      // Nothing to probe with: the breaker stays half-open and lets the next request through.
      policy::BreakerSnapshot snapshot = s.breaker.snapshot();
      snapshot.probe_in_flight = false;
      s.breaker = policy::CircuitBreaker(d.breaker, snapshot);
    }
    stats_.in_flight += got;
    wake_ = true;
  }
  cv_.notify_all();
  if (claimed.ok()) {
    for (store::Delivery& delivery : *claimed) Dispatch(job.destination, std::move(delivery));
  }
}

void DeliveryEngine::Dispatch(const std::shared_ptr<const model::Destination>& dest,
                              store::Delivery delivery) {
  const model::Destination& d = *dest;
  auto event = store_.GetEvent(delivery.event_id);
  if (!event.ok() || !event->has_value()) {
    Completion c{dest, std::move(delivery), {}, true};
    c.result.started_at = clock_.Now();
    c.result.outcome.error = policy::TransportError::kOther;
    c.result.error_detail = event.ok() ? "the event is no longer stored (past its replay window)"
                                       : "cannot read the event: " + event.status().message();
    Complete(std::move(c));
    return;
  }
  const store::Event& e = **event;
  SendRequest req;
  req.tag = static_cast<uint64_t>(delivery.id);
  req.url = d.url;
  req.timeout = d.policy.timeout;
  req.allow_private = d.allow_private;
  std::optional<std::string> key;
  if (d.signing_secret) {
    if (auto k = model::SigningKey(*d.signing_secret); k.ok()) key = *k;
  }
  req.headers = OutgoingHeaders(e.headers, e.content_type, d,
                                StandardWebhookHeaders(e.id, clock_.Now(), e.body, key));
  req.body = e.body;
  sender_.Send(std::move(req), [this, dest, delivery = std::move(delivery)](SendResult r) mutable {
    Complete(Completion{std::move(dest), std::move(delivery), std::move(r), false});
  });
}

void DeliveryEngine::Complete(Completion c) {
  bool notify;
  c.decided = Decide(c);
  // The request is over: its slot at the destination is free at once, while the result waits
  // for its turn to be recorded (the delivery stays leased until then, so nothing else takes
  // it). Waiting for the record's commit before sending the next request would make every
  // destination's throughput max_concurrency / (request + commit) instead of max_concurrency /
  // request. The breaker and the pacing learn the outcome now too: the next claim must already
  // see an open breaker or a halved concurrency.
  {
    std::lock_guard lock(mu_);
    Dest& s = StateOf(c.destination->name, *c.destination);
    s.in_flight = std::max(0, s.in_flight - 1);
    const TimePoint now = c.decided.now;
    switch (c.decided.decision.outcome_class) {
      case policy::OutcomeClass::kSuccess:
        c.breaker = s.breaker.RecordSuccess(now);
        s.concurrency.OnSuccess();
        // A closing breaker lets the backlog ramp up again instead of arriving all at once.
        if (c.breaker == policy::BreakerTransition::kClosed) s.concurrency.SlowStart();
        break;
      case policy::OutcomeClass::kRetryable:
        c.breaker = s.breaker.RecordFailure(now);
        if (IsOverload(c.result.outcome)) {
          s.concurrency.OnOverload();
        } else {
          s.concurrency.OnOtherFailure();
        }
        break;
      case policy::OutcomeClass::kFinal: s.concurrency.OnOtherFailure(); break;
    }
    c.breaker_after = s.breaker.snapshot();
    c.breaker_epoch = s.breaker_epoch;
    // With a claim out, the scheduler is woken when it answers, and the next claim takes this
    // slot then; waking it now would find nothing to do.
    notify = s.claims_out == 0 && !wake_;
    if (s.claims_out == 0) wake_ = true;
  }
  if (notify) cv_.notify_all();
  {
    std::lock_guard lock(rec_mu_);
    notify = completions_.empty();
    completions_.push_back(std::move(c));
  }
  // A recorder that finds results waiting takes them all; only an empty queue has sleepers.
  if (notify) rec_cv_.notify_one();
}

void DeliveryEngine::RecorderLoop() {
  NameThisThread("hr-recorder");
  std::vector<Completion> batch;
  for (;;) {
    {
      std::unique_lock lock(rec_mu_);
      rec_cv_.wait(lock, [this] { return rec_stopping_ || !completions_.empty(); });
      if (completions_.empty()) return;
      // Everything that finished while the last batch was being written, up to the cap: one
      // store write (one commit) records them all.
      const size_t n = std::min(completions_.size(), kMaxRecordBatch);
      batch.assign(std::make_move_iterator(completions_.end() - static_cast<std::ptrdiff_t>(n)),
                   std::make_move_iterator(completions_.end()));
      completions_.resize(completions_.size() - n);
    }
    RecordBatch(batch);
    batch.clear();
  }
}

void DeliveryEngine::RecordBatch(std::vector<Completion>& batch) {
  std::vector<store::AttemptRecord> records;
  records.reserve(batch.size());
  for (Completion& c : batch) records.push_back({c.decided.attempt, c.decided.update});
  std::vector<Status> recorded = store_.RecordAttempts(records, options_.node_id);
  for (size_t i = 0; i < batch.size(); ++i) {
    const Status& st = i < recorded.size() ? recorded[i] : Status::Internal("not recorded");
    if (!st.ok()) {
      spdlog::error("cannot record attempt {} of delivery {}: {}", batch[i].decided.attempt.n,
                    batch[i].delivery.id, st.message());
    }
    Settle(batch[i]);
  }
  Wake();
}

DeliveryEngine::Decided DeliveryEngine::Decide(const Completion& c) {
  const model::Destination& d = *c.destination;
  const store::Delivery& delivery = c.delivery;
  Decided out;
  out.now = clock_.Now();
  const TimePoint now = out.now;
  policy::DeliveryProgress progress;
  progress.attempt = delivery.attempts + 1;
  progress.first_failure_at = delivery.first_failure_at;
  progress.previous_delay = delivery.last_delay;
  policy::RetryDecision& decision = out.decision;
  policy::AttemptOutcome outcome = c.result.outcome;
  // An event that is gone cannot be sent, ever: treat it as a final outcome (kPrivateAddress is
  // the one final transport class) and replace the reason below.
  if (c.not_sent) outcome.error = policy::TransportError::kPrivateAddress;
  {
    std::lock_guard lock(random_mu_);
    decision = policy::Decide(d.policy, progress, outcome, now, random_);
  }
  if (c.not_sent) decision.reason = c.result.error_detail;
  if (!c.result.error_detail.empty() && c.result.outcome.error != policy::TransportError::kNone &&
      !c.not_sent) {
    decision.reason += " (" + c.result.error_detail + ")";
  }

  store::Attempt& attempt = out.attempt;
  attempt.delivery_id = delivery.id;
  attempt.n = progress.attempt;
  attempt.started_at = c.result.started_at;
  attempt.duration_ms = c.result.duration.count();
  if (c.result.outcome.status_code > 0) attempt.status_code = c.result.outcome.status_code;
  if (c.result.outcome.error != policy::TransportError::kNone) {
    attempt.error = std::string(policy::TransportErrorName(c.result.outcome.error));
  }
  attempt.retry_after = c.result.outcome.retry_after;
  attempt.response_snippet = c.result.snippet;

  store::DeliveryUpdate& update = out.update;
  update.deadline = decision.deadline;
  update.first_failure_at = decision.first_failure_at;
  update.next_attempt_at = now;
  switch (decision.kind) {
    case policy::DecisionKind::kDelivered: update.status = store::DeliveryStatus::kDelivered; break;
    case policy::DecisionKind::kRetry:
      update.status = store::DeliveryStatus::kScheduled;
      update.next_attempt_at = decision.next_attempt_at;
      update.last_delay = decision.delay;
      update.reason = "attempt " + std::to_string(progress.attempt) + " of " +
                      std::to_string(d.policy.max_attempts) + " failed: " + decision.reason;
      break;
    default:
      update.status = store::DeliveryStatus::kFailed;
      update.reason = decision.reason;
      break;
  }
  return out;
}

void DeliveryEngine::Settle(const Completion& c) {
  const model::Destination& d = *c.destination;
  const Decided& decided = c.decided;
  const TimePoint now = decided.now;
  const policy::RetryDecision& decision = decided.decision;
  const store::Attempt& attempt = decided.attempt;

  // Counters, and what the breaker's transition (see Complete) calls for.
  std::vector<alerts::Alert> raise;
  std::optional<policy::BreakerSnapshot> persist;
  bool pause_now = false;
  std::string pause_reason;
  std::vector<std::string> log_lines;  // written once mu_ is released
  {
    std::lock_guard lock(mu_);
    Dest& s = StateOf(d.name, d);
    stats_.in_flight = std::max<int64_t>(0, stats_.in_flight - 1);
    if (!c.not_sent) {
      stats_.attempts++;
      stats_.latency_sum_ms += attempt.duration_ms;
      size_t bucket = 0;
      while (bucket < std::size(kLatencyBoundsMs) &&
             attempt.duration_ms > kLatencyBoundsMs[bucket]) {
        ++bucket;
      }
      stats_.latency_buckets[bucket]++;
    }
    // A transition the operator's reset has overtaken is not reported, nor acted on.
    const policy::BreakerTransition tr =
        c.breaker_epoch == s.breaker_epoch ? c.breaker : policy::BreakerTransition::kNone;
    const policy::BreakerSnapshot& after = c.breaker_after;
    if (!c.not_sent) {
      switch (decision.outcome_class) {
        case policy::OutcomeClass::kSuccess: s.attempts_success++; break;
        case policy::OutcomeClass::kRetryable: s.attempts_retryable++; break;
        case policy::OutcomeClass::kFinal: s.attempts_final++; break;
      }
    }
    switch (decision.outcome_class) {
      case policy::OutcomeClass::kSuccess: stats_.attempts_success++; break;
      case policy::OutcomeClass::kRetryable: stats_.attempts_retryable++; break;
      case policy::OutcomeClass::kFinal: stats_.attempts_final++; break;
    }
    if (decision.kind == policy::DecisionKind::kDelivered) {
      stats_.delivered++;
      s.delivered++;
    }
    if (decision.kind == policy::DecisionKind::kRetry) stats_.retries_scheduled++;
    const bool gave_up = decision.kind != policy::DecisionKind::kDelivered &&
                         decision.kind != policy::DecisionKind::kRetry;
    if (gave_up) {
      stats_.failed++;
      s.failed++;
      log_lines.push_back(fmt::format(
          "delivery {} of event {} to {} failed for good after attempt {}: {}", c.delivery.id,
          c.delivery.event_id, d.name, attempt.n, RedactUrlCredentials(decision.reason)));
      raise.push_back(
          {alerts::Alert::Kind::kDeliveriesFailed, d.name, now, decision.reason, 1, std::nullopt});
    }
    if (tr == policy::BreakerTransition::kOpened) {
      persist = s.breaker.snapshot();
      pause_now = true;
      pause_reason = "circuit breaker open until " + FormatRfc3339(after.open_until.value_or(now));
      s.last_pause_sweep = now;
      log_lines.push_back(fmt::format(
          "breaker of {} opened until {} (trip {}) after {} consecutive failed {}; last: {}",
          d.name, FormatRfc3339(after.open_until.value_or(now)), after.trips,
          after.consecutive_failures, after.consecutive_failures == 1 ? "attempt" : "attempts",
          RedactUrlCredentials(decision.reason)));
      raise.push_back({alerts::Alert::Kind::kBreakerOpened, d.name, now,
                       std::to_string(after.consecutive_failures) + " consecutive failed " +
                           (after.consecutive_failures == 1 ? "attempt" : "attempts") +
                           "; last: " + decision.reason,
                       1, after.open_until});
    } else if (tr == policy::BreakerTransition::kClosed) {
      persist = s.breaker.snapshot();
      log_lines.push_back(fmt::format(
          "breaker of {} closed: a probe succeeded; deliveries resume with slow start", d.name));
      raise.push_back({alerts::Alert::Kind::kBreakerClosed, d.name, now,
                       "a probe succeeded; deliveries resume with slow start", 1, std::nullopt});
    }
    if (!c.not_sent && c.result.outcome.error == policy::TransportError::kNone &&
        c.result.outcome.status_code == 410 && d.pause_on_gone && !s.paused) {
      s.paused = true;
      s.paused_reason = "paused: the endpoint answered 410 Gone; fix it, then resume";
      pause_now = true;
      pause_reason = s.paused_reason;
      s.last_pause_sweep = now;
      raise.push_back({alerts::Alert::Kind::kDestinationPaused, d.name, now,
                       "the endpoint answered 410 Gone", 1, std::nullopt});
    }
  }
  for (const std::string& line : log_lines) spdlog::info("{}", line);
  if (persist) PersistBreaker(d.name, *persist);
  if (pause_now) (void)store_.PauseDeliveries(d.name, pause_reason);
  for (auto& a : raise) RaiseAlert(std::move(a));
}

void DeliveryEngine::CheckStall(TimePoint now) {
  auto oldest = store_.OldestDueAt(now);
  Duration age{0};
  if (oldest.ok() && oldest->has_value()) age = now - **oldest;
  auto due = store_.CountDue(now);
  auto due_by_destination = store_.CountDueByDestination(now);
  bool stalled;
  {
    std::lock_guard lock(mu_);
    stats_.oldest_due_age = age;
    if (due.ok()) stats_.due_backlog = *due;
    if (due_by_destination.ok()) {
      for (auto& [name, s] : dests_) {
        auto it = due_by_destination->find(name);
        s->due_backlog = it == due_by_destination->end() ? 0 : it->second;
      }
    }
    int64_t open = 0;
    for (const auto& [name, s] : dests_) {
      open += s->breaker.state() != policy::BreakerState::kClosed;
    }
    stats_.breakers_open = open;
    stalled = age > options_.stall_threshold;
  }
  if (stalled) {
    RaiseAlert({alerts::Alert::Kind::kStalled, "", now,
                "the oldest due delivery has waited " + FormatDuration(age) + " without being sent",
                1, std::nullopt});
  }
}

void DeliveryEngine::RaiseAlert(alerts::Alert a) {
  {
    std::lock_guard lock(mu_);
    stats_.alerts_raised++;
  }
  if (alerts_) alerts_->Raise(std::move(a));
}

void DeliveryEngine::PersistBreaker(const std::string& name, const policy::BreakerSnapshot& s) {
  Status st = store_.PutBreaker(name, s);
  if (!st.ok()) {
    spdlog::error("cannot store the breaker of {}: {}", name, st.message());
  }
}

EngineStats DeliveryEngine::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::map<std::string, DestinationState> DeliveryEngine::Destinations() const {
  std::lock_guard lock(mu_);
  std::map<std::string, DestinationState> out;
  for (const auto& [name, s] : dests_) {
    out[name] = DestinationState{s->breaker.snapshot(),
                                 s->concurrency.allowed(),
                                 s->max_concurrency,
                                 // Requests out; slots held for a claim still running are not.
                                 std::max(0, s->in_flight - s->reserved),
                                 s->paused,
                                 s->paused_reason,
                                 s->delivered,
                                 s->failed,
                                 s->attempts_success,
                                 s->attempts_retryable,
                                 s->attempts_final,
                                 s->due_backlog};
  }
  return out;
}

Status DeliveryEngine::Pause(const std::string& destination, const std::string& reason) {
  auto catalog = registry_.Get();
  const model::Destination* d = catalog->FindDestination(destination);
  if (!d) return Status::NotFound("unknown destination \"" + destination + "\"");
  {
    std::lock_guard lock(mu_);
    Dest& s = StateOf(destination, *d);
    s.paused = true;
    s.paused_reason = reason;
    s.last_pause_sweep = clock_.Now();
  }
  auto n = store_.PauseDeliveries(destination, reason);
  RaiseAlert({alerts::Alert::Kind::kDestinationPaused, destination, clock_.Now(), reason, 1,
              std::nullopt});
  return n.ok() ? Status::Ok() : n.status();
}

Status DeliveryEngine::Resume(const std::string& destination) {
  auto catalog = registry_.Get();
  const model::Destination* d = catalog->FindDestination(destination);
  if (!d) return Status::NotFound("unknown destination \"" + destination + "\"");
  const TimePoint now = clock_.Now();
  {
    std::lock_guard lock(mu_);
    Dest& s = StateOf(destination, *d);
    s.paused = false;
    s.paused_reason.clear();
    s.concurrency.SlowStart();
  }
  auto n = store_.ResumeDeliveries(destination, now);
  RaiseAlert(
      {alerts::Alert::Kind::kDestinationResumed, destination, now, "resumed", 1, std::nullopt});
  Wake();
  return n.ok() ? Status::Ok() : n.status();
}

Status DeliveryEngine::ResetBreaker(const std::string& destination) {
  auto catalog = registry_.Get();
  const model::Destination* d = catalog->FindDestination(destination);
  if (!d) return Status::NotFound("unknown destination \"" + destination + "\"");
  const TimePoint now = clock_.Now();
  policy::BreakerSnapshot snapshot;
  {
    std::lock_guard lock(mu_);
    Dest& s = StateOf(destination, *d);
    s.breaker.Reset(now);
    ++s.breaker_epoch;
    s.concurrency.SlowStart();
    snapshot = s.breaker.snapshot();
  }
  spdlog::info("breaker of {} reset (closed) by the operator", destination);
  PersistBreaker(destination, snapshot);
  if (!d->paused) (void)store_.ResumeDeliveries(destination, now);
  Wake();
  return Status::Ok();
}

}  // namespace hookrelay::delivery
