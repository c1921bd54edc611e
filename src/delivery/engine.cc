#include "delivery/engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "common/units.h"
#include "delivery/claimer.h"
#include "delivery/engine_state.h"
#include "delivery/recorder.h"
#include "delivery/scheduler.h"
#include "policy/breaker.h"
#include "policy/outcome.h"

namespace hookrelay::delivery {

// ---- EngineState ----

DestState& EngineState::StateOf(const std::string& name, const model::Destination& d) {
  auto it = dests.find(name);
  if (it == dests.end()) {
    Result<store::DestinationControl> stored = store.GetDestinationControl(name);
    it = dests
             .emplace(name, std::make_unique<DestState>(
                                d, stored.ok() ? *stored : store::DestinationControl{}))
             .first;
    if (d.policy.timeout + options.lease_margin >= policy::kProbeLease) {
      // A half-open probe that is only slow would outlive its lease: a second one may follow it
      // (harmless to the breaker's state, see policy::kProbeLease; one more request).
      spdlog::warn(
          "destination {}: attempt timeout {} plus lease margin {} is not shorter than a "
          "half-open probe's lease ({}): a slow probe may be joined by a second one",
          name, FormatDuration(d.policy.timeout), FormatDuration(options.lease_margin),
          FormatDuration(policy::kProbeLease));
    }
  }
  DestState& s = *it->second;
  s.control.UpdateBreakerConfig(d.breaker);
  if (s.max_concurrency != d.max_concurrency) {
    s.max_concurrency = d.max_concurrency;
    s.concurrency = pacing::AdaptiveConcurrency(d.max_concurrency);
  }
  if (!d.rate_limit) {
    s.bucket.reset();
  } else if (!s.bucket || s.bucket_rate != *d.rate_limit) {
    s.bucket_rate = *d.rate_limit;
    // A burst of one second's worth (at least one request).
    s.bucket.emplace(*d.rate_limit, std::max(1.0, *d.rate_limit), clock.Now());
  }
  return s;
}

void EngineState::Wake() {
  {
    MutexLock lock(mu);
    wake = true;
    // New work may be due anywhere: forget what short claims said about when to look again (and
    // make claims running now forget it too).
    work_gen++;
    for (auto& [name, dest] : dests) dest->idle_until = TimePoint{};
  }
  wake_cv.notify_all();
}

void EngineState::RaiseAlert(alerts::Alert a) {
  {
    MutexLock lock(mu);
    stats.alerts_raised++;
  }
  if (alerts) alerts->Raise(std::move(a));
}

void EngineState::AdoptControl(DestState& s, const store::DestinationControl& c,
                               uint64_t read_gen) {
  if (s.control.Adopt(c, read_gen)) s.concurrency.SlowStart();
}

// ---- DeliveryEngine ----

DeliveryEngine::DeliveryEngine(store::Store& store, model::Registry& registry,
                               RequestSender& sender, alerts::AlertSink* alerts, const Clock& clock,
                               Random& random, EngineOptions options)
    : state_(std::make_unique<EngineState>(store, registry, alerts, clock, random,
                                           std::move(options))),
      recorder_(std::make_unique<Recorder>(*state_)),
      claimer_(std::make_unique<Claimer>(*state_, sender,
                                         [this](Completion c) { Complete(std::move(c)); })),
      scheduler_(std::make_unique<Scheduler>(*state_, *claimer_)) {}

DeliveryEngine::~DeliveryEngine() { Stop(std::chrono::seconds(0)); }

void DeliveryEngine::Start() {
  started_ = true;
  scheduler_->Start();
  claimer_->Start(std::max(1, state_->options.claimer_threads));
  recorder_->Start(std::max(1, state_->options.recorder_threads));
}

void DeliveryEngine::Stop(Duration grace) {
  {
    MutexLock lock(state_->mu);
    if (state_->stopping && !started_) return;
    state_->stopping = true;
  }
  started_ = false;
  state_->wake_cv.notify_all();
  scheduler_->Join();
  // Claims not started are dropped (their deliveries stay due); claims running finish and send.
  claimer_->Stop();
  // Let attempts in flight finish and be recorded, within the grace period: a gate (the
  // in-flight count, and idle_cv the recorder signals when it reaches 0). Real time, not the
  // clock's: the grace bounds how long a shutdown takes, whatever the clock says.
  {
    MutexLock lock(state_->mu);
    state_->idle_cv.wait_for(
        lock, grace, [this]() REQUIRES(state_->mu) { return state_->stats.in_flight == 0; });
  }
  recorder_->Stop();
}

void DeliveryEngine::Wake() { state_->Wake(); }

namespace {

policy::OutcomeClass OutcomeClassOf(const Completion& c) {
  // As policy::Decide classifies it (Recorder::Decide); a 2xx without building Classify's text.
  if (c.not_sent) return policy::OutcomeClass::kFinal;  // Decide treats it as kPrivateAddress
  const policy::AttemptOutcome& o = c.result.outcome;
  if (o.error == policy::TransportError::kNone && ((o.status_code >= 200 && o.status_code <= 299) ||
                                                   o.broker == policy::BrokerAnswer::kAccepted)) {
    return policy::OutcomeClass::kSuccess;
  }
  return policy::Classify(o).cls;
}

}  // namespace

void DeliveryEngine::Complete(Completion c) {
  // On the sender's thread: only what the scheduler must learn at once (when the attempt ended
  // and its outcome class, for the breaker and the adaptive limit); the full decision, with its
  // reason texts, is the recorder's (Recorder::Decide, at this same time).
  c.decided.now = state_->clock.Now();
  c.decided.decision.outcome_class = OutcomeClassOf(c);
  scheduler_->OnAttemptEnded(c);
  recorder_->Queue(std::move(c));
}

EngineStats DeliveryEngine::Stats() const {
  MutexLock lock(state_->mu);
  return state_->stats;
}

std::optional<std::chrono::steady_clock::time_point> DeliveryEngine::LastRound() const {
  const int64_t ns = state_->last_round_ns.load(std::memory_order_relaxed);
  if (ns == 0) return std::nullopt;
  return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(ns));
}

