#include "ingest/type_counts.h"

namespace hookrelay::ingest {

void TypeCounts::Add(const std::string& source, const std::optional<std::string>& type) {
  const std::string_view t = type ? std::string_view(*type) : std::string_view();
  MutexLock lock(mu_);
  auto& of_source = counts_[source];
  if (auto it = of_source.find(t); it != of_source.end()) {
    ++it->second;
    return;
  }
  // kOtherType itself is not one of the `max_types_` types: it is where they overflow.
  const size_t kept = of_source.size() - (of_source.count(kOtherType) ? 1 : 0);
  ++of_source[kept < max_types_ ? std::string(t) : std::string(kOtherType)];
}

std::map<std::string, std::map<std::string, int64_t>> TypeCounts::Snapshot() const {
  std::map<std::string, std::map<std::string, int64_t>> out;
  MutexLock lock(mu_);
  for (const auto& [source, types] : counts_) out[source].insert(types.begin(), types.end());
  return out;
}

}  // namespace hookrelay::ingest
