#include "app/node.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "app/fd_limit.h"
#include "app/metrics.h"
#include "common/crypto.h"
#include "delivery/ssrf.h"
#include "delivery/transformed_request.h"

namespace hookrelay::app {

namespace {

// This node's id: kept in the data directory (node-id), made at the first start.
std::string NodeIdOf(const std::string& dir) {
  const std::string path = dir + "/node-id";
  std::ifstream in(path);
  std::string id;
  if (in >> id && !id.empty()) return id;
  id = "node-" + RandomHexToken(8);
  std::ofstream(path) << id << "\n";
  return id;
}

// A transform compiles within the runner's limits: InvalidArgument naming the field otherwise. A
// runner that cannot answer now (kUnavailable) does not refuse it.
Status CheckTransform(transform::Runner& runner, const model::TransformSpec& t) {
  if (Status st = runner.CheckLimits(delivery::LimitsOf(t, runner.default_limits())); !st.ok()) {
    return Status::InvalidArgument(st.message(), "transform." + st.field());
  }
  Status st = runner.CheckSync(t.script);
  if (st.ok() || st.code() == Status::Code::kUnavailable) return Status::Ok();
  return Status::InvalidArgument(st.message(), "transform");
}

}  // namespace

Status Node::CheckConfigTransforms(const Config& config) const {
  transform::Runner* runner = transforms_.get();
  if (runner == nullptr) return Status::Ok();
  for (const auto& [name, d] : config.catalog.destinations) {
    if (!d.transform) continue;
    if (Status st = CheckTransform(*runner, *d.transform); !st.ok()) {
      return Status::InvalidArgument("destination \"" + name + "\": " + st.field() + ": " +
                                     st.message());
    }
  }
  for (const model::Route& r : config.catalog.routes) {
    if (!r.transform) continue;
    if (Status st = CheckTransform(*runner, *r.transform); !st.ok()) {
      return Status::InvalidArgument("route \"" + r.id + "\": " + st.field() + ": " + st.message());
    }
  }
  return Status::Ok();
}

Result<std::unique_ptr<Node>> Node::Create(const Config& config, NodeParts parts,
                                           const Clock& clock, Random& random) {
  std::unique_ptr<Node> n(new Node(parts.admin_token, clock));
  n->node_id_ = NodeIdOf(config.store.dir);
  n->store_ = std::move(parts.store);
  store::Store& store = *n->store_;

  delivery::SenderSettings sender_options;
  sender_options.allow_private_destinations = config.server.allow_private_destinations;
  sender_options.max_connections = SenderConnectionsWithinFdLimit(
      sender_options.max_connections, parts.server_connections, parts.fd_limit);
  // Two sending threads where there are two cores (measured in the deliver benchmark on 2 cores:
  // one thread, preempted by the writer and the sink, got about 65% of a core; docs/delivery.md).
  sender_options.threads =
      static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 2u));
  n->sender_ = std::make_unique<delivery::KindSenders>(sender_options, clock);
  n->alerts_ = std::make_unique<alerts::AlertSwitch>(config.alerts, clock);
  // SpiderMonkey on two worker threads, each call bounded (docs/transforms.md). A node that
  // cannot start it still relays; deliveries that need a transform then fail, saying why.
  transform::Runner::Options transform_options;
  transform_options.threads = static_cast<size_t>(config.transforms.threads);
  transform_options.max_limits = {config.transforms.max_cpu, config.transforms.max_memory};
  transform_options.default_limits = {config.transforms.default_cpu,
                                      config.transforms.default_memory};
  if (auto runner = transform::Runner::Start(transform_options); runner.ok()) {
    n->transforms_ = std::move(*runner);
  } else {
    spdlog::error("transforms are not available: {}", runner.status().message());
  }
  delivery::EngineOptions engine_options;
  engine_options.transforms = n->transforms_.get();
  engine_options.node_id = n->node_id_;
  engine_options.lease_margin = config.delivery.lease_margin;
  engine_options.poll_interval = config.delivery.poll_interval;
  engine_options.stall_threshold = config.delivery.stall_threshold;
  n->engine_ = std::make_unique<delivery::DeliveryEngine>(
      store, n->registry_, *n->sender_, n->alerts_.get(), clock, random, engine_options);
  delivery::DeliveryEngine& engine = *n->engine_;
  n->engine_stop_.engine = &engine;
  n->engine_stop_.grace = parts.stop_grace;

  // Deletes events past the longest replay window whose deliveries are all final, in small
  // batches so ingest keeps flowing.
  retention::RetentionOptions retention_options;
  retention_options.interval = config.retention.interval;
  retention_options.batch = config.retention.batch;
  n->retention_ =
      std::make_unique<retention::RetentionJob>(store, n->registry_, clock, retention_options);

  // The catalog lives in the store (objects created through the API survive restarts); the config
  // file's objects are merged in at every start and stay owned by the file.
  n->catalog_ = std::make_unique<catalog::CatalogService>(store, n->registry_, clock,
                                                          [&engine] { engine.Wake(); });
  // The config file's destinations were checked before anything was created (serve); the API's
  // are checked when they are defined.
  const bool allow_private = config.server.allow_private_destinations;
  n->catalog_->SetDestinationCheck([allow_private](const model::Destination& d) {
    Status st = delivery::CheckDestinationAddress(d, allow_private);
    if (st.ok()) return st;
    return Status::InvalidArgument(st.message() + std::string(delivery::kApiPrivateAddressHint),
                                   st.field());
  });
  if (transform::Runner* runner = n->transforms_.get()) {
    // A transform is compiled when it is saved: a syntax error (or no function transform) is a
    // 400 then, not a failed delivery later.
    n->catalog_->SetTransformCheck(
        [runner](const model::TransformSpec& t) { return CheckTransform(*runner, t); });
  }
  // The config file's transforms too, before anything is served: exit 2 naming the object.
  HR_RETURN_IF_ERROR(n->CheckConfigTransforms(config));
  n->has_config_file_ = parts.has_config_file;
  n->reload_stats_.last_success_unix.store(
      std::chrono::duration_cast<std::chrono::seconds>(clock.Now().time_since_epoch()).count());
  auto notes = n->catalog_->Load(parts.has_config_file ? std::make_optional(config.catalog_objects)
                                                       : std::nullopt);
  if (!notes.ok()) return Status::InvalidArgument("catalog: " + notes.status().message());
  n->catalog_notes_ = std::move(*notes);

  // Bulk replay jobs (POST /api/v1/replays): this node runs whichever job it claims first.
  replay::ReplayRunnerOptions replay_options;
  replay_options.node_id = n->node_id_;
  replay_options.paused_reason = [&engine](const std::string& name) -> std::optional<std::string> {
    std::map<std::string, delivery::DestinationState> all = engine.Destinations();
    auto it = all.find(name);
    if (it == all.end() || !it->second.paused) return std::nullopt;
    return it->second.paused_reason;
  };
  n->replays_ = std::make_unique<replay::ReplayRunner>(
      store, n->registry_, clock, random, [&engine] { engine.Wake(); }, replay_options);

  // Requests that fail verification: counted, and a bounded sample written off the request path.
  n->rejections_ = std::make_unique<ingest::RejectionRecorder>(store, clock);
  n->ingest_ = std::make_unique<ingest::IngestService>(n->registry_, store, clock);
  n->ingest_->SetOnStored([&engine] { engine.Wake(); });
  n->ingest_->SetRejections(n->rejections_.get());

  replay::ReplayRunner& replays = *n->replays_;
  ingest::RejectionRecorder& rejections = *n->rejections_;
  // The bootstrap token has a row (its last use, and whether it was revoked); the tokens are
  // read before the API answers anything.
  store::ApiToken bootstrap;
  bootstrap.name = "bootstrap";
  bootstrap.role = "admin";
  bootstrap.created_at = clock.Now();
  if (auto added = store.EnsureToken(bootstrap); !added.ok()) return added.status();
  n->token_refresher_ = std::make_unique<TokenRefresher>(store, n->tokens_);
  if (Status s = n->token_refresher_->Refresh(); !s.ok()) return s;
  access::TokenRegistry& tokens = n->tokens_;
  TokenRefresher& token_refresher = *n->token_refresher_;
  n->api_ = std::make_unique<api::ApiHandler>(
      [&tokens](std::string_view authorization) { return tokens.Authenticate(authorization); },
      store, n->registry_, [&engine] { return engine.Destinations(); },
      api::ApiHandler::Controls{
          .pause = [&engine](
                       const std::string& destination,
                       const std::string& reason) { return engine.Pause(destination, reason); },
          .resume =
              [&engine](const std::string& destination) { return engine.Resume(destination); },
          .reset_breaker =
              [&engine](const std::string& destination) {
                return engine.ResetBreaker(destination);
              },
          .wake = [&engine] { engine.Wake(); },
          .replay_job_queued = [&replays] { replays.Notify(); },
          .catalog = n->catalog_.get(),
          .rejection_counts =
              [&rejections](const std::string& source) { return rejections.Counts(source); },
          .transforms = n->transforms_.get(),
          .token_used = [&tokens, &clock](
                            const std::string& name,
                            const std::string& addr) { tokens.NoteUse(name, clock.Now(), addr); },
          .tokens_changed = [&token_refresher] { (void)token_refresher.Refresh(); },
          .keyring = parts.keyring},
      clock);

  AuthThrottleOptions throttle_options;
  if (parts.auth_block_ms > 0) {
    throttle_options.block = std::chrono::milliseconds(parts.auth_block_ms);
    throttle_options.window = throttle_options.block;
  }
  n->auth_throttle_ = std::make_unique<AuthThrottle>(clock, throttle_options);

  Node* node = n.get();
  http::ServerStats* http_stats = parts.http_stats;
  n->router_ = std::make_unique<Router>(
      *n->ingest_, store,
      [node, http_stats] {
        // The engine's view says every pause (the catalog's, the operator's, after 410 Gone).
        const std::map<std::string, delivery::DestinationState> dests =
            node->engine_->Destinations();
        const delivery::EngineStats engine_stats = node->engine_->Stats();
        auto alert_stats = node->alerts_->stats();
        // Raised counts with no channel configured too (nothing is sent then).
        alert_stats.raised = engine_stats.alerts_raised;
        return RenderMetrics(node->ingest_->stats(), node->ingest_->type_counts().Snapshot(),
                             engine_stats, dests) +
               RenderRejectionMetrics(node->rejections_->AllCounts()) +
               (http_stats ? RenderHttpMetrics(*http_stats) : std::string()) +
               RenderRetentionMetrics(node->retention_->stats()) + RenderAlertMetrics(alert_stats) +
               RenderAuthMetrics(node->auth_throttle_->stats()) +
               RenderReloadMetrics(node->reload_stats_.reloads.load(),
                                   node->reload_stats_.failures.load(),
                                   node->reload_stats_.last_success_unix.load());
      },
      n->api_.get(), n->auth_throttle_.get(), config.server.allowed_hosts);
  return n;
}

