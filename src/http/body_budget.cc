#include "http/body_budget.h"

#include <algorithm>

#include "common/units.h"

namespace hookrelay::http {

BodyBudget::Refusal BodyBudget::Take(const ClientKey& client, uint64_t n) {
  if (max_per_client_ == 0) return TakeTotal(n) ? Refusal::kNone : Refusal::kServer;
  MutexLock lock(mu_);
  uint64_t& held = per_client_[client];
  if (n > max_per_client_ || held > max_per_client_ - n) {
    if (held == 0) per_client_.erase(client);
    return Refusal::kClient;
  }
  if (!TakeTotal(n)) {
    if (held == 0) per_client_.erase(client);
    return Refusal::kServer;
  }
  held += n;
  return Refusal::kNone;
}

void BodyBudget::Give(const ClientKey& client, uint64_t n) {
  total_.fetch_sub(n, std::memory_order_relaxed);
  if (max_per_client_ == 0) return;
  MutexLock lock(mu_);
  auto it = per_client_.find(client);
  if (it == per_client_.end()) return;
  it->second -= std::min(it->second, n);
  if (it->second == 0) per_client_.erase(it);
}

uint64_t BodyBudget::HeldBy(const ClientKey& client) const {
  MutexLock lock(mu_);
  auto it = per_client_.find(client);
  return it == per_client_.end() ? 0 : it->second;
}

size_t BodyBudget::clients() const {
  MutexLock lock(mu_);
  return per_client_.size();
}

bool BodyBudget::TakeTotal(uint64_t n) {
  uint64_t current = total_.load(std::memory_order_relaxed);
  do {
    if (n > max_total_ || current > max_total_ - n) return false;
  } while (!total_.compare_exchange_weak(current, current + n, std::memory_order_relaxed));
  return true;
}

BodyBudget::Refusal BodyReservation::Take(uint64_t n) {
  const BodyBudget::Refusal refusal = budget_->Take(client_, n);
  if (refusal == BodyBudget::Refusal::kNone) held_ += n;
  return refusal;
}

BodyBudget::Refusal BodyReservation::Cover(uint64_t needed, uint64_t cap) {
  if (needed <= held_) return BodyBudget::Refusal::kNone;
  constexpr uint64_t kMinStep = 16 * 1024;
  const uint64_t wanted =
      std::max(needed, std::min(std::max(held_ * 2, kMinStep), std::max(cap, needed)));
  BodyBudget::Refusal refusal = Take(wanted - held_);
  if (refusal != BodyBudget::Refusal::kNone && wanted > needed) refusal = Take(needed - held_);
  return refusal;
}

void BodyReservation::Release() {
  if (held_ == 0) return;
  budget_->Give(client_, held_);
  held_ = 0;
}

BodyLimit EffectiveBodyLimit(uint64_t handler_limit, uint64_t max_body_memory,
                             uint64_t max_body_memory_per_client) {
  BodyLimit limit{handler_limit, BodyLimit::Kind::kHandler};
  if (limit.bytes > max_body_memory) limit = {max_body_memory, BodyLimit::Kind::kMemory};
  if (max_body_memory_per_client > 0 && limit.bytes > max_body_memory_per_client) {
    limit = {max_body_memory_per_client, BodyLimit::Kind::kClientMemory};
  }
  return limit;
}

std::string BodyLimitText(const BodyLimit& limit) {
  const std::string size = FormatByteSize(limit.bytes);
  switch (limit.kind) {
    case BodyLimit::Kind::kHandler: break;
    case BodyLimit::Kind::kMemory:
      return "the server's max_body_memory (" + size + "), the memory for all bodies together";
    case BodyLimit::Kind::kClientMemory:
      return "the server's max_body_memory_per_client (" + size +
             "), the memory for one client's bodies together";
  }
  return "the limit of " + size;
}

}  // namespace hookrelay::http
