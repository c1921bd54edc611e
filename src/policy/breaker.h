#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace hookrelay::policy {

inline constexpr int kMaxBreakerThreshold = 1'000'000;

// How a destination's breaker behaves (its JSON form: breaker_json.h).
struct BreakerConfig {
  int threshold = 20;  // consecutive failed attempts that open the breaker
  // Open period for the 1st, 2nd, … trip; the last one repeats.
  std::vector<Duration> open_periods = {std::chrono::minutes(10), std::chrono::minutes(30),
                                        std::chrono::hours(2), std::chrono::hours(24)};
  // After this long closed, the next trip starts again from open_periods[0].
  Duration escalation_reset = std::chrono::hours(24);

  Status Validate() const;  // names the field: "threshold", "open", "open[1]", "escalation_reset"
  bool operator==(const BreakerConfig&) const = default;
};

enum class BreakerState { kClosed, kOpen, kHalfOpen };
std::string_view BreakerStateName(BreakerState s);  // "closed", "open", "half_open"

// The breaker's whole state, plain data so a store can persist it and several nodes can share it.
struct BreakerSnapshot {
  BreakerState state = BreakerState::kClosed;
  int consecutive_failures = 0;
  int trips = 0;  // trips in the current escalation
  // kOpen: when the open period ends. kHalfOpen: when the probe was last let through (its
  // lease runs from there, see kProbeLease). Cleared when it closes.
  std::optional<TimePoint> open_until;
  std::optional<TimePoint> closed_since;  // when it last closed (for escalation_reset)
  bool probe_in_flight = false;           // kHalfOpen: the single probe has been let through
  bool operator==(const BreakerSnapshot&) const = default;
};

enum class BreakerTransition { kNone, kOpened, kHalfOpened, kClosed };

// How long a half-open probe holds the breaker. A probe whose result is not recorded within it
// (its node died, was killed or cut off first) is presumed lost, and the next AllowRequest lets a
// new probe through; without this, such a breaker stayed half-open, with nothing sent by any
// node, until an operator reset it (and so did one node's breaker stored in SQLite when the
// process died mid-probe).
// It must outlast a probe that is merely slow: the attempt's timeout plus the engine's lease
// margin (by then the probe's delivery may be claimed again anyway), plus the time to record it.
// 10 minutes is twice the longest preset's ("scale": 300 s timeout + 30 s default margin). With a
// longer configured timeout + margin, a second probe may leave while the first one is still out:
// one more request to an endpoint that may be down, and no harm to the state: whichever result
// comes first decides (success closes, failure re-opens) and the other is then a straggler (while
// open, counted and nothing else; while closed, a success or one counted failure).
inline constexpr Duration kProbeLease = std::chrono::minutes(10);

// A per-destination circuit breaker as a pure state machine: no clock of its own, every call is
// told the time. Not thread-safe; callers serialize access per destination.
//  closed    --threshold consecutive failures-->            open (period = open_periods[trips])
//  open      --now >= open_until, AllowRequest-->           half_open, one probe allowed
//  half_open --probe out for kProbeLease, AllowRequest-->   half_open, a new probe allowed
//  half_open --probe succeeds-->                            closed (failures reset)
//  half_open --probe fails-->                               open with the next longer period
// While open (and while the probe is out, within its lease) AllowRequest() is false: no requests,
// no attempts spent.
class CircuitBreaker {
 public:
  explicit CircuitBreaker(BreakerConfig config, BreakerSnapshot snapshot = {});

  // May a request be sent now? In kOpen past open_until, moves to kHalfOpen and lets exactly one
  // probe through (reported via `transition` when non-null). In kHalfOpen, lets a probe through
  // when none is out, or when the one out was let through kProbeLease ago or longer (no
  // transition reported). Each probe let through sets open_until to `now`.
  bool AllowRequest(TimePoint now, BreakerTransition* transition = nullptr);
  BreakerTransition RecordSuccess(TimePoint now);
  BreakerTransition RecordFailure(TimePoint now);
  // Operator reset: closed, no failures, escalation cleared.
  void Reset(TimePoint now);

  const BreakerSnapshot& snapshot() const { return s_; }
  const BreakerConfig& config() const { return config_; }
  BreakerState state() const { return s_.state; }

 private:
  void Open(TimePoint now);

  BreakerConfig config_;
  BreakerSnapshot s_;
};

// What can happen to a breaker, as data: so a store can apply it to the snapshot it holds, in one
// transaction, for every node sharing that breaker (Store::UpdateBreaker).
enum class BreakerInput {
  kSuccess,       // RecordSuccess
  kFailure,       // RecordFailure
  kProbe,         // AllowRequest: may this node send (in kOpen past open_until: take the probe)?
  kProbeNotSent,  // the probe let through found nothing to send: the next one may go
  kReset,         // Reset (the operator)
};
std::string_view BreakerInputName(BreakerInput input);  // "success", "failure", …

// When AllowRequest lets the next probe through: kOpen: open_until; kHalfOpen with the probe
// out: the end of its lease (open_until + kProbeLease). nullopt when closed, or when a probe may
// go now whatever the time (half-open with none out, or no time stored).
std::optional<TimePoint> NextProbeAt(const BreakerSnapshot& s);

// One input applied: the transition it made, and for kProbe whether the request may go.
struct BreakerStep {
  BreakerTransition transition = BreakerTransition::kNone;
  bool allowed = false;  // kProbe only
  // kProbe only: allowed because the probe out before had outlived its lease (kProbeLease): its
  // node presumably died before recording it. The deliveries it held are past their leases.
  bool probe_lease_expired = false;
  BreakerSnapshot after;
};

// The pure transition: `input` at `now` applied to `snapshot` under `config`, exactly as the
// CircuitBreaker methods do it. No I/O; the same answer on every node for the same stored row.
BreakerStep ApplyBreakerInput(const BreakerConfig& config, const BreakerSnapshot& snapshot,
                              BreakerInput input, TimePoint now);

// One input at the time it happened.
struct TimedBreakerInput {
  BreakerInput input = BreakerInput::kFailure;
  TimePoint at{};
};
// `inputs` applied in order from `snapshot`, each to the snapshot the one before left: one step
// per input, the last step's `after` the breaker's new state (what both stores write back in the
// transaction that read `snapshot`).
std::vector<BreakerStep> ApplyBreakerInputs(const BreakerConfig& config,
                                            const BreakerSnapshot& snapshot,
                                            const std::vector<TimedBreakerInput>& inputs);

}  // namespace hookrelay::policy
