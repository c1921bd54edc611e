// The retry-policy hot path: what the scheduler and sender pay per attempt. Every delivery
// attempt runs Classify() and Decide() (which runs RetryDelay()), and AllowRequest() plus
// RecordSuccess()/RecordFailure() on its destination's breaker. PlanSchedule() runs per
// `hookrelay schedule` and per policy shown in the API.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "policy/backoff.h"
#include "policy/breaker.h"
#include "policy/decision.h"
#include "policy/outcome.h"
#include "policy/retry_policy.h"

namespace hookrelay::policy {
namespace {

constexpr Jitter kJitters[] = {Jitter::kNone, Jitter::kFull, Jitter::kEqual, Jitter::kDecorrelated};

RetryPolicy Exponential(Jitter jitter) {
  RetryPolicy p;
  p.strategy = Strategy::kExponential;
  p.jitter = jitter;
  p.base = std::chrono::seconds(1);
  p.cap = std::chrono::hours(1);
  p.max_attempts = 20;
  return p;
}

// One delay for each of retries 1..16 per 16 iterations, feeding each delay to the next as
// decorrelated jitter does. Arg: index into kJitters.
void BM_RetryDelay(benchmark::State& state) {
  const RetryPolicy p = Exponential(kJitters[state.range(0)]);
  state.SetLabel(std::string(JitterName(p.jitter)));
  SeededRandom random(42);
  Duration previous = p.base;
  int retry = 1;
  for (auto _ : state) {
    previous = RetryDelay(p, retry, previous, random);
    benchmark::DoNotOptimize(previous);
    retry = retry == 16 ? 1 : retry + 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RetryDelay)->DenseRange(0, 3);

// Decide() after a failed attempt 3 of the default policy: the common "schedule a retry" case.
void BM_DecideRetry(benchmark::State& state) {
  const RetryPolicy p = *PresetPolicy("default");
  SeededRandom random(42);
  const TimePoint now = FromUnixMillis(1'700'000'000'000);
  const DeliveryProgress progress{.attempt = 3,
                                  .first_failure_at = now - std::chrono::minutes(3),
                                  .previous_delay = std::chrono::minutes(2)};
  const AttemptOutcome outcome{.status_code = 503};
  for (auto _ : state) {
    RetryDecision d = Decide(p, progress, outcome, now, random);
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecideRetry);

// The same with a Retry-After header to parse (delta-seconds, then an HTTP-date).
void BM_DecideRetryAfter(benchmark::State& state) {
  const RetryPolicy p = *PresetPolicy("default");
  SeededRandom random(42);
  const TimePoint now = FromUnixMillis(1'700'000'000'000);
  const DeliveryProgress progress{.attempt = 2, .first_failure_at = now};
  const AttemptOutcome outcome{
      .status_code = 429,
      .retry_after = state.range(0) == 0 ? "120" : "Tue, 14 Nov 2023 22:15:20 GMT"};
  state.SetLabel(state.range(0) == 0 ? "seconds" : "http-date");
  for (auto _ : state) {
    RetryDecision d = Decide(p, progress, outcome, now, random);
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecideRetryAfter)->Arg(0)->Arg(1);

// Decide() on a 2xx: the cheapest and most frequent outcome.
void BM_DecideDelivered(benchmark::State& state) {
  const RetryPolicy p = *PresetPolicy("default");
  SeededRandom random(42);
  const TimePoint now = FromUnixMillis(1'700'000'000'000);
  const AttemptOutcome outcome{.status_code = 200};
  for (auto _ : state) {
    RetryDecision d = Decide(p, DeliveryProgress{}, outcome, now, random);
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecideDelivered);

// A whole schedule (10 attempts on the scale ladder; 6 on the default exponential policy).
void BM_PlanSchedule(benchmark::State& state) {
  const char* name = state.range(0) == 0 ? "scale" : "default";
  const RetryPolicy p = *PresetPolicy(name);
  state.SetLabel(name);
  SeededRandom random(42);
  for (auto _ : state) {
    Schedule s = PlanSchedule(p, random);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PlanSchedule)->Arg(0)->Arg(1);

// Classify() over every status code 100..599 and every transport error; an item is one call.
void BM_ClassifyAll(benchmark::State& state) {
  std::vector<AttemptOutcome> outcomes;
  for (int code = 100; code <= 599; ++code) outcomes.push_back({.status_code = code});
  for (TransportError e :
       {TransportError::kTimeout, TransportError::kConnectionRefused,
        TransportError::kConnectionReset, TransportError::kDns, TransportError::kTls,
        TransportError::kPrivateAddress, TransportError::kOther}) {
    outcomes.push_back({.error = e});
  }
  for (auto _ : state) {
    for (const AttemptOutcome& o : outcomes) {
      Classification c = Classify(o);
      benchmark::DoNotOptimize(c);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(outcomes.size()));
}
BENCHMARK(BM_ClassifyAll);

// AllowRequest() on a closed breaker: the check every attempt makes.
void BM_BreakerAllowClosed(benchmark::State& state) {
  CircuitBreaker breaker(BreakerConfig{});
  const TimePoint now = FromUnixMillis(1'700'000'000'000);
  for (auto _ : state) benchmark::DoNotOptimize(breaker.AllowRequest(now));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BreakerAllowClosed);

// AllowRequest() + RecordFailure() against a dead endpoint, one attempt per simulated second:
// the breaker trips, rejects while open, half-opens, fails its probe and escalates, repeatedly.
void BM_BreakerFailing(benchmark::State& state) {
  BreakerConfig config;
  config.threshold = 5;
  config.open_periods = {std::chrono::seconds(10), std::chrono::seconds(30)};
  CircuitBreaker breaker(config);
  TimePoint now = FromUnixMillis(1'700'000'000'000);
  for (auto _ : state) {
    if (breaker.AllowRequest(now)) benchmark::DoNotOptimize(breaker.RecordFailure(now));
    now += std::chrono::seconds(1);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BreakerFailing);

// RecordFailure() then RecordSuccess() on a closed breaker (a flaky endpoint below threshold).
void BM_BreakerFlaky(benchmark::State& state) {
  CircuitBreaker breaker(BreakerConfig{});
  const TimePoint now = FromUnixMillis(1'700'000'000'000);
  for (auto _ : state) {
    benchmark::DoNotOptimize(breaker.RecordFailure(now));
    benchmark::DoNotOptimize(breaker.RecordSuccess(now));
  }
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_BreakerFlaky);

}  // namespace
}  // namespace hookrelay::policy

BENCHMARK_MAIN();
