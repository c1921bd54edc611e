#include "sim/herd_input.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "common/units.h"

namespace hookrelay::sim {

namespace {

// The whole text as a number, or nullopt ("5x", "1e3").
std::optional<int64_t> WholeNumber(const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

Result<Duration> DurationArgument(const std::string& text, const std::string& field) {
  auto d = ParseDuration(text);
  if (!d.ok()) return Status::InvalidArgument(d.status().message() + " (e.g. 60s, 4m)", field);
  return d;
}

std::string ThreeDigits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

Result<HerdScenario> ParseHerdScenario(const HerdInput& input, const HerdLimits& limits) {
  HerdScenario s;
  if (input.events) {
    auto v = WholeNumber(*input.events);
    if (!v) {
      return Status::InvalidArgument(
          "expected a whole number of events (e.g. 500), got \"" + *input.events + "\"", "events");
    }
    s.events = *v;
    if (s.events < 1 || s.events > limits.max_events) {
      return Status::InvalidArgument("must be between 1 and " + std::to_string(limits.max_events) +
                                         ", got " + *input.events +
                                         (limits.max_events < kMaxHerdEvents
                                              ? " (here; `hookrelay simulate herd` takes up to " +
                                                    std::to_string(kMaxHerdEvents) + ")"
                                              : ""),
                                     "events");
    }
  }
  if (input.fail_window) {
    HR_ASSIGN_OR_RETURN(s.fail_window, DurationArgument(*input.fail_window, "fail_window"));
  }
  if (input.recover_at) {
    HR_ASSIGN_OR_RETURN(s.recover_at, DurationArgument(*input.recover_at, "recover_at"));
  }
  if (input.capacity) {
    auto rate = ParseRate(*input.capacity);
    if (!rate.ok()) {
      return Status::InvalidArgument(rate.status().message() + " (e.g. 50/s)", "capacity");
    }
    const double per_second = *rate;
    if (per_second < 1 || per_second != std::floor(per_second) || per_second > 1e9) {
      return Status::InvalidArgument(
          "the endpoint serves a whole number of requests each second, at least 1/s (got \"" +
              *input.capacity + "\" = " + ThreeDigits(per_second) + "/s)",
          "capacity");
    }
    s.capacity_per_second = static_cast<int64_t>(per_second);
  }
  if (input.seed) {
    HR_ASSIGN_OR_RETURN(s.seed, policy::ParseSeedArgument(*input.seed));
  }
  HR_RETURN_IF_ERROR(s.Validate());  // names the same fields
  return s;
}

Result<std::vector<HerdStrategy>> ParseHerdStrategies(const HerdInput& input) {
  if (input.policies.empty()) return DefaultHerdStrategies();
  std::vector<HerdStrategy> out;
  for (const policy::PolicyArgument& arg : input.policies) {
    auto p = policy::ResolvePolicyArgument(arg);
    if (!p.ok()) {
      const Status& st = p.status();
      return Status::InvalidArgument(
          (st.field().empty() ? "" : st.field() + ": ") + st.message(),
          arg.kind == policy::PolicyArgument::Kind::kPreset ? "policy" : "policy_json");
    }
    out.push_back({HerdStrategyName(*p), *p});
  }
  return out;
}

int64_t HerdRequestBound(const HerdScenario& scenario,
                         const std::vector<HerdStrategy>& strategies) {
  int64_t bound = 0;
  // events ≤ kMaxHerdEvents (1e7) and max_attempts ≤ 1000: each product fits, and so does
  // the sum of a few hundred of them.
  for (const HerdStrategy& s : strategies) bound += scenario.events * s.policy.max_attempts;
  return bound;
}

Status CheckHerdLimits(const HerdScenario& scenario, const std::vector<HerdStrategy>& strategies,
                       const HerdLimits& limits) {
  if (strategies.size() > limits.max_strategies) {
    return Status::InvalidArgument("at most " + std::to_string(limits.max_strategies) +
                                       " policies in one comparison, got " +
                                       std::to_string(strategies.size()),
                                   "policy");
  }
  const int64_t bound = HerdRequestBound(scenario, strategies);
  if (bound > limits.max_requests) {
    return Status::InvalidArgument(
        "this run could simulate up to " + std::to_string(bound) +
            " requests (events × max_attempts, summed over the policies); at most " +
            std::to_string(limits.max_requests) +
            " here: use fewer events, fewer policies or fewer attempts (`hookrelay simulate herd` "
            "has no such limit)",
        "events");
  }
  return Status::Ok();
}

}  // namespace hookrelay::sim
