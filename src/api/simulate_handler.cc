#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/handler_util.h"
#include "api/request_params.h"
#include "common/allocator.h"
#include "sim/herd.h"
#include "sim/herd_input.h"
#include "sim/herd_report.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

// Simulations that may simulate more requests than this (sim::HerdRequestBound) run one at a time.
constexpr int64_t kSmallSimulation = 200'000;

}  // namespace

http::Response ApiHandler::Simulate(const http::Request& request,
                                    const model::Catalog& catalog) const {
  // The parsers' messages leave the parameter's name out ("must be between 1 and …"): it is put
  // in front here, as the CLI puts its flag.
  auto invalid = [](const Status& st) {
    return http::JsonError(400, Status::CodeName(st.code()), st.field() + ": " + st.message(),
                           st.field());
  };
  auto query = ParseSimulateQuery(request);
  if (!query.ok()) return FromStatus(query.status());
  auto scenario = sim::ParseHerdScenario(query->input, ApiHerdLimits());
  if (!scenario.ok()) return invalid(scenario.status());
  std::vector<sim::HerdStrategy> strategies;
  if (query->destination) {
    const model::Destination* d = catalog.FindDestination(*query->destination);
    if (!d) return NotFound("destination", *query->destination);
    strategies.push_back({sim::HerdStrategyName(d->policy), d->policy});
  }
  // With a destination, the policies given are compared with it; alone, it is not compared with
  // the default set.
  if (!query->destination || !query->input.policies.empty()) {
    auto more = sim::ParseHerdStrategies(query->input);
    if (!more.ok()) return invalid(more.status());
    strategies.insert(strategies.end(), more->begin(), more->end());
  }
  if (Status st = sim::CheckHerdLimits(*scenario, strategies, ApiHerdLimits()); !st.ok()) {
    return invalid(st);
  }
  // A small run (the dashboard's, the default comparison of 500 events: tens of milliseconds)
  // goes ahead; a large one waits for no one and takes no second worker.
  const bool large = sim::HerdRequestBound(*scenario, strategies) > kSmallSimulation;
  bool idle = false;
  if (large && !simulating_.compare_exchange_strong(idle, true)) {
    http::Response r =
        http::JsonError(429, "too_many_requests",
                        "another large simulation is running (one at a time); retry in a moment");
    r.headers.emplace_back("Retry-After", "1");
    return r;
  }
  // Destroyed after `results` (declared after it): the simulation's memory, up to a few hundred
  // MiB for the largest runs, is free by then, and given back rather than kept resident.
  struct Done {
    std::atomic<bool>* flag;
    ~Done() {
      if (!flag) return;
      ReleaseFreeMemory();
      flag->store(false);
    }
  } done{large ? &simulating_ : nullptr};
  std::vector<sim::HerdResult> results;
  for (const sim::HerdStrategy& s : strategies) results.push_back(sim::SimulateHerd(*scenario, s));
  return Json(sim::HerdToJson(*scenario, strategies, results));
}

}  // namespace hookrelay::api
