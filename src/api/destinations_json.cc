#include "api/destinations_json.h"

#include <boost/json.hpp>

#include "api/events_json.h"
#include "api/json_util.h"
#include "common/time_format.h"
#include "pacing/adaptive_concurrency.h"
#include "policy/breaker.h"
#include "policy/breaker_json.h"

namespace hookrelay::api {

namespace json = boost::json;

json::object HeldQueuesToJson(const store::HeldQueues& held) {
  json::array queues;
  for (const store::HeldQueue& q : held.queues) {
    queues.push_back(json::object{{"order_key", q.order_key},
                                  {"head", OrderHeadToJson(q.head)},
                                  {"waiting", q.waiting},
                                  {"waiting_since", FormatRfc3339(q.waiting_since)}});
  }
  return json::object{{"total", held.total}, {"queues", std::move(queues)}};
}

json::object DestinationViewToJson(const model::Destination& d,
                                   const delivery::DestinationState* state, TimePoint now) {
  delivery::DestinationState initial;
  if (!state) {
    initial.allowed_concurrency = pacing::AdaptiveConcurrency(d.max_concurrency).allowed();
    state = &initial;
  }
  json::object o = DestinationToJson(d);
  // A rotation whose grace period is over signs with the new secret alone (SigningKeys): it is
  // no longer shown, though the old secret stays stored until the next rotation replaces it.
  if (d.signing_secret_previous && !d.signing_secret_previous->ValidAt(now)) {
    o["signing_secret_rotation"] = nullptr;
  }
  const policy::BreakerSnapshot& b = state->breaker;
  // The snapshot's open_until is the end of the open period only while open; half-open, it is
  // when the probe went out, shown as such (and only while that probe is out).
  const bool open = b.state == policy::BreakerState::kOpen;
  json::object breaker{{"state", policy::BreakerStateName(b.state)},
                       {"consecutive_failures", b.consecutive_failures},
                       {"open_until", open ? TimeOrNull(b.open_until) : json::value(nullptr)},
                       {"trips", b.trips}};
  if (b.state == policy::BreakerState::kHalfOpen && b.probe_in_flight && b.open_until) {
    breaker["probe_sent_at"] = TimeOrNull(b.open_until);
  }
  o["breaker"] = std::move(breaker);
  // The breaker's settings as configured (threshold, open periods, escalation_reset), which
  // "breaker" (the live state) replaces above, so `destinations show` can say them.
  o["breaker_settings"] = policy::BreakerConfigToJson(d.breaker);
  const bool paused = d.paused || state->paused;
  o["paused"] = paused;
  json::value reason = nullptr;
  if (state->paused && !state->paused_reason.empty()) {
    reason = json::string(state->paused_reason);
  } else if (paused) {
    reason = "paused in the configuration";
  }
  o["paused_reason"] = std::move(reason);
  // Just after a change of max_concurrency (PATCH), the engine has not seen it yet; it will
  // start the new limit afresh, so that is what is shown.
  o["allowed_concurrency"] =
      state->max_concurrency != 0 && state->max_concurrency != d.max_concurrency
          ? pacing::AdaptiveConcurrency(d.max_concurrency).allowed()
          : state->allowed_concurrency;
  o["in_flight"] = state->in_flight;
  // Of the last delivery::LatencyWindow::kCapacity attempts this process made (nearest rank);
  // null percentiles until one was timed.
  const delivery::LatencySummary& l = state->latency;
  o["latency"] =
      json::object{{"p50_ms", l.samples > 0 ? json::value(l.p50_ms) : json::value(nullptr)},
                   {"p99_ms", l.samples > 0 ? json::value(l.p99_ms) : json::value(nullptr)},
                   {"samples", l.samples}};
  return o;
}

json::object DestinationListToJson(const model::Catalog& catalog,
                                   const std::map<std::string, delivery::DestinationState>& states,
                                   TimePoint now) {
  json::array items;
  for (const auto& [name, d] : catalog.destinations) {
    auto it = states.find(name);
    items.push_back(DestinationViewToJson(d, it == states.end() ? nullptr : &it->second, now));
  }
  return List(std::move(items));
}

}  // namespace hookrelay::api
