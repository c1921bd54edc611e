#include "delivery/scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "common/thread_name.h"
#include "common/time_format.h"
#include "common/units.h"
#include "delivery/claimer.h"

namespace hookrelay::delivery {

namespace {

constexpr Duration kPauseSweepEvery = std::chrono::seconds(1);

// Claims of one destination out at once. A claim waits for the store (on the embedded store, for
// the writer's next commit); with only one out, every slot freed meanwhile waited for it to
// answer before the next claim could even be asked for, and the destination's requests out fell
// to 0 between claims (measured in the deliver benchmark: a quarter of the samples). A second
// claim, for the slots freed since the first was asked for, keeps requests going out meanwhile.
constexpr int kMaxClaimsOut = 2;

// While a claim is out, another is only asked for when at least this many slots are free (a
// quarter of the allowed concurrency, at least one): not one claim per freed slot.
int SecondClaimMinimum(const DestState& s) { return std::max(1, s.concurrency.allowed() / 4); }
constexpr Duration kStallCheckEvery = std::chrono::seconds(1);
// How often the scheduler reads every destination's shared breaker and pause from the store
// (Store::ListDestinationControls), at most: a pause, resume or reset made through another node,
// or a breaker another node opened, closed or half-opened, applies here from the next pass after
// it (passes come at least every poll_interval). Claims do not wait for it: each one that finds
// work reads its destination's row before sending (claimer.cc).
constexpr Duration kControlRefreshEvery = std::chrono::milliseconds(250);

bool IsOverload(const policy::AttemptOutcome& o) {
  return o.error == policy::TransportError::kTimeout ||
         (o.error == policy::TransportError::kNone &&
          (o.status_code == 429 || o.status_code == 503 ||
           o.broker == policy::BrokerAnswer::kBusy));
}

}  // namespace

void Scheduler::Start() { thread_ = std::thread(&Scheduler::Loop, this); }

void Scheduler::Join() {
  if (thread_.joinable()) thread_.join();
}

void Scheduler::Loop() {
  NameThisThread("hr-scheduler");
  const Duration poll = state_.options.poll_interval;
  for (;;) {
    state_.last_round_ns.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                               std::memory_order_relaxed);
    const TimePoint now = state_.clock.Now();
    auto catalog = state_.registry.Get();
    TimePoint wake_at = now + poll;
    if (now - last_control_refresh_ >= kControlRefreshEvery || now < last_control_refresh_) {
      last_control_refresh_ = now;
      RefreshControls();
    }
    for (const auto& [name, d] : catalog->destinations) {
      wake_at = std::min(wake_at, ServeDestination(d, now));
    }
    ForgetDeleted(*catalog);
    if (now - last_stall_check_ >= kStallCheckEvery) {
      last_stall_check_ = now;
      CheckStall(now);
    }
    MutexLock lock(state_.mu);
    if (state_.stopping) return;
    if (!state_.wake) {
      // Sleeps through the clock, so a fake clock that a test moves to wake_at wakes it. Never
      // past poll_interval from now (leases expire, the catalog changes without a Wake).
      const TimePoint t = state_.clock.Now();
      const TimePoint deadline = std::clamp(wake_at, t + Duration(1), t + poll);
      state_.clock.WaitUntil(lock, state_.wake_cv, deadline, [this]() REQUIRES(state_.mu) {
        return state_.wake || state_.stopping;
      });
    }
    state_.wake = false;
    if (state_.stopping) return;
  }
}

void Scheduler::RefreshControls() {
  std::map<std::string, uint64_t> gens;  // what the read may be stale against
  {
    MutexLock lock(state_.mu);
    for (const auto& [name, s] : state_.dests) gens.emplace(name, s->control.control_gen);
  }
  Result<std::map<std::string, store::DestinationControl>> all =
      state_.store.ListDestinationControls();
  if (!all.ok()) {
    spdlog::warn("cannot read the destinations' breakers and pauses: {}", all.status().message());
    return;
  }
  MutexLock lock(state_.mu);
  for (auto& [name, s] : state_.dests) {
    auto g = gens.find(name);
    if (g == gens.end()) continue;  // made since the read began: read at its next claim
    auto it = all->find(name);
    state_.AdoptControl(*s, it == all->end() ? store::DestinationControl{} : it->second, g->second);
  }
}

