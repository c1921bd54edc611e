#include "sim/herd.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "common/random.h"
#include "common/units.h"
#include "policy/decision.h"
#include "policy/outcome.h"

namespace hookrelay::sim {
namespace {

// One event's place in its retry chain, as the store keeps it for a delivery.
struct EventState {
  int attempt = 1;                // the attempt due next
  int64_t first_failure_ms = -1;  // -1: none yet
  int64_t previous_delay_ms = 0;
};

// (time in ms, event number); the smallest first, ties by event number, so runs repeat.
using Due = std::pair<int64_t, uint32_t>;

int64_t SecondOf(int64_t ms) { return ms / 1000; }  // times are never negative

}  // namespace

Status HerdScenario::Validate() const {
  if (events < 1 || events > kMaxHerdEvents) {
    return Status::InvalidArgument("must be between 1 and " + std::to_string(kMaxHerdEvents) +
                                       ", got " + std::to_string(events),
                                   "events");
  }
  if (fail_window <= Duration::zero()) {
    return Status::InvalidArgument("must be longer than 0 (e.g. 1s)", "fail_window");
  }
  if (recover_at < fail_window) {
    return Status::InvalidArgument("must not be earlier than the fail window's end (" +
                                       FormatDuration(fail_window) + "): every first attempt fails",
                                   "recover_at");
  }
  if (capacity_per_second < 1) {
    return Status::InvalidArgument("must be at least 1/s", "capacity");
  }
  return Status::Ok();
}

HerdResult SimulateHerd(const HerdScenario& scenario, const HerdStrategy& strategy) {
  HerdResult r;
  r.strategy = strategy.name;
  const size_t n = static_cast<size_t>(scenario.events);
  const int64_t window_ms = scenario.fail_window.count();
  const int64_t recover_ms = scenario.recover_at.count();
  const int64_t recover_second = SecondOf(recover_ms);
  SeededRandom random(scenario.seed);

  std::vector<EventState> state(n);
  std::vector<Due> heap;
  heap.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    heap.emplace_back(random.UniformInt(0, window_ms - 1), static_cast<uint32_t>(i));
  }
  {
    // The herd's size: first attempts per second.
    std::vector<int64_t> times;
    times.reserve(n);
    for (const Due& d : heap) times.push_back(d.first);
    std::sort(times.begin(), times.end());
    int64_t run = 0;
    for (size_t i = 0; i < times.size(); ++i) {
      run = (i > 0 && SecondOf(times[i]) == SecondOf(times[i - 1])) ? run + 1 : 1;
      r.peak_failures_per_second = std::max(r.peak_failures_per_second, run);
    }
  }
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> queue(std::greater<Due>(),
                                                                      std::move(heap));

  const policy::AttemptOutcome refused{.error = policy::TransportError::kConnectionRefused};
  const policy::AttemptOutcome unavailable{.status_code = 503};
  const policy::AttemptOutcome ok{.status_code = 200};
  int64_t bucket_second = -1;  // the second whose capacity `served` counts
  int64_t served = 0;
  int64_t last_final_ms = 0;

  while (!queue.empty()) {
    const auto [now_ms, id] = queue.top();
    queue.pop();
    EventState& e = state[id];
    r.requests++;
    const int64_t second = SecondOf(now_ms);
    if (r.arrivals.empty() || r.arrivals.back().first != second) {
      r.arrivals.emplace_back(second, 0);
    }
    r.arrivals.back().second++;

    const policy::AttemptOutcome* outcome = &refused;
    if (now_ms >= recover_ms) {
      if (second != bucket_second) {
        bucket_second = second;
        served = 0;
      }
      if (served < scenario.capacity_per_second) {
        served++;
        outcome = &ok;
      } else {
        outcome = &unavailable;
      }
    }
    if (outcome != &ok) r.failed_requests++;

    policy::DeliveryProgress progress;
    progress.attempt = e.attempt;
    if (e.first_failure_ms >= 0) progress.first_failure_at = FromUnixMillis(e.first_failure_ms);
    progress.previous_delay = Duration(e.previous_delay_ms);
    const policy::RetryDecision d =
        policy::Decide(strategy.policy, progress, *outcome, FromUnixMillis(now_ms), random);
    switch (d.kind) {
      case policy::DecisionKind::kRetry:
        e.attempt++;
        e.first_failure_ms = ToUnixMillis(*d.first_failure_at);
        e.previous_delay_ms = d.delay.count();
        queue.emplace(ToUnixMillis(d.next_attempt_at), id);
        break;
      case policy::DecisionKind::kDelivered:
        r.delivered++;
        last_final_ms = std::max(last_final_ms, now_ms);
        break;
      default:  // gave up: attempts, deadline (nothing here is final)
        r.exhausted++;
        last_final_ms = std::max(last_final_ms, now_ms);
        break;
    }
  }

  r.drain_seconds = static_cast<double>(std::max<int64_t>(0, last_final_ms - recover_ms)) / 1000.0;
  std::vector<int64_t> busy;  // requests per second, from the recovery's second on
  for (const auto& [second, count] : r.arrivals) {
    if (second < recover_second) continue;
    busy.push_back(count);
    r.peak_per_second = std::max(r.peak_per_second, count);
  }
  if (!busy.empty()) {
    // Nearest rank: the smallest value with at least 99% of the seconds at or below it.
    const size_t rank = (busy.size() * 99 + 99) / 100;  // ceil(0.99 * size), >= 1
    std::nth_element(busy.begin(), busy.begin() + static_cast<ptrdiff_t>(rank - 1), busy.end());
    r.p99_per_second = busy[rank - 1];
  }
  return r;
}

std::vector<HerdStrategy> DefaultHerdStrategies() {
  std::vector<HerdStrategy> out;
  // PresetPolicy("default") cannot fail: it is built in.
  policy::RetryPolicy base = policy::PresetPolicy("default").value();
  base.preset.clear();
  for (policy::Jitter j : {policy::Jitter::kNone, policy::Jitter::kFull, policy::Jitter::kEqual,
                           policy::Jitter::kDecorrelated}) {
    policy::RetryPolicy p = base;
    p.jitter = j;
    out.push_back({std::string(policy::JitterName(j)), p});
  }
  for (const std::string& name : policy::PresetNames()) {
    out.push_back({name, policy::PresetPolicy(name).value()});
  }
  return out;
}

std::string HerdStrategyName(const policy::RetryPolicy& p) {
  if (!p.preset.empty()) return p.preset;
  return "custom " + std::string(policy::StrategyName(p.strategy)) + "/" +
         std::string(policy::JitterName(p.jitter));
}

}  // namespace hookrelay::sim