std::map<std::string, DestinationState> DeliveryEngine::Destinations() const {
  std::map<std::string, DestinationState> out;
  // The latency samples are copied under the lock and their percentiles computed after it.
  std::vector<std::pair<DestinationState*, std::vector<int32_t>>> windows;
  {
    const auto catalog = state_->registry.Get();
    MutexLock lock(state_->mu);
    windows.reserve(state_->dests.size());
    for (const auto& [name, s] : state_->dests) {
      DestinationState& d = out[name];
      ControlView control = s->control.View(catalog->FindDestination(name));
      d = DestinationState{control.breaker, s->concurrency.allowed(), s->max_concurrency,
                           // Requests out; slots held for a claim still running are not.
                           std::max(0, s->in_flight - s->reserved), control.paused,
                           control.paused_by, std::move(control.paused_reason), s->delivered,
                           s->failed, s->attempts_success, s->attempts_retryable, s->attempts_final,
                           s->due_backlog, s->latency_buckets, s->latency_sum_ms, LatencySummary{}};
      windows.emplace_back(&d, s->latency_window.samples());
    }
  }
  for (auto& w : windows) w.first->latency = Percentiles(std::move(w.second));
  return out;
}

Status DeliveryEngine::Pause(const std::string& destination, const std::string& reason) {
  EngineState& st = *state_;
  auto catalog = st.registry.Get();
  const model::Destination* d = catalog->FindDestination(destination);
  if (!d) return Status::NotFound("unknown destination \"" + destination + "\"");
  const TimePoint now = st.clock.Now();
  // In the store first: every node obeys the stored pause (its next claim reads it), and it
  // survives a restart.
  auto n = st.store.PauseDestination(destination, reason, now);
  if (!n.ok()) return n.status();
  {
    MutexLock lock(st.mu);
    DestState& s = st.StateOf(destination, *d);
    s.control.PausedHere(reason, now);
  }
  st.RaiseAlert(
      {alerts::Alert::Kind::kDestinationPaused, destination, now, reason, 1, std::nullopt});
  return Status::Ok();
}

Status DeliveryEngine::Resume(const std::string& destination) {
  EngineState& st = *state_;
  auto catalog = st.registry.Get();
  const model::Destination* d = catalog->FindDestination(destination);
  if (!d) return Status::NotFound("unknown destination \"" + destination + "\"");
  const TimePoint now = st.clock.Now();
  // The pause is cleared and the paused deliveries made due in one transaction: any node may
  // send them from then on (the others take the resume at their next refresh).
  auto n = st.store.ResumeDestination(destination, now);
  if (!n.ok()) return n.status();
  {
    MutexLock lock(st.mu);
    DestState& s = st.StateOf(destination, *d);
    s.control.ResumedHere();
    s.concurrency.SlowStart();
  }
  st.RaiseAlert(
      {alerts::Alert::Kind::kDestinationResumed, destination, now, "resumed", 1, std::nullopt});
  Wake();
  return Status::Ok();
}

Status DeliveryEngine::ResetBreaker(const std::string& destination) {
  EngineState& st = *state_;
  auto catalog = st.registry.Get();
  const model::Destination* d = catalog->FindDestination(destination);
  if (!d) return Status::NotFound("unknown destination \"" + destination + "\"");
  const TimePoint now = st.clock.Now();
  // The shared breaker: every node's next claim sees it closed.
  auto steps =
      st.store.UpdateBreaker(destination, d->breaker, {{policy::BreakerInput::kReset, now}});
  if (!steps.ok()) return steps.status();
  bool paused;
  {
    MutexLock lock(st.mu);
    DestState& s = st.StateOf(destination, *d);
    s.control.BreakerResetHere(d->breaker, steps->back().after);
    s.concurrency.SlowStart();
    paused = s.control.paused;
  }
  spdlog::info("breaker of {} reset (closed) by the operator", destination);
  if (!d->paused && !paused) (void)st.store.ResumeDeliveries(destination, now);
  Wake();
  return Status::Ok();
}

}  // namespace hookrelay::delivery
