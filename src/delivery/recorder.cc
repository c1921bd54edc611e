#include "delivery/recorder.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "common/redact.h"
#include "common/thread_name.h"
#include "common/time_format.h"
#include "policy/decision.h"

namespace hookrelay::delivery {

namespace {

// At most this many attempt results are recorded in one store write.
constexpr size_t kMaxRecordBatch = 512;
// Results whose write failed (a failed commit, a full disk) are kept and written again, at most
// this many (past it, a result is let go: its delivery is sent again once its lease expires).
constexpr size_t kMaxUnrecorded = 100000;

}  // namespace

void Recorder::Start(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back(&Recorder::Loop, this);
}

void Recorder::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void Recorder::Queue(Completion c) {
  bool notify;
  {
    MutexLock lock(mu_);
    notify = queue_.empty();
    queue_.push_back(std::move(c));
  }
  // A recorder that finds results waiting takes them all; only an empty queue has sleepers.
  if (notify) cv_.notify_one();
}

void Recorder::Loop() {
  NameThisThread("hr-recorder");
  std::vector<Completion> batch;
  for (;;) {
    bool last_chance;
    size_t room;
    {
      MutexLock lock(mu_);
      // Results a failed write left unrecorded are written again after a pause (doubling up to
      // kMaxRecordRetryDelay), unless new results come first (they are written together).
      auto ready = [this]() REQUIRES(mu_) {
        return stopping_ || !queue_.empty() ||
               (!unrecorded_.empty() && std::chrono::steady_clock::now() >= retry_at_);
      };
      if (unrecorded_.empty()) {
        cv_.wait(lock, ready);
      } else {
        cv_.wait_until(lock, retry_at_, ready);
      }
      if (queue_.empty() && unrecorded_.empty()) {
        if (stopping_) return;
        continue;
      }
      if (queue_.empty() && !stopping_ && std::chrono::steady_clock::now() < retry_at_) continue;
      // Everything that finished while the last batch was being written, up to the cap: one
      // store write (one commit) records them all.
      const size_t n = std::min(queue_.size(), kMaxRecordBatch);
      batch.assign(std::make_move_iterator(queue_.end() - static_cast<std::ptrdiff_t>(n)),
                   std::make_move_iterator(queue_.end()));
      queue_.resize(queue_.size() - n);
      const size_t again = std::min(unrecorded_.size(), kMaxRecordBatch - n);
      batch.insert(
          batch.end(), std::make_move_iterator(unrecorded_.begin()),
          std::make_move_iterator(unrecorded_.begin() + static_cast<std::ptrdiff_t>(again)));
      unrecorded_.erase(unrecorded_.begin(),
                        unrecorded_.begin() + static_cast<std::ptrdiff_t>(again));
      // A stopping recorder writes the unrecorded ones once more, then lets them go.
      last_chance = stopping_;
      room = kMaxUnrecorded - std::min(kMaxUnrecorded, unrecorded_.size());
    }
    RecordBatch(batch, last_chance, room);
    batch.clear();
  }
}

void Recorder::ApplyBreakerInputs(std::vector<Completion>& batch) {
  // Per destination, the batch's outcomes in the order they ended: one store transaction each.
  std::map<std::string, std::vector<size_t>> by_destination;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].breaker_input && !batch[i].breaker_applied) {
      by_destination[batch[i].destination->name].push_back(i);
    }
  }
  bool wake = false;
  for (const auto& [name, indexes] : by_destination) {
    const model::Destination& d = *batch[indexes.front()].destination;
    std::vector<store::BreakerInputAt> inputs;
    inputs.reserve(indexes.size());
    for (size_t i : indexes) inputs.push_back({*batch[i].breaker_input, batch[i].decided.now});
    uint64_t epoch;
    {
      MutexLock lock(state_.mu);
      epoch = state_.StateOf(name, d).control.breaker_epoch;
    }
    auto steps = state_.store.UpdateBreaker(name, d.breaker, inputs);
    if (!steps.ok()) {
      // Not retried: these outcomes are lost to the shared breaker (this node's copy has them).
      spdlog::error("cannot update the breaker of {} with {} outcomes: {}", name, inputs.size(),
                    steps.status().message());
    }
    for (size_t k = 0; k < indexes.size(); ++k) {
      Completion& c = batch[indexes[k]];
      c.breaker_applied = true;
      c.breaker_epoch = epoch;
      if (steps.ok() && k < steps->size()) {
        c.breaker = (*steps)[k].transition;
        c.breaker_after = (*steps)[k].after;
      }
    }
    int failures = 0;
    for (const store::BreakerInputAt& in : inputs) {
      failures += in.input == policy::BreakerInput::kFailure;
    }
    MutexLock lock(state_.mu);
    DestState& s = state_.StateOf(name, d);
    // A read of the shared breaker begun before this write may land after it: not adopted.
    ++s.control.control_gen;
    s.control.breaker_pending =
        std::max(0, s.control.breaker_pending - static_cast<int>(indexes.size()));
    s.control.breaker_pending_failures = std::max(0, s.control.breaker_pending_failures - failures);
    if (steps.ok() && s.control.breaker_pending == 0 && s.control.breaker_epoch == epoch) {
      // Now the copy is the shared breaker, with what the other nodes counted.
      s.control.breaker = policy::CircuitBreaker(d.breaker, steps->back().after);
    }
    // The scheduler held this destination's claims back while its failures were on their way.
    if (failures > 0 && s.control.breaker_pending_failures == 0) wake = true;
  }
  if (wake) state_.Wake();
}

