#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/mutex.h"

namespace hookrelay::ingest {

// Events stored per source and type, for /metrics (hookrelay_events_received_total). Bounded:
// past `max_types` distinct types of one source, the new ones count as kOtherType, so a sender
// cannot grow the metrics (or this map) without end. Events without a type count under "".
// Thread-safe.
class TypeCounts {
 public:
  static constexpr size_t kDefaultMaxTypes = 200;
  static constexpr std::string_view kOtherType = "other";

  explicit TypeCounts(size_t max_types = kDefaultMaxTypes) : max_types_(max_types) {}

  void Add(const std::string& source, const std::optional<std::string>& type);
  // source -> type -> count.
  std::map<std::string, std::map<std::string, int64_t>> Snapshot() const;

 private:
  const size_t max_types_;
  mutable Mutex mu_;
  std::map<std::string, std::map<std::string, int64_t, std::less<>>> counts_ GUARDED_BY(mu_);
};

}  // namespace hookrelay::ingest
