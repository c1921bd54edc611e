#include "store/catalog_change.h"

#include <algorithm>

namespace hookrelay::store {

Status CheckCatalogChange(const CatalogChange& change) {
  for (const CatalogObject& o : change.put) {
    if (o.name.empty()) return Status::InvalidArgument("catalog object name is empty", "name");
    if (o.spec.empty()) return Status::InvalidArgument("catalog object spec is empty", "spec");
    if (o.origin != "config" && o.origin != "api") {
      return Status::InvalidArgument("catalog origin must be config or api", "origin");
    }
  }
  if (change.audit && change.audit->action.empty()) {
    return Status::InvalidArgument("audit action is empty", "action");
  }
  return Status::Ok();
}

bool PutsDestination(const CatalogChange& change, const std::string& name) {
  return std::any_of(change.put.begin(), change.put.end(), [&](const CatalogObject& o) {
    return o.kind == CatalogKind::kDestination && o.name == name;
  });
}

Status CatalogChangedMeanwhile(int64_t expected, int64_t found) {
  return Status::Unavailable("the catalog was changed meanwhile (through another node): version " +
                             std::to_string(found) + ", not " + std::to_string(expected) +
                             "; try again");
}

Status ApplyCatalogChangeSteps(const CatalogChange& change, TimePoint now,
                               CatalogTransaction& txn) {
  HR_ASSIGN_OR_RETURN(const int64_t version, txn.RaiseVersion());
  if (change.if_version && *change.if_version != version - 1) {
    return CatalogChangedMeanwhile(*change.if_version, version - 1);
  }
  if (!change.require_no_open_deliveries.empty()) HR_RETURN_IF_ERROR(txn.HoldDeliveries());
  for (const std::string& destination : change.require_no_open_deliveries) {
    HR_ASSIGN_OR_RETURN(const int64_t open, txn.CountOpenDeliveries(destination));
    if (open > 0) {
      return Status::FailedPrecondition("destination \"" + destination + "\" has " +
                                        std::to_string(open) +
                                        " deliveries that are not delivered or failed yet");
    }
  }
  for (const auto& [kind, name] : change.remove) {
    HR_RETURN_IF_ERROR(txn.Remove(kind, name));
    // Its breaker and pause go with it: a destination made again under this name starts closed
    // and unpaused.
    if (kind == CatalogKind::kDestination && !PutsDestination(change, name)) {
      HR_RETURN_IF_ERROR(txn.ForgetDestinationControl(name));
    }
  }
  for (const CatalogObject& o : change.put) HR_RETURN_IF_ERROR(txn.Put(o, now));
  if (change.audit) HR_RETURN_IF_ERROR(txn.AppendAudit(*change.audit));
  return Status::Ok();
}

}  // namespace hookrelay::store