void Recorder::RecordBatch(std::vector<Completion>& batch, bool last_chance, size_t room) {
  // The shared breaker learns the outcomes first (as this node's copy did when they ended): a
  // trip counted by several nodes is seen by their next claims, however long the records take.
  ApplyBreakerInputs(batch);
  std::vector<store::AttemptRecord> records;
  records.reserve(batch.size());
  for (Completion& c : batch) {
    // Decided once: a result written again keeps its decision (and its attempt's times).
    if (!c.record_pending) {
      c.decided = Decide(c);
      c.record_pending = true;
    }
    // The request's memory (body, headers) is freed here, off the sender's thread.
    c.result.request = SendRequest{};
    records.push_back({c.decided.attempt, c.decided.update});
  }
  std::vector<Status> recorded = state_.store.RecordAttempts(records, state_.options.node_id);
  std::vector<Completion> keep;
  std::string why;
  for (size_t i = 0; i < batch.size(); ++i) {
    const Status& st = i < recorded.size() ? recorded[i] : Status::Internal("not recorded");
    if (st.ok()) {
      Settle(batch[i]);
      continue;
    }
    const bool lease_lost =
        st.code() == Status::Code::kFailedPrecondition || st.code() == Status::Code::kNotFound;
    if (lease_lost || last_chance || keep.size() >= room) {
      // Not recorded, and not kept: nothing of it counts (the delivery is sent again once its
      // lease expires, or was recorded by the claim that took it over).
      spdlog::error(
          "attempt {} of delivery {} not recorded ({}); the delivery will be sent again{}",
          batch[i].decided.attempt.n, batch[i].delivery.id, st.message(),
          lease_lost ? "" : " once its lease expires");
      Release();
    } else {
      if (keep.empty()) why = st.message();
      keep.push_back(std::move(batch[i]));
    }
  }
  {
    MutexLock lock(mu_);
    if (keep.empty()) {
      if (unrecorded_.empty()) retry_delay_ = kMinRecordRetryDelay;
    } else {
      spdlog::warn("cannot record {} attempt results yet ({}); writing them again in {} ms",
                   keep.size(), why, retry_delay_.count());
      retry_at_ = std::chrono::steady_clock::now() + retry_delay_;
      retry_delay_ = std::min(retry_delay_ * 2, kMaxRecordRetryDelay);
      unrecorded_.insert(unrecorded_.end(), std::make_move_iterator(keep.begin()),
                         std::make_move_iterator(keep.end()));
    }
  }
  state_.Wake();
}

void Recorder::Release() {
  bool idle;
  {
    MutexLock lock(state_.mu);
    EngineStats& stats = state_.stats;
    stats.in_flight = std::max<int64_t>(0, stats.in_flight - 1);
    idle = stats.in_flight == 0 && state_.stopping;
  }
  if (idle) state_.idle_cv.notify_all();
}

