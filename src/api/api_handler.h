#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "access/token_registry.h"
#include "api/api_routes.h"
#include "catalog/catalog_service.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "delivery/engine.h"
#include "http/server.h"
#include "ingest/rejection_recorder.h"
#include "model/registry.h"
#include "secrets/keyring.h"
#include "store/store.h"
#include "transform/runner.h"

namespace hookrelay::api {

// The management API under /api/v1 (see docs/api.md). Thin: it authenticates, matches the route
// table (api_routes.h), parses the query or body, calls the store or the engine (through
// Controls, since api cannot depend on app) and answers with the JSON views of
// <resource>_json.h.
// Every change it makes is written to the store's audit trail.
//
// Store reads may block, so Handle() runs them on the handler's own worker threads, never on
// the server's I/O threads. Thread-safe.
class ApiHandler {
 public:
  // Who a bearer token (the whole Authorization header value) is, or why it is refused
  // (access::TokenRegistry::Authenticate).
  using Authorizer =
      std::function<access::TokenRegistry::Authentication(std::string_view authorization)>;
  // The engine's live per-destination state (DeliveryEngine::Destinations).
  using DestinationStates = std::function<std::map<std::string, delivery::DestinationState>()>;

  // The engine's operator controls (DeliveryEngine::Pause, Resume, ResetBreaker, Wake). A
  // control left empty makes its route answer 503 "unavailable".
  struct Controls {
    std::function<Status(const std::string& destination, const std::string& reason)> pause;
    std::function<Status(const std::string& destination)> resume;
    std::function<Status(const std::string& destination)> reset_breaker;
    std::function<void()> wake;  // new replay deliveries are due now
    // ReplayRunner::Notify: a replay job was queued or cancelled (or a destination resumed).
    std::function<void()> replay_job_queued;
    // Creates, updates and deletes sources, destinations and routes; nullptr: those routes
    // answer 503 "unavailable".
    catalog::CatalogService* catalog = nullptr;
    // RejectionRecorder::Counts: a source's rejections since start (GET of a source and of its
    // rejections); empty: shown as zero.
    std::function<ingest::RejectionCounts(const std::string& source)> rejection_counts;
    // Runs transforms for POST /api/v1/transforms/test; nullptr: it answers 503.
    transform::Runner* transforms = nullptr;
    // A request was answered for this token from this client address (TokenRegistry::NoteUse).
    std::function<void(const std::string& token_name, const std::string& addr)> token_used;
    // The tokens changed through this node: read them again now (the refresher's Refresh), so a
    // revoked token is refused here at once.
    std::function<void()> tokens_changed;
    // The data key the store's secrets are encrypted under, for the keys routes (a master key's
    // rotation, docs/secrets.md); nullptr: they answer 503.
    const secrets::Keyring* keyring = nullptr;
  };

  // All references must outlive the handler. `clock` dates replays and audit entries and
  // decides replay windows. `workers` threads serve requests.
  ApiHandler(Authorizer authorize, store::Store& store, model::Registry& registry,
             DestinationStates destination_states, Controls controls, const Clock& clock,
             int workers = 2);
  // Finishes queued requests, then joins the workers.
  ~ApiHandler();
  ApiHandler(const ApiHandler&) = delete;
  ApiHandler& operator=(const ApiHandler&) = delete;

  // True for "/api/v1" and everything below it.
  static bool Matches(const http::RequestHead& head);

  // Before any body is read: 401 "unauthenticated" without a valid bearer token (checked
  // first, so nothing about the API is revealed to strangers), 404 "not_found" for an unknown
  // path, 405 "method_not_allowed" (with Allow) for a known path and another method, 403
  // "permission_denied" naming the role needed when the token's role is not enough.
  http::Handler::HeadDecision OnHead(const http::RequestHead& head) const;

  // Answers a request OnHead accepted, on a worker thread.
  void Handle(http::Request request, http::Responder respond);

  // The answer to `request`, synchronously, OnHead's checks included (for tests and Handle).
  http::Response Respond(const http::Request& request) const;

 private:
  void WorkerLoop();