Node::~Node() {
  // What the members' order cannot say: another node's change must not reach a part being
  // destroyed. The rest stops by destruction, bottom up (see node.h).
  if (store_) store_->Unwatch();
}

void Node::Start() {
  // Several nodes on one store: another node's new work, catalog change or replay job reaches
  // this one at once (PostgreSQL's LISTEN/NOTIFY; the embedded store has no other node). The
  // polls stay as the fallback: the engine's poll_interval, the catalog's version every second.
  delivery::DeliveryEngine& engine = *engine_;
  catalog::CatalogService& catalog = *catalog_;
  replay::ReplayRunner& replays = *replays_;
  store_->Watch([&engine, &catalog, &replays](store::Store::Change change) {
    switch (change) {
      case store::Store::Change::kNewWork: engine.Wake(); break;
      case store::Store::Change::kCatalog: catalog.Notify(); break;
      case store::Store::Change::kReplayJobs: replays.Notify(); break;
    }
  });
  engine_->Start();
  catalog_->Start();
  retention_->Start();
  replays_->Start();
  rejections_->Start();
  token_refresher_->Start();
}

void Node::SetDraining() { router_->SetDraining(); }

Result<std::vector<std::string>> Node::Reload(const Config& config) {
  HR_RETURN_IF_ERROR(CheckConfigTransforms(config));
  std::vector<std::string> changes;
  if (has_config_file_) {
    auto notes = catalog_->Load(config.catalog_objects);
    if (!notes.ok()) return Status::InvalidArgument("catalog: " + notes.status().message());
    changes = std::move(*notes);
    engine_->Wake();  // a destination may have become due (resumed, a new URL)
  }
  if (alerts_->Configure(config.alerts)) {
    changes.push_back(config.alerts.enabled() ? "alerts: channels changed"
                                              : "alerts: no channel any more");
  }
  return changes;
}

}  // namespace hookrelay::app