Decided Recorder::Decide(const Completion& c) {
  const model::Destination& d = *c.destination;
  const store::Delivery& delivery = c.delivery;
  Decided out;
  out.now = c.decided.now;
  const TimePoint now = out.now;
  policy::DeliveryProgress progress;
  progress.attempt = delivery.attempts + 1;
  progress.first_failure_at = delivery.first_failure_at;
  progress.previous_delay = delivery.last_delay;
  progress.probe = c.probe && !c.not_sent;
  policy::RetryDecision& decision = out.decision;
  policy::AttemptOutcome outcome = c.result.outcome;
  // An event that is gone cannot be sent, ever: treat it as a final outcome (kPrivateAddress is
  // the one final transport class) and replace the reason below.
  if (c.not_sent) outcome.error = policy::TransportError::kPrivateAddress;
  {
    MutexLock lock(state_.random_mu);
    decision = policy::Decide(d.policy, progress, outcome, now, state_.random);
  }
  if (c.not_sent) decision.reason = c.result.error_detail;
  if (!c.result.error_detail.empty() && c.result.outcome.error != policy::TransportError::kNone &&
      !c.not_sent) {
    decision.reason += " (" + c.result.error_detail + ")";
  }

  store::Attempt& attempt = out.attempt;
  attempt.delivery_id = delivery.id;
  // Numbered among all of the delivery's attempts, the uncounted probes too (Store::RecordAttempt).
  attempt.n = delivery.attempts + delivery.uncounted_attempts + 1;
  attempt.probe = progress.probe;
  attempt.counted = decision.counted;
  attempt.transformed = c.transformed;
  attempt.started_at = c.result.started_at;
  attempt.duration_ms = c.result.duration.count();
  if (c.result.outcome.status_code > 0) attempt.status_code = c.result.outcome.status_code;
  if (c.result.outcome.error != policy::TransportError::kNone) {
    attempt.error = std::string(policy::TransportErrorName(c.result.outcome.error));
  } else if (c.result.outcome.broker == policy::BrokerAnswer::kBusy ||
             c.result.outcome.broker == policy::BrokerAnswer::kRefused) {
    // The attempt has no status code: its error says the broker's class ("broker_refused"), and
    // the snippet holds the broker's reply.
    attempt.error = "broker_" + std::string(policy::BrokerAnswerName(c.result.outcome.broker));
  }
  attempt.retry_after = c.result.outcome.retry_after;
  // An endpoint may echo its request (a request bin, an error page quoting it): the credentials
  // the request carried are never stored, so the API cannot show them: the destination's own
  // (headers, auth, URL parameters) and the credential-named headers sent on with the event
  // (X-Gitlab-Token, signatures: those the event detail shows as "(redacted)"), whole or, at
  // the snippet's cut, any beginning of one.
  std::vector<std::string> secrets = model::DestinationSecretValues(d);
  for (const auto& [name, value] : c.result.request.headers) {
    if (!model::IsCredentialHeader(name, d.secret_headers)) continue;
    secrets.push_back(value);
    if (size_t space = value.find(' '); space != std::string::npos) {
      secrets.push_back(value.substr(space + 1));
    }
  }
  attempt.response_snippet =
      RedactSnippet(c.result.snippet, std::move(secrets), model::kRedacted, c.result.snippet_cut,
                    std::max(kSnippetLimit, c.result.snippet.size()));

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
      if (decision.counted) {
        update.reason = "attempt " + std::to_string(progress.attempt) + " of " +
                        std::to_string(d.policy.max_attempts) + " failed: " + decision.reason;
      } else {
        // The breaker's probe: the delivery waits with the others, none of its attempts spent.
        update.reason =
            "the breaker's probe failed (not counted; " + std::to_string(delivery.attempts) +
            " of " + std::to_string(d.policy.max_attempts) + " attempts made): " + decision.reason;
      }
      break;
    default:
      update.status = store::DeliveryStatus::kFailed;
      update.reason = decision.reason;
      break;
  }
  return out;
}

