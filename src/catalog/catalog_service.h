#pragma once

#include <boost/json/value.hpp>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog_plan.h"
#include "common/background_loop.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/result.h"
#include "model/registry.h"
#include "store/store.h"

namespace hookrelay::catalog {

// The catalog of sources, destinations and routes, kept in the store so that objects created
// through the API survive restarts, and installed in the Registry that ingest, delivery and the
// API read. Every change is validated against the whole catalog, written to the store together
// with its audit entry ("config_change"), and only then made live: a change the store refused
// leaves the live catalog as it was.
//
// Objects from the config file (origin "config") are owned by that file: the API refuses to
// change or delete them (kFailedPrecondition, "change it in the config file") instead of making
// a change the next start would silently undo.
//
// Several nodes share one store (PostgreSQL): each change raises the store's catalog version
// (Store::CatalogVersion) and is written only if the version is still the one this service
// loaded (CatalogChange::if_version), so a change validated against a stale catalog is refused,
// never written over another node's. Refresh reloads the stored catalog when its version moved
// (Start runs it every `poll` and at each Notify, which the store's Watch calls when another
// node changed it). A reload installs the catalog as stored: the config file's objects are
// merged only by Load, at start.
//
// Thread-safe; changes are serialized.
class CatalogService {
 public:
  // `store` and `registry` must outlive the service. `on_change` (may be empty) runs after every
  // change made live (here or by a reload), e.g. to wake the delivery engine for a new
  // destination.
  CatalogService(store::Store& store, model::Registry& registry, const Clock& clock,
                 std::function<void()> on_change = {});
  ~CatalogService();
  CatalogService(const CatalogService&) = delete;
  CatalogService& operator=(const CatalogService&) = delete;

  // Reloads the catalog when the store's version differs from the one installed: true when it
  // did. A stored catalog that does not build (an object this build cannot parse, written by
  // another node's newer build) is an error that leaves the live catalog as it was (logged once
  // per version by the refresh thread).
  Result<bool> Refresh();
  // Runs Refresh on a thread of its own at once, then every `poll` (real time) and soon after
  // each Notify.
  // REQUIRES: Load succeeded, not started.
  void Start(Duration poll = std::chrono::seconds(1));
  void Stop();  // idempotent
  // Another node changed the catalog (Store::Watch): refresh now.
  void Notify();
  // The catalog version installed (tests).
  int64_t version() const;

  // A check every destination created or changed through the API must pass besides its own
  // validation (the composition root refuses loopback/private addresses with it). A change is
  // checked when it names "url" or "allow_private". Set before serving; empty: none.
  using DestinationCheck = std::function<Status(const model::Destination&)>;
  void SetDestinationCheck(DestinationCheck check) { destination_check_ = std::move(check); }
  // A check of every transform a destination or route created or changed through the API carries
  // (the composition root compiles it, so a syntax error is a 400 when it is saved rather than a
  // failed delivery later). Called when the body or patch names "transform". Empty: none.
  using TransformCheck = std::function<Status(const model::TransformSpec&)>;
  void SetTransformCheck(TransformCheck check) { transform_check_ = std::move(check); }

  // At start: merges the config file's objects (nullopt: no config file) into the stored
  // catalog as PlanSeed describes, writes the difference with one audit entry (actor "config"),
  // and installs the result. Returns the lines worth logging. An error (a stored object that no
  // longer parses, a store failure) leaves the registry untouched.
  Result<std::vector<std::string>> Load(
      const std::optional<std::vector<store::CatalogObject>>& config_objects);

  // Creates an object from its API JSON. kInvalidArgument (naming the field) for a bad object or
  // a route naming an unknown source or destination; kAlreadyExists for a taken name (or a route
  // between the same pair). Returns the new object's name (a route's id).
  Result<std::string> Create(store::CatalogKind kind, const boost::json::value& body,
                             const std::string& actor);
  // Applies a JSON merge patch (RFC 7396) to a source or destination: given members replace,
  // null resets to the default, secrets not mentioned are kept. kNotFound, kFailedPrecondition
  // for a config-file object, kInvalidArgument for a bad result or a renaming.
  Status Update(store::CatalogKind kind, const std::string& name, const boost::json::value& patch,
                const std::string& actor);
  // Deletes an object. kFailedPrecondition for a config-file object, a source or destination
  // that routes still name, or a destination with deliveries not final yet (they would be lost).
  Status Remove(store::CatalogKind kind, const std::string& name, const std::string& actor);

 private:
  using Key = std::pair<store::CatalogKind, std::string>;
  // Validates `objects`, writes `change` with an audit entry, installs.
  Status Commit(std::vector<store::CatalogObject> objects, store::CatalogChange change,
                const std::string& actor, const std::string& op, store::CatalogKind kind,
                const std::string& name, boost::json::object detail) REQUIRES(mu_);
  // The stored object, or nullptr.
  const store::CatalogObject* Find(store::CatalogKind kind, const std::string& name) const
      REQUIRES(mu_);
  Status RefuseConfigOwned(const store::CatalogObject& o, std::string_view verb) const;
  Result<bool> RefreshLocked() REQUIRES(mu_);

  store::Store& store_;
  model::Registry& registry_;
  const Clock& clock_;
  std::function<void()> on_change_;
  DestinationCheck destination_check_;
  TransformCheck transform_check_;

  mutable Mutex mu_;
  std::vector<store::CatalogObject> objects_ GUARDED_BY(mu_);  // as stored, in order
  int64_t version_ GUARDED_BY(mu_) = 0;                        // the store's, when loaded
  int64_t failed_version_ GUARDED_BY(mu_) = -1;  // a version that did not build (logged)

  BackgroundLoop refresher_;  // last: stopped first, while what its passes use still exists
};

}  // namespace hookrelay::catalog
