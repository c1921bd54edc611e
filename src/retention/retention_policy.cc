#include "retention/retention_policy.h"

#include <algorithm>

namespace hookrelay::retention {

Duration RetentionPeriod(const model::Catalog& catalog) {
  Duration longest{0};
  for (const auto& [name, destination] : catalog.destinations) {
    longest = std::max(longest, destination.policy.replay_window);
  }
  return longest > Duration::zero() ? longest : kDefaultRetention;
}

TimePoint PurgeCutoff(const model::Catalog& catalog, TimePoint now) {
  return now - RetentionPeriod(catalog);
}

}  // namespace hookrelay::retention
