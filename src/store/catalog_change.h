#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "store/catalog_store.h"

namespace hookrelay::store {

// What both stores refuse in a catalog change before writing anything: an object without a name
// or spec, an origin other than "config" or "api", an audit entry without an action.
[[nodiscard]] Status CheckCatalogChange(const CatalogChange& change);
// Whether `change` writes (puts) the destination `name`: a destination both removed and put in
// one change keeps its stored breaker and pause; one only removed loses them.
bool PutsDestination(const CatalogChange& change, const std::string& name);
// The answer to a change whose if_version is not the catalog's version any more.
Status CatalogChangedMeanwhile(int64_t expected, int64_t found);

// The operations ApplyCatalogChange needs, each on the store's one open transaction. A store
// implements them with its own SQL; the order of the steps and the rules between them are
// ApplyCatalogChangeSteps's, written once for both stores. An error from any operation ends the
// change: the caller rolls the transaction back.
class CatalogTransaction {
 public:
  virtual ~CatalogTransaction() = default;
  // Raises the catalog's version by one (from 0 when none was stored) and returns the new value.
  // The version's row stays locked until the transaction ends, so concurrent changes take their
  // versions in turn.
  virtual Result<int64_t> RaiseVersion() = 0;
  // Called once before the open deliveries are counted: from here to the commit no delivery may
  // be created or reopened (a store with one writer has nothing to do).
  virtual Status HoldDeliveries() = 0;
  // Deliveries to `destination` that are not final yet (scheduled, delivering, paused, pending).
  virtual Result<int64_t> CountOpenDeliveries(const std::string& destination) = 0;
  // Deletes the catalog object; an absent one is not an error.
  virtual Status Remove(CatalogKind kind, const std::string& name) = 0;
  // Deletes the destination's stored breaker and pause.
  virtual Status ForgetDestinationControl(const std::string& destination) = 0;
  // Inserts the object, or replaces its spec and origin keeping created_at and its place.
  virtual Status Put(const CatalogObject& object, TimePoint now) = 0;
  virtual Status AppendAudit(const AuditEntry& entry) = 0;
};

// ApplyCatalogChange's steps in `txn`, in this order: raise the version (and refuse the change
// when if_version is not the version before it: CatalogChangedMeanwhile); hold and count the
// open deliveries of require_no_open_deliveries (FailedPrecondition naming the first destination
// that has some); remove (a removed destination's breaker and pause with it, unless the change
// puts it again); put; append the audit entry. REQUIRES: CheckCatalogChange(change) is ok.
[[nodiscard]] Status ApplyCatalogChangeSteps(const CatalogChange& change, TimePoint now,
                                             CatalogTransaction& txn);

}  // namespace hookrelay::store
