#pragma once

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <vector>

#include "access/scope.h"
#include "api/events_json.h"
#include "common/result.h"
#include "model/registry.h"
#include "store/store.h"

// The store reads behind the events' JSON (events_json.h), for ApiHandler's events routes and
// its tests. They may block: call them from the API's worker threads.

namespace hookrelay::api {

// Every destination of `catalog`'s cause, from one read of the stored controls.
Result<PauseCauses> LoadPauseCauses(store::Store& store, const model::Catalog& catalog);

// Reads the event, its deliveries and their attempts; nullopt when there is no such event. With
// `catalog`, a paused delivery's cause is read too (LoadPauseCauses).
//
// Not one read transaction: the event, its deliveries, then each delivery's attempts (and, for an
// ordered one waiting, its queue's head) are separate Store reads, so a delivery recorded between
// them may show an attempt its status does not count yet.
//
// With `scope` (a scoped token's), an event it does not reach (its source, or a delivery to one of
// its destinations) is nullopt too, and the deliveries and route misses of other destinations are
// left out.
Result<std::optional<boost::json::object>> LoadEventDetail(store::Store& store,
                                                           const std::string& id,
                                                           bool with_body = true,
                                                           const model::Catalog* catalog = nullptr,
                                                           const access::Scope* scope = nullptr);

// Whether a scoped token reaches an event of `source` with deliveries to `destinations`.
bool ReachesEvent(const access::Scope& scope, const std::string& source,
                  const std::vector<std::string>& destinations);

}  // namespace hookrelay::api
