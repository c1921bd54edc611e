#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace hookrelay::store {

// The dashboard's counters (stats_minute, Store::GetStats) that writes add, by (Unix minute,
// destination): both stores sum them in memory over a batch or transaction and write each key
// once at its end, in key order (two transactions never wait for each other's rows in opposite
// orders).
struct StatsCounts {
  int64_t received = 0, delivered = 0, failed = 0, attempts = 0, attempt_failures = 0;
};
using StatsDelta = std::map<std::pair<int64_t, std::string>, StatsCounts>;

}  // namespace hookrelay::store
