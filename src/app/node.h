#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "alerts/alert_switch.h"
#include "api/api_handler.h"
#include "app/admin_token.h"
#include "app/auth_throttle.h"
#include "app/config.h"
#include "app/router.h"
#include "app/token_refresher.h"
#include "catalog/catalog_service.h"
#include "common/clock.h"
#include "common/random.h"
#include "common/result.h"
#include "delivery/engine.h"
#include "delivery/kinds/registry.h"
#include "http/server.h"
#include "ingest/ingest_service.h"
#include "ingest/rejection_recorder.h"
#include "model/registry.h"
#include "replay/replay_runner.h"
#include "retention/retention_job.h"
#include "secrets/keyring.h"
#include "store/store.h"
#include "transform/runner.h"

namespace hookrelay::app {

// What a node is built from, besides its config.
struct NodeParts {
  std::unique_ptr<store::Store> store;  // open; the node owns it from here on
  // The data key the store's secrets are encrypted under (inside `store`, which encrypts them);
  // the API's keys routes wrap it by another master key. nullptr: no such routes (tests).
  const secrets::Keyring* keyring = nullptr;
  AdminToken admin_token;
  // The config file's catalog objects, merged into the stored catalog (owned by the file);
  // false: serve runs without a config file, and the stored catalog is all there is.
  bool has_config_file = false;
  http::ServerStats* http_stats = nullptr;  // the server's; outlives the node
  int server_connections = 0;               // the server's connection limit, and
  uint64_t fd_limit = 0;                    // the process's open-file limit (the sender fits in)
  int64_t auth_block_ms = 0;                // test hook (ServeOptions::auth_block_ms); 0: default
  Duration stop_grace = std::chrono::seconds(10);  // in-flight attempts get this long at Stop
};

// One running hookrelay node: every part behind the HTTP server — the store, the catalog, the
// delivery engine and its sender, alerts, retention, bulk replay, rejected requests, ingest, the
// management API and the router — built and wired in dependency order.
//
// The members are declared in that order, so destroying the node stops the parts in the reverse
// one, each after what uses it: the router and the API (finishing queued requests while the store
// is open), the rejection recorder (writing what is queued), bulk replay (a running job keeps its
// lease), the catalog's refresh, retention, the engine (attempts in flight are recorded, the rest
// keep their lease), the sender (after the engine stopped: its callbacks point into the engine),
// the alerts (flushing pending batches), and last the store (draining queued writes). Before any
// of that, other nodes' changes stop reaching the parts (Store::Unwatch).
//
// The HTTP server is not part of it: serve binds the address before the store is opened and
// stops accepting before the node is destroyed.
class Node {
 public:
  // Builds every part and loads the catalog (the config file's objects merged into the stored
  // ones). Starts no thread. kInvalidArgument when the catalog does not load (the message names
  // the object); the store is closed then.
  static Result<std::unique_ptr<Node>> Create(const Config& config, NodeParts parts,
                                              const Clock& clock, Random& random);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Watches the store for other nodes' changes and starts every background part.
  void Start();
  // /readyz answers 503 and new requests are refused while the server drains.
  void SetDraining();

  // Applies a reloaded config (SIGHUP, app/config_reload.h) while serving: its transforms are
  // compiled first, then its catalog objects replace the file's in the store (as at start: what
  // the API made stays), then the alerts' channels change. Deliveries in flight finish as they
  // began; the next ones read the new catalog. A transform that does not compile, or a catalog
  // that does not load, changes nothing (kInvalidArgument naming the object). Returns what
  // changed, one line each. REQUIRES: started; not called concurrently.
  Result<std::vector<std::string>> Reload(const Config& config);

  // When the delivery engine's scheduler last began a round (the watchdog's input).
  std::optional<std::chrono::steady_clock::time_point> EngineLastRound() const {
    return engine_->LastRound();
  }

  // Config reloads, for /metrics (app/config_reload.h counts them).
  struct ReloadStats {
    std::atomic<uint64_t> reloads{0};   // applied
    std::atomic<uint64_t> failures{0};  // refused: the old config kept
    std::atomic<int64_t> last_success_unix{0};
  };
  ReloadStats& reload_stats() { return reload_stats_; }

  http::Handler& handler() { return *router_; }
  const model::Registry& registry() const { return registry_; }
  const std::string& node_id() const { return node_id_; }
  // What loading the catalog changed ("from the config file 3 added, …"), to print at start.
  const std::vector<std::string>& catalog_notes() const { return catalog_notes_; }

 private:
  Node(const AdminToken& admin_token, const Clock& clock)
      : tokens_(admin_token.sha256_hex(), clock) {}
  // Stops the engine when destroyed: a member between the sender and what is stopped before it.
  struct EngineStop {
    EngineStop() = default;
    EngineStop(const EngineStop&) = delete;  // a copy's destructor would stop the engine
    EngineStop& operator=(const EngineStop&) = delete;
    delivery::DeliveryEngine* engine = nullptr;
    Duration grace{0};
    ~EngineStop() {
      if (engine) engine->Stop(grace);
    }
  };

  // The transforms of the config file's destinations and routes compile (InvalidArgument
  // naming the object otherwise); OK when transforms are off.
  Status CheckConfigTransforms(const Config& config) const;

  std::string node_id_;
  std::vector<std::string> catalog_notes_;
  ReloadStats reload_stats_;
  bool has_config_file_ = false;

  // In dependency order: each part uses only those above it. Destroyed from the bottom up.
  std::unique_ptr<store::Store> store_;
  // Where transforms run; before the engine and the API, which use it, so it outlives them.
  std::unique_ptr<transform::Runner> transforms_;
  model::Registry registry_;
  std::unique_ptr<delivery::DeliveryEngine> engine_;
  std::unique_ptr<alerts::AlertSwitch> alerts_;    // the channels of the current config (or none)
  std::unique_ptr<delivery::KindSenders> sender_;  // every destination kind's
  EngineStop engine_stop_;
  std::unique_ptr<retention::RetentionJob> retention_;
  std::unique_ptr<catalog::CatalogService> catalog_;
  std::unique_ptr<replay::ReplayRunner> replays_;
  std::unique_ptr<ingest::RejectionRecorder> rejections_;
  std::unique_ptr<ingest::IngestService> ingest_;
  // The tokens the API accepts: the bootstrap one and the store's, read again by the refresher.
  access::TokenRegistry tokens_;
  std::unique_ptr<TokenRefresher> token_refresher_;
  std::unique_ptr<api::ApiHandler> api_;
  std::unique_ptr<AuthThrottle> auth_throttle_;
  std::unique_ptr<Router> router_;
};

}  // namespace hookrelay::app
