#pragma once

#include <functional>
#include <memory>

#include "common/result.h"
#include "store/audit_store.h"
#include "store/catalog_store.h"
#include "store/delivery_queue.h"
#include "store/destination_control_store.h"
#include "store/event_store.h"
#include "store/key_store.h"
#include "store/replay_job_store.h"
#include "store/token_store.h"

namespace hookrelay::store {

// The store of events, deliveries and attempts. Every method is thread-safe.
// Implementations: SqliteStore (embedded, default) and PostgresStore (docs/postgres.md); OpenStore
// (store/open_store.h) opens the one an address names.
//
// Its methods are grouped in role interfaces, one header each: EventStore (event_store.h),
// DeliveryQueue (delivery_queue.h), DestinationControlStore (destination_control_store.h),
// CatalogStore (catalog_store.h), AuditStore (audit_store.h), ReplayJobStore
// (replay_job_store.h), TokenStore (token_store.h) and KeyStore (key_store.h). A part that needs
// one role may take it alone; Store adds what concerns the store as a whole (several nodes,
// readiness). StoreWrapper (store_wrapper.h) forwards all.
class Store : public EventStore,
              public DeliveryQueue,
              public DestinationControlStore,
              public CatalogStore,
              public AuditStore,
              public ReplayJobStore,
              public TokenStore,
              public KeyStore {
 public:
  ~Store() override = default;

  // What another node committed that this node acts on at once, instead of at its next poll.
  enum class Change {
    kNewWork,     // deliveries became due: events stored, replays created, deliveries resumed
    kCatalog,     // the catalog changed (CatalogVersion went up)
    kReplayJobs,  // a bulk replay job was queued or cancelled
  };
  using ChangeCallback = std::function<void(Change)>;
  // Calls `on_change` soon after another node commits such a change (on a store thread: it must
  // return quickly, must not block and must not call the store). Changes this store's own caller
  // made are not reported (the process wakes its parts itself). When the store may have missed
  // some (its listening connection was lost and is back), it reports every kind. Call once,
  // before the changes of interest; the callback must stay valid until the store is destroyed.
  // A store used by one process (the embedded one: its directory is locked) has no other node,
  // and keeps this default, which never calls it.
  virtual void Watch(ChangeCallback /*on_change*/) {}
  // Stops calling the Watch callback: when it returns, no call is running and none follows
  // (before the parts the callback reaches are destroyed). Idempotent.
  virtual void Unwatch() {}

  // For /readyz: OK when the store answers now; otherwise why not, in words that may be shown to
  // anyone (no address, user, password or path: /readyz is not authenticated). The details go
  // to the log. The default probes NextDueAt.
  virtual Status CheckReady();
};

}  // namespace hookrelay::store
