#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "policy/retry_policy.h"

namespace hookrelay::sim {

// The thundering herd, simulated on simulated time with the policy code that delivers
// (policy::Decide, as the delivery engine's recorder calls it). Pure: no I/O, no threads, no
// clock reads; the same scenario and seed give the same result on every machine.
//
// Time zero is the start of the outage. `events` events have their first attempt at uniformly
// random instants (whole milliseconds) in [0, fail_window). The endpoint refuses every
// connection until `recover_at` (a retryable transport error), then answers at most
// `capacity_per_second` requests in each whole second (the first ones to arrive, in time order;
// ties by event number) with 200 and the rest with 503 without Retry-After. Each failure is
// retried when Decide says, until the event is delivered or its policy gives up.
struct HerdScenario {
  int64_t events = 500;
  Duration fail_window = std::chrono::seconds(60);
  Duration recover_at = std::chrono::minutes(4);
  int64_t capacity_per_second = 50;
  uint64_t seed = 1;

  // OK, or InvalidArgument naming the field ("events", "fail_window", "recover_at",
  // "capacity"). REQUIRES of SimulateHerd.
  Status Validate() const;
};

constexpr int64_t kMaxHerdEvents = 10'000'000;

// A policy to compare, with the name shown in tables, JSON and the chart's legend.
struct HerdStrategy {
  std::string name;
  policy::RetryPolicy policy;
};

// Seconds are whole seconds since time zero: second s holds the attempts that arrived at the
// endpoint in [s, s + 1) s.
struct HerdResult {
  std::string strategy;
  // The most requests that arrived in one second from the recovery's second on.
  int64_t peak_per_second = 0;
  // The 99th percentile (nearest rank) of the requests per second over the seconds from the
  // recovery's second on in which at least one request arrived. Seconds with no request are left
  // out: a ladder that waits hours would otherwise report 0 for a herd it does send.
  int64_t p99_per_second = 0;
  int64_t requests = 0;         // every attempt, first ones included
  int64_t failed_requests = 0;  // attempts that failed (refused while down, 503 over capacity)
  int64_t delivered = 0;        // events delivered
  int64_t exhausted = 0;        // events whose policy gave up (attempts or deadline)
  // From the recovery to the last event's final outcome (delivered or given up), in seconds with
  // millisecond precision; 0 when every event had given up before the recovery.
  double drain_seconds = 0;
  // The most first attempts (failures) in one second: with no jitter, the herd's size.
  int64_t peak_failures_per_second = 0;
  // Requests per second, only the seconds with at least one request, in increasing order:
  // {second, count}. As long as the run has distinct seconds (at most `requests` entries).
  std::vector<std::pair<int64_t, int64_t>> arrivals;
};

// Runs one strategy. The first-attempt times depend only on the scenario's seed, so every
// strategy faces the same outage; the jitter draws follow from the same seed.
// REQUIRES: scenario.Validate().ok(), strategy.policy.Validate().ok().
HerdResult SimulateHerd(const HerdScenario& scenario, const HerdStrategy& strategy);

// The comparison made when no policy is chosen: exponential backoff with the default preset's
// base (1m), cap (30m), max_attempts (6) and max_duration (1h) under each jitter — "none",
// "full", "equal", "decorrelated" — then every preset by its name (policy::PresetNames()).
std::vector<HerdStrategy> DefaultHerdStrategies();

// The name a chosen policy goes by: its preset's name, else "custom <strategy>/<jitter>"
// ("custom exponential/full").
std::string HerdStrategyName(const policy::RetryPolicy& p);

}  // namespace hookrelay::sim