  // One method per route (or group of routes), each in its resource's file; Respond() is the one
  // dispatch from the route table to them.
  // events_handler.cc
  // `scope`: a scoped token's (nullptr for none), as in the routes below that take one.
  http::Response ListEvents(const http::Request& request, const model::Catalog& catalog,
                            const access::Scope* scope) const;
  http::Response GetEvent(const http::Request& request, const std::string& id,
                          const model::Catalog& catalog, const access::Scope* scope) const;
  http::Response ReplayEvent(const http::Request& request, const std::string& id,
                             const model::Catalog& catalog, const access::Scope* scope) const;
  // destinations_handler.cc
  http::Response ListDestinations(const model::Catalog& catalog) const;
  http::Response GetDestination(const std::string& name, const model::Catalog& catalog) const;
  // A destination with its live state and held queues.
  http::Response DestinationView(const model::Destination& d) const;
  Result<boost::json::object> DestinationViewObject(const model::Destination& d) const;
  // POST …/rotate-secret: a new signing secret, the old one signing beside it for a grace period.
  http::Response RotateDestinationSecret(const http::Request& request,
                                         const std::string& name) const;
  // Pause, resume and reset-breaker.
  http::Response DestinationControl(const http::Request& request, RouteId route,
                                    const std::string& name) const;
  http::Response DestinationSchedule(const std::string& name, const model::Catalog& catalog) const;
  // sources_handler.cc
  http::Response ListSources(const model::Catalog& catalog) const;
  http::Response GetSource(const std::string& name, const model::Catalog& catalog) const;
  // GET of a source: its view with its rejection counts.
  http::Response SourceView(const model::Source& s) const;
  boost::json::object SourceViewObject(const model::Source& s) const;
  // POST …/rotate-secret: a new verification secret, the current ones still verifying beside it
  // for a grace period.
  http::Response RotateSourceSecret(const http::Request& request, const std::string& name) const;
  http::Response ListRejections(const http::Request& request, const std::string& source) const;
  ingest::RejectionCounts RejectionCountsOf(const std::string& source) const;
  // routes_handler.cc
  http::Response ListRoutes(const model::Catalog& catalog) const;
  // POST /api/v1/routes/test: which of a source's stored events a route's rule would take, and
  // why not (route_test_handler.cc).
  http::Response TestRoute(const http::Request& request, const model::Catalog& catalog) const;
  // POST /api/v1/transforms/test: a script run on an event's request (or one given), with the
  // time and memory it used, or its error (transform_test_handler.cc).
  http::Response TestTransform(const http::Request& request, const model::Catalog& catalog) const;
  // catalog_handler.cc: POST, PATCH and DELETE of sources, destinations and routes, through
  // controls_.catalog.
  http::Response ChangeCatalog(const http::Request& request, RouteId route,
                               const std::string& name) const;
  // The API view of a catalog object (a destination with its live state).
  http::Response CatalogView(store::CatalogKind kind, const std::string& name) const;
  // replays_handler.cc: bulk replay jobs.
  http::Response ListBulkReplays(const http::Request& request, const access::Scope* scope) const;
  http::Response CreateBulkReplay(const http::Request& request, const access::Scope* scope) const;
  http::Response GetBulkReplay(const std::string& id, const access::Scope* scope) const;
  http::Response CancelBulkReplay(const http::Request& request, const std::string& id,
                                  const access::Scope* scope) const;
  // audit_handler.cc
  http::Response ListAudit(const http::Request& request, const access::Scope* scope) const;
  // tokens_handler.cc: named API tokens (admin), and who the caller is (any role).
  http::Response ListTokens() const;
  http::Response CreateToken(const http::Request& request) const;
  http::Response DeleteToken(const http::Request& request, const std::string& name) const;
  http::Response WhoAmI(const http::Request& request) const;
  // keys_handler.cc
  http::Response ListKeys() const;
  http::Response AddKey(const http::Request& request) const;
  http::Response RetireKey(const http::Request& request, const std::string& id) const;
  // The token `request` authenticated with (OnHead accepted it).
  access::Principal PrincipalOf(const http::RequestHead& request) const;
  // The audit trail's actor for `request`: "token:<name>".
  std::string Actor(const http::RequestHead& request) const;
  // Appends an audit entry for a change made on behalf of `request`'s token.
  Status Audit(const http::Request& request, std::string action, std::string target, int64_t count,
               std::string detail) const;
  // stats_handler.cc
  http::Response Stats(const http::Request& request, const access::Scope* scope) const;
  // simulate_handler.cc: GET /api/v1/simulate, the herd simulation within ApiHerdLimits();
  // large ones one at a time.
  http::Response Simulate(const http::Request& request, const model::Catalog& catalog) const;

  Authorizer authorize_;
  store::Store& store_;
  model::Registry& registry_;
  DestinationStates destination_states_;
  Controls controls_;
  const Clock& clock_;

  // A large simulation is running: another large one gets 429 rather than a second worker
  // thread, so one worker stays free for the rest of the API.
  mutable std::atomic<bool> simulating_{false};

  Mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace hookrelay::api
