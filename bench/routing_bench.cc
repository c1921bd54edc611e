// CPU per event of routing at ingest (src/routing), without HTTP or the store: the 8 Stripe-like
// events and the 10 routes of the ingest_filtered suite (issue 27), read from the match.json that
// bench/routing_fixture.py writes (path in HOOKRELAY_ROUTING_FIXTURE; bench/run sets it). Each
// iteration is one event, the next of the 8 in turn, matched as IngestService's BuildEvent does:
// every route's Matches, and for a route that does not take the event its reason (Match).
#include <benchmark/benchmark.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "routing/route_rule.h"

namespace hookrelay::routing {
namespace {

namespace json = boost::json;

struct Fixture {
  std::vector<HeaderField> headers;
  std::vector<std::string> bodies;
  std::vector<json::value> parsed;               // the bodies, parsed once
  std::vector<std::string> types;                // each body's "type"
  std::vector<std::vector<RouteRule>> variants;  // unfiltered, filtered_all, filtered_some
  std::string error;
};

const Fixture& Load() {
  static const Fixture f = [] {
    Fixture f;
    const char* path = std::getenv("HOOKRELAY_ROUTING_FIXTURE");
    if (!path) {
      f.error =
          "set HOOKRELAY_ROUTING_FIXTURE to the match.json of bench/routing_fixture.py ingest";
      return f;
    }
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    boost::system::error_code ec;
    const json::value doc = json::parse(text, ec);
    if (ec || !doc.is_object()) {
      f.error = std::string("cannot read ") + path;
      return f;
    }
    for (const auto& h : doc.at("headers").as_array()) {
      f.headers.emplace_back(std::string(h.as_array().at(0).as_string()),
                             std::string(h.as_array().at(1).as_string()));
    }
    for (const auto& b : doc.at("bodies").as_array()) {
      f.bodies.emplace_back(b.as_string());
      f.parsed.push_back(json::parse(f.bodies.back()));
      f.types.emplace_back(f.parsed.back().at("type").as_string());
    }
    for (const char* name : {"unfiltered", "filtered_all", "filtered_some"}) {
      std::vector<RouteRule> rules;
      for (const auto& r : doc.at("variants").at(name).as_array()) {
        Result<RouteRule> rule = ParseRouteRule(r.as_object(), "routes[0]");
        if (!rule.ok()) {
          f.error = std::string(name) + ": " + rule.status().message();
          return f;
        }
        rules.push_back(std::move(*rule));
      }
      f.variants.push_back(std::move(rules));
    }
    return f;
  }();
  return f;
}

// The body parsed as ingest parses it (every source whose type is in the body pays this, with or
// without filters).
void BM_ParseBody(benchmark::State& state) {
  const Fixture& f = Load();
  if (!f.error.empty()) {
    state.SkipWithError(f.error.c_str());
    return;
  }
  size_t i = 0;
  for (auto _ : state) {
    boost::system::error_code ec;
    json::value v = json::parse(f.bodies[i++ % f.bodies.size()], ec);
    benchmark::DoNotOptimize(v);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// One event through the 10 routes of a variant (0 unfiltered, 1 filtered_all, 2 filtered_some),
// the body already parsed: what routing adds per event. Counter "taken": routes taking an event.
void BM_Route(benchmark::State& state) {
  const Fixture& f = Load();
  if (!f.error.empty()) {
    state.SkipWithError(f.error.c_str());
    return;
  }
  const std::vector<RouteRule>& rules = f.variants[static_cast<size_t>(state.range(0))];
  size_t i = 0, taken = 0;
  std::vector<std::string> reasons;
  for (auto _ : state) {
    const size_t n = i++ % f.bodies.size();
    const MatchInput input{f.headers, &f.parsed[n]};
    const std::optional<std::string_view> type = f.types[n];
    reasons.clear();
    for (const RouteRule& rule : rules) {
      if (rule.Matches(type, input)) {
        ++taken;
      } else {
        reasons.push_back(rule.Match(type, input).reason);
      }
    }
    benchmark::DoNotOptimize(reasons.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["taken"] =
      state.iterations() ? static_cast<double>(taken) / static_cast<double>(state.iterations()) : 0;
  static const char* const kLabels[] = {"unfiltered", "filtered_all", "filtered_some"};
  state.SetLabel(kLabels[state.range(0)]);
}

BENCHMARK(BM_ParseBody)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_Route)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace hookrelay::routing

BENCHMARK_MAIN();