void Scheduler::ForgetDeleted(const model::Catalog& catalog) {
  // So their breakers leave the metrics and a new destination of the same name starts afresh.
  MutexLock lock(state_.mu);
  for (auto it = state_.dests.begin(); it != state_.dests.end();) {
    const DestState& s = *it->second;
    if (!catalog.FindDestination(it->first) && s.in_flight == 0 && s.claims_out == 0) {
      it = state_.dests.erase(it);
    } else {
      ++it;
    }
  }
}

void Scheduler::Sweep(const model::Destination& d, const std::string& reason, TimePoint now) {
  if (!state_.store.PauseDeliveries(d.name, reason).ok()) return;
  if (d.paused) return;  // paused in the catalog: nothing below undoes that
  // The sweep was decided on this node's copy of the pause and breaker, which may be stale: a
  // resume, a reset or a successful probe (through any node) may have made the deliveries due
  // just before the sweep paused them again, and nothing would make them due after it. So the
  // stored state is read after the sweep: when it no longer holds them back, the sweep is undone.
  Result<store::DestinationControl> c = state_.store.GetDestinationControl(d.name);
  if (!c.ok()) return;  // the next sweep or refresh decides again
  // Only a stored state that holds nothing back (not paused, breaker closed) undoes it: while the
  // stored breaker is open or half-open, the probe resumes the deliveries (claimer.cc, TakeProbe).
  if (c->pause || c->breaker.state != policy::BreakerState::kClosed) return;
  // Each delivery goes back to its own due time: the pause changed nothing else (a resume before
  // it made them due at its own time already).
  if (auto n = state_.store.UnpauseDeliveries(d.name, now); n.ok() && *n > 0) {
    spdlog::info("{} deliveries of {} paused by a stale sweep are due again", *n, d.name);
    state_.Wake();
  }
}

TimePoint Scheduler::ServeDestination(const model::Destination& d, TimePoint now) {
  const TimePoint later = now + state_.options.poll_interval;
  int want = 0;
  bool sweep = false, probe = false;
  std::string sweep_reason;
  TimePoint next = later;
  uint64_t work_gen = 0;
  {
    MutexLock lock(state_.mu);
    DestState& s = state_.StateOf(d.name, d);
    const bool operator_paused = d.paused || s.control.paused;
    const policy::BreakerSnapshot& b = s.control.breaker.snapshot();
    if (operator_paused ||
        (b.state == policy::BreakerState::kOpen && b.open_until && now < *b.open_until)) {
      // Nothing is sent; make the waiting deliveries show as paused (new arrivals too).
      if (now - s.control.last_pause_sweep >= kPauseSweepEvery) {
        s.control.last_pause_sweep = now;
        sweep = true;
        sweep_reason =
            operator_paused
                ? (s.control.paused_reason.empty() ? "destination paused" : s.control.paused_reason)
                : "circuit breaker open until " + FormatRfc3339(*b.open_until);
      }
      if (!operator_paused) next = std::min(later, *b.open_until);
    } else if (s.claims_out >= kMaxClaimsOut || now < s.idle_until) {
      // As many claims as may be out are on their way (the slots freed meanwhile are taken by
      // the next one, so each claim gathers every slot freed while the last ones committed), or
      // nothing is due before idle_until.
      if (s.claims_out == 0) next = std::min(next, s.idle_until);
    } else if (b.state != policy::BreakerState::kClosed) {
      // Half-open (or open and due to half-open): exactly one probe, when none is out (nor a
      // claim: in_flight counts the slots reserved for one). This copy only says a probe may be
      // due; the claimer asks the shared breaker, which lets one node's probe through. A probe
      // out elsewhere holds it for its lease (policy::kProbeLease): when that ends with no result
      // (its node died), this node asks for a new one.
      if (s.in_flight == 0 && s.claims_out == 0) {
        if (s.control.breaker.AllowRequest(now)) {
          want = 1;
          probe = true;
        } else if (std::optional<TimePoint> at =
                       policy::NextProbeAt(s.control.breaker.snapshot())) {
          next = std::min(next, *at);
        }
      }
    } else if (s.control.breaker_pending_failures == 0) {
      // (With failures of this node still on their way to the shared breaker, the recorder
      // wakes the scheduler once they are applied.)
      want = std::max(0, s.concurrency.allowed() - s.in_flight);
      if (s.claims_out > 0 && want < SecondClaimMinimum(s)) want = 0;
    }
    if (want > 0 && s.bucket) {
      int tokens = 0;
      while (tokens < want && s.bucket->TryTake(now)) ++tokens;
      if (tokens < want) next = std::min(next, now + s.bucket->TimeUntilNext(now));
      want = tokens;
    }
    if (want > 0) {
      // Reserved until the claim answers (the Claimer frees what it did not find).
      s.in_flight += want;
      s.reserved += want;
      s.claims_out++;
      work_gen = state_.work_gen;
    }
  }
  if (sweep) Sweep(d, sweep_reason, now);
  if (want <= 0) return next;
  claimer_.Queue(
      ClaimJob{std::make_shared<const model::Destination>(d), want, probe, now, work_gen});
  return next;
}

