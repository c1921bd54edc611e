#include "policy/breaker.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "common/units.h"

namespace hookrelay::policy {
namespace {

TimePoint SaturatingAdd(TimePoint t, Duration d) {
  int64_t out;
  if (__builtin_add_overflow(ToUnixMillis(t), d.count(), &out)) {
    return d.count() > 0 ? TimePoint::max() : TimePoint::min();
  }
  return FromUnixMillis(out);
}

}  // namespace

Status BreakerConfig::Validate() const {
  if (threshold < 1 || threshold > kMaxBreakerThreshold) {
    return Status::InvalidArgument("must be between 1 and " + std::to_string(kMaxBreakerThreshold),
                                   "threshold");
  }
  if (open_periods.empty()) return Status::InvalidArgument("must not be empty", "open");
  for (size_t i = 0; i < open_periods.size(); ++i) {
    if (open_periods[i] <= Duration::zero()) {
      return Status::InvalidArgument("must be greater than 0", "open[" + std::to_string(i) + "]");
    }
  }
  if (escalation_reset < Duration::zero()) {
    return Status::InvalidArgument("must not be negative", "escalation_reset");
  }
  return Status::Ok();
}

std::string_view BreakerStateName(BreakerState s) {
  switch (s) {
    case BreakerState::kClosed: return "closed";
    case BreakerState::kOpen: return "open";
    case BreakerState::kHalfOpen: return "half_open";
  }
  return "unknown";
}

CircuitBreaker::CircuitBreaker(BreakerConfig config, BreakerSnapshot snapshot)
    : config_(std::move(config)), s_(std::move(snapshot)) {}

bool CircuitBreaker::AllowRequest(TimePoint now, BreakerTransition* transition) {
  if (transition) *transition = BreakerTransition::kNone;
  switch (s_.state) {
    case BreakerState::kClosed: return true;
    case BreakerState::kOpen:
      if (s_.open_until && now < *s_.open_until) return false;
      s_.state = BreakerState::kHalfOpen;
      s_.probe_in_flight = true;
      s_.open_until = now;  // the probe's lease starts
      if (transition) *transition = BreakerTransition::kHalfOpened;
      return true;
    case BreakerState::kHalfOpen:
      // Normally the probe is already out, and holds the breaker for its lease; one given back,
      // or a snapshot restored without one, lets the next request probe now. A row stored before
      // the lease existed holds the end of the open period here, which the lease starts from.
      if (s_.probe_in_flight && s_.open_until && now < SaturatingAdd(*s_.open_until, kProbeLease)) {
        return false;
      }
      s_.probe_in_flight = true;
      s_.open_until = now;
      return true;
  }
  return false;
}

BreakerTransition CircuitBreaker::RecordSuccess(TimePoint now) {
  switch (s_.state) {
    case BreakerState::kClosed: s_.consecutive_failures = 0; return BreakerTransition::kNone;
    case BreakerState::kOpen:
      // A request sent before the breaker opened; the probe, not a straggler, decides.
      return BreakerTransition::kNone;
    case BreakerState::kHalfOpen:
      s_.state = BreakerState::kClosed;
      s_.consecutive_failures = 0;
      s_.open_until.reset();
      s_.closed_since = now;
      s_.probe_in_flight = false;
      // `trips` stays: tripping again soon continues the escalation until escalation_reset.
      return BreakerTransition::kClosed;
  }
  return BreakerTransition::kNone;
}

BreakerTransition CircuitBreaker::RecordFailure(TimePoint now) {
  if (s_.consecutive_failures < std::numeric_limits<int>::max()) ++s_.consecutive_failures;
  switch (s_.state) {
    case BreakerState::kClosed:
      if (s_.consecutive_failures < config_.threshold) return BreakerTransition::kNone;
      if (s_.closed_since && now - *s_.closed_since >= config_.escalation_reset) s_.trips = 0;
      Open(now);
      return BreakerTransition::kOpened;
    case BreakerState::kOpen:
      // A straggler from before the trip: counted, but the open period stands.
      return BreakerTransition::kNone;
    case BreakerState::kHalfOpen: Open(now); return BreakerTransition::kOpened;
  }
  return BreakerTransition::kNone;
}

void CircuitBreaker::Reset(TimePoint now) {
  s_ = BreakerSnapshot{};
  s_.closed_since = now;
}

std::string_view BreakerInputName(BreakerInput input) {
  switch (input) {
    case BreakerInput::kSuccess: return "success";
    case BreakerInput::kFailure: return "failure";
    case BreakerInput::kProbe: return "probe";
    case BreakerInput::kProbeNotSent: return "probe_not_sent";
    case BreakerInput::kReset: return "reset";
  }
  return "unknown";
}

std::optional<TimePoint> NextProbeAt(const BreakerSnapshot& s) {
  switch (s.state) {
    case BreakerState::kClosed: return std::nullopt;
    case BreakerState::kOpen: return s.open_until;
    case BreakerState::kHalfOpen:
      if (!s.probe_in_flight || !s.open_until) return std::nullopt;
      return SaturatingAdd(*s.open_until, kProbeLease);
  }
  return std::nullopt;
}

BreakerStep ApplyBreakerInput(const BreakerConfig& config, const BreakerSnapshot& snapshot,
                              BreakerInput input, TimePoint now) {
  CircuitBreaker b(config, snapshot);
  BreakerStep step;
  switch (input) {
    case BreakerInput::kSuccess: step.transition = b.RecordSuccess(now); break;
    case BreakerInput::kFailure: step.transition = b.RecordFailure(now); break;
    case BreakerInput::kProbe:
      step.allowed = b.AllowRequest(now, &step.transition);
      step.probe_lease_expired =
          step.allowed && snapshot.state == BreakerState::kHalfOpen && snapshot.probe_in_flight;
      break;
    case BreakerInput::kProbeNotSent: {
      BreakerSnapshot s = b.snapshot();
      if (s.state == BreakerState::kHalfOpen) s.probe_in_flight = false;
      b = CircuitBreaker(config, s);
      break;
    }
    case BreakerInput::kReset: b.Reset(now); break;
  }
  step.after = b.snapshot();
  return step;
}

void CircuitBreaker::Open(TimePoint now) {
  const auto& periods = config_.open_periods;
  Duration period = std::chrono::minutes(10);  // only when Validate() was skipped
  if (!periods.empty()) {
    const size_t i = std::min(static_cast<size_t>(std::max(s_.trips, 0)), periods.size() - 1);
    period = periods[i];
  }
  if (s_.trips < std::numeric_limits<int>::max()) ++s_.trips;
  s_.state = BreakerState::kOpen;
  s_.open_until = SaturatingAdd(now, period);
  s_.probe_in_flight = false;
}

std::vector<BreakerStep> ApplyBreakerInputs(const BreakerConfig& config,
                                            const BreakerSnapshot& snapshot,
                                            const std::vector<TimedBreakerInput>& inputs) {
  std::vector<BreakerStep> steps;
  steps.reserve(inputs.size());
  const BreakerSnapshot* s = &snapshot;
  for (const TimedBreakerInput& in : inputs) {
    steps.push_back(ApplyBreakerInput(config, *s, in.input, in.at));
    s = &steps.back().after;
  }
  return steps;
}

}  // namespace hookrelay::policy
