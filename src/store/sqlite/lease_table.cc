// SqliteStore's in-memory lease table (id -> owner, lease_until) and the pending counts kept
// beside it.

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <future>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "common/crypto.h"
#include "common/id.h"
#include "common/list_limits.h"
#include "common/thread_name.h"
#include "store/event_id.h"
#include "store/row_codec.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/statements.h"
#include "store/sqlite/write_ops.h"

namespace hookrelay::store {

using sqlite::Connection;
using sqlite::Statement;

void SqliteStore::SetLease(int64_t id, std::optional<Lease> lease) {
  MutexLock lock(leases_mu_);
  auto it = leases_.find(id);
  if (op_) {
    op_->lease_undo.emplace_back(
        id, it == leases_.end() ? std::nullopt : std::optional<Lease>(it->second));
  }
  if (lease) {
    leases_[id] = std::move(*lease);
  } else if (it != leases_.end()) {
    leases_.erase(it);
  }
}

void SqliteStore::UndoLeases(WriteOp& op) {
  if (op.lease_undo.empty()) return;
  MutexLock lock(leases_mu_);
  for (auto it = op.lease_undo.rbegin(); it != op.lease_undo.rend(); ++it) {
    if (it->second) {
      leases_[it->first] = std::move(*it->second);
    } else {
      leases_.erase(it->first);
    }
  }
  op.lease_undo.clear();
}

void SqliteStore::UndoLeases(const std::vector<std::unique_ptr<WriteOp>>& batch,
                             const std::vector<size_t>& pending) {
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) UndoLeases(*batch[*it]);
}

std::optional<int64_t> SqliteStore::PendingFrontier(const std::string& destination) const {
  MutexLock lock(leases_mu_);
  std::optional<int64_t> out;
  for (const auto& [dest, p] : pending_) {
    if (!destination.empty() && dest != destination) continue;
    if (!out || p.frontier < *out) out = p.frontier;
  }
  return out;
}

int64_t SqliteStore::UnleasedPending(const std::string& destination) const {
  MutexLock lock(leases_mu_);
  int64_t n = 0;
  for (const auto& [dest, p] : pending_) {
    if (destination.empty() || dest == destination) n += p.count;
  }
  for (const auto& [id, l] : leases_) {
    if (l.pending && (destination.empty() || l.destination == destination)) --n;
  }
  return std::max<int64_t>(n, 0);
}

std::optional<SqliteStore::Lease> SqliteStore::LeaseOf(int64_t id) const {
  MutexLock lock(leases_mu_);
  auto it = leases_.find(id);
  if (it == leases_.end()) return std::nullopt;
  return it->second;
}

void SqliteStore::OverlayLease(Delivery& d) const {
  if (std::optional<Lease> l = LeaseOf(d.id)) {  // claimed: in flight
    d.status = DeliveryStatus::kDelivering;
    d.lease_until = l->until;
    d.lease_owner = l->owner;
  }
}

std::string SqliteStore::LeasedIdsJson(const std::string& destination, bool current_only) const {
  std::string out = "[";
  MutexLock lock(leases_mu_);
  for (const auto& [id, l] : leases_) {
    if (!destination.empty() && l.destination != destination) continue;
    if (current_only && !l.current) continue;
    if (out.size() > 1) out += ',';
    out += std::to_string(id);
  }
  out += ']';
  return out;
}

}  // namespace hookrelay::store