void Scheduler::OnAttemptEnded(Completion& c) {
  // The request is over: its slot at the destination is free at once, while the result waits
  // for its turn to be recorded (the delivery stays leased until then, so nothing else takes
  // it). Waiting for the record's commit before sending the next request would make every
  // destination's throughput max_concurrency / (request + commit) instead of max_concurrency /
  // request. The breaker and the pacing learn the outcome now too: the next claim must already
  // see an open breaker or a halved concurrency.
  bool notify;
  {
    MutexLock lock(state_.mu);
    DestState& s = state_.StateOf(c.destination->name, *c.destination);
    s.in_flight = std::max(0, s.in_flight - 1);
    const TimePoint now = c.decided.now;
    // The copy here learns the outcome now; the shared breaker when the recorder applies
    // c.breaker_input (and reports the transition the store made, if any). A success while the
    // breaker is closed with no failure counted changes nothing: no store write for it.
    switch (c.decided.decision.outcome_class) {
      case policy::OutcomeClass::kSuccess: {
        const policy::BreakerSnapshot& b = s.control.breaker.snapshot();
        if (b.state != policy::BreakerState::kClosed || b.consecutive_failures != 0) {
          c.breaker_input = policy::BreakerInput::kSuccess;
          s.control.breaker_pending++;
        }
        s.concurrency.OnSuccess();
        // A closing breaker lets the backlog ramp up again instead of arriving all at once.
        if (s.control.breaker.RecordSuccess(now) == policy::BreakerTransition::kClosed) {
          s.concurrency.SlowStart();
        }
        break;
      }
      case policy::OutcomeClass::kRetryable:
        c.breaker_input = policy::BreakerInput::kFailure;
        s.control.breaker_pending++;
        s.control.breaker_pending_failures++;
        (void)s.control.breaker.RecordFailure(now);
        if (IsOverload(c.result.outcome)) {
          s.concurrency.OnOverload();
        } else {
          s.concurrency.OnOtherFailure();
        }
        break;
      case policy::OutcomeClass::kFinal: s.concurrency.OnOtherFailure(); break;
    }
    // With a claim out, the scheduler is woken when it answers, and the next claim takes this
    // slot then; waking it now would find nothing to do, unless another claim may go out for
    // the slots free now.
    const bool may_claim =
        s.claims_out == 0 || (s.claims_out < kMaxClaimsOut &&
                              s.concurrency.allowed() - s.in_flight >= SecondClaimMinimum(s));
    notify = may_claim && !state_.wake;
    if (may_claim) state_.wake = true;
  }
  if (notify) state_.wake_cv.notify_all();
}

void Scheduler::CheckStall(TimePoint now) {
  auto oldest = state_.store.OldestDueAt(now);
  Duration age{0};
  if (oldest.ok() && oldest->has_value()) age = now - **oldest;
  auto due = state_.store.CountDue(now);
  auto due_by_destination = state_.store.CountDueByDestination(now);
  bool stalled;
  {
    MutexLock lock(state_.mu);
    state_.stats.oldest_due_age = age;
    if (due.ok()) state_.stats.due_backlog = *due;
    if (due_by_destination.ok()) {
      for (auto& [name, s] : state_.dests) {
        auto it = due_by_destination->find(name);
        s->due_backlog = it == due_by_destination->end() ? 0 : it->second;
      }
    }
    int64_t open = 0;
    for (const auto& [name, s] : state_.dests) {
      open += s->control.breaker.state() != policy::BreakerState::kClosed;
    }
    state_.stats.breakers_open = open;
    stalled = age > state_.options.stall_threshold;
  }
  if (stalled) {
    state_.RaiseAlert(
        {alerts::Alert::Kind::kStalled, "", now,
         "the oldest due delivery has waited " + FormatDuration(age) + " without being sent", 1,
         std::nullopt});
  }
}

}  // namespace hookrelay::delivery