void Recorder::Settle(const Completion& c) {
  const model::Destination& d = *c.destination;
  const Decided& decided = c.decided;
  const TimePoint now = decided.now;
  const policy::RetryDecision& decision = decided.decision;
  const store::Attempt& attempt = decided.attempt;

  // Counters, and what the breaker's transition (see Scheduler::OnAttemptEnded) calls for.
  std::vector<alerts::Alert> raise;
  bool pause_now = false;
  bool gone = false;  // 410: the destination is paused for every node
  std::string pause_reason;
  std::vector<std::string> log_lines;  // written once mu is released
  bool idle;
  {
    MutexLock lock(state_.mu);
    EngineStats& stats = state_.stats;
    DestState& s = state_.StateOf(d.name, d);
    stats.in_flight = std::max<int64_t>(0, stats.in_flight - 1);
    idle = stats.in_flight == 0 && state_.stopping;  // Stop waits for it
    if (!c.not_sent) {
      stats.attempts++;
      stats.latency_sum_ms += attempt.duration_ms;
      const size_t bucket = LatencyBucket(attempt.duration_ms);
      stats.latency_buckets[bucket]++;
      s.latency_buckets[bucket]++;
      s.latency_sum_ms += attempt.duration_ms;
      s.latency_window.Add(attempt.duration_ms);
    }
    // A transition the operator's reset has overtaken is not reported, nor acted on.
    const policy::BreakerTransition tr =
        c.breaker_epoch == s.control.breaker_epoch ? c.breaker : policy::BreakerTransition::kNone;
    const policy::BreakerSnapshot& after = c.breaker_after;
    if (!c.not_sent) {
      switch (decision.outcome_class) {
        case policy::OutcomeClass::kSuccess: s.attempts_success++; break;
        case policy::OutcomeClass::kRetryable: s.attempts_retryable++; break;
        case policy::OutcomeClass::kFinal: s.attempts_final++; break;
      }
    }
    switch (decision.outcome_class) {
      case policy::OutcomeClass::kSuccess: stats.attempts_success++; break;
      case policy::OutcomeClass::kRetryable: stats.attempts_retryable++; break;
      case policy::OutcomeClass::kFinal: stats.attempts_final++; break;
    }
    if (decision.kind == policy::DecisionKind::kDelivered) {
      stats.delivered++;
      s.delivered++;
    }
    if (decision.kind == policy::DecisionKind::kRetry) stats.retries_scheduled++;
    const bool gave_up = decision.kind != policy::DecisionKind::kDelivered &&
                         decision.kind != policy::DecisionKind::kRetry;
    if (gave_up) {
      stats.failed++;
      s.failed++;
      log_lines.push_back(
          fmt::format("delivery {} of event {} to {} failed for good after attempt {}: {}",
                      c.delivery.id, c.delivery.event_id, d.name, c.delivery.attempts + 1,
                      RedactUrlCredentials(decision.reason)));
      raise.push_back(
          {alerts::Alert::Kind::kDeliveriesFailed, d.name, now, decision.reason, 1, std::nullopt});
    }
    if (tr == policy::BreakerTransition::kOpened) {
      // Only while it is still open: when the open period ended before this result was recorded
      // (the scheduler has half-opened it and resumed the deliveries), pausing now would leave the
      // probe nothing to send, and the breaker half-open for good.
      pause_now = s.control.breaker.snapshot().state == policy::BreakerState::kOpen;
      pause_reason = "circuit breaker open until " + FormatRfc3339(after.open_until.value_or(now));
      s.control.last_pause_sweep = now;
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
      log_lines.push_back(fmt::format(
          "breaker of {} closed: a probe succeeded; deliveries resume with slow start", d.name));
      raise.push_back({alerts::Alert::Kind::kBreakerClosed, d.name, now,
                       "a probe succeeded; deliveries resume with slow start", 1, std::nullopt});
    }
    if (!c.not_sent && c.result.outcome.error == policy::TransportError::kNone &&
        c.result.outcome.status_code == 410 && d.pause_on_gone && !s.control.paused) {
      s.control.PausedHere(std::string(store::kGonePauseReason), now);
      pause_now = true;
      gone = true;
      pause_reason = s.control.paused_reason;
      raise.push_back({alerts::Alert::Kind::kDestinationPaused, d.name, now,
                       "the endpoint answered 410 Gone", 1, std::nullopt});
    }
  }
  if (idle) state_.idle_cv.notify_all();
  for (const std::string& line : log_lines) spdlog::info("{}", line);
  if (!c.not_sent) {
    spdlog::debug("attempt {} of delivery {} (event {}) to {}: {} ms, {}; {}: {}", attempt.n,
                  c.delivery.id, c.delivery.event_id, d.name, attempt.duration_ms,
                  policy::OutcomeClassName(decision.outcome_class),
                  policy::DecisionKindName(decision.kind), RedactUrlCredentials(decision.reason));
  }
  if (gone) {
    if (auto n = state_.store.PauseDestination(d.name, pause_reason, now); !n.ok()) {
      spdlog::error("cannot pause {} in the store: {}", d.name, n.status().message());
    }
  } else if (pause_now) {
    (void)state_.store.PauseDeliveries(d.name, pause_reason);
  }
  for (auto& a : raise) state_.RaiseAlert(std::move(a));
}

}  // namespace hookrelay::delivery
