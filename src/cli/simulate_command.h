#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "sim/herd.h"

namespace CLI {
class App;
}

namespace hookrelay::cli {

// `hookrelay simulate herd`: what each retry policy does to an endpoint recovering from an outage.
struct HerdOptions {
  std::string events = "500";
  std::string fail_window = "60s";
  std::string recover_at = "4m";
  std::string capacity = "50/s";
  // The policies to compare, in the order given: {is_json, text}. Empty: the default set.
  std::vector<std::pair<bool, std::string>> policies;
  std::string seed = "1";
  bool json = false;
  std::string svg;
};

// The scenario from the flags; errors name the flag ("--events: …").
Result<sim::HerdScenario> ResolveHerdScenario(const HerdOptions& options);
// The strategies to compare; errors name the flag and, for JSON, the policy's field.
Result<std::vector<sim::HerdStrategy>> ResolveHerdStrategies(const HerdOptions& options);

void AddSimulateCommand(CLI::App& app, int& exit_code);

}  // namespace hookrelay::cli
