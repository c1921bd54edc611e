#pragma once

#include <string>
#include <utility>

#include "model/registry.h"
#include "policy/retry_policy.h"

namespace hookrelay::retention::test {

// A destination named `name` with the retry policy of `preset` and, when positive, its own
// replay window.
inline model::Destination MakeDestination(std::string name, const std::string& preset = "default",
                                          Duration replay_window = Duration::zero()) {
  model::Destination d;
  d.name = std::move(name);
  d.url = "https://example.com/" + d.name;
  d.policy = *policy::PresetPolicy(preset);
  if (replay_window > Duration::zero()) d.policy.replay_window = replay_window;
  return d;
}

inline void AddDestination(model::Catalog& catalog, model::Destination d) {
  std::string name = d.name;
  catalog.destinations.emplace(std::move(name), std::move(d));
}

}  // namespace hookrelay::retention::test
