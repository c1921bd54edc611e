#include "app/serve.h"

#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "alerts/alert_dispatcher.h"
#include "api/api_handler.h"
#include "app/admin_token.h"
#include "app/config.h"
#include "app/metrics.h"
#include "app/router.h"
#include "catalog/catalog_service.h"
#include "common/allocator.h"
#include "common/crypto.h"
#include "common/random.h"
#include "delivery/engine.h"
#include "delivery/sender.h"
#include "ingest/ingest_service.h"
#include "replay/replay_runner.h"
#include "retention/retention_job.h"
#include "store/store.h"

namespace hookrelay::app {

namespace {

constexpr Duration kShutdownGrace = std::chrono::seconds(10);

int Fail(int code, const std::string& message) {
  std::cerr << "hookrelay serve: " << message << std::endl;
  return code;
}

// The lease owner name of this data directory, stable across restarts.
std::string NodeId(const std::string& dir) {
  const std::string path = dir + "/node-id";
  std::ifstream in(path);
  std::string id;
  if (in >> id && !id.empty()) return id;
  id = "node-" + RandomHexToken(8);
  std::ofstream(path) << id << "\n";
  return id;
}

}  // namespace

int Serve(const ServeOptions& options) {
  TuneAllocator();
  Config config;
  if (!options.config_path.empty()) {
    auto loaded = LoadConfigFile(options.config_path);
    if (!loaded.ok()) return Fail(2, loaded.status().message());
    config = std::move(*loaded);
  }
  if (options.listen) config.server.listen = *options.listen;
  if (options.data_dir) config.store.dir = *options.data_dir;
  if (options.store_url) config.store.postgres_url = *options.store_url;
  if (options.allow_private_destinations) config.server.allow_private_destinations = true;
  if (!config.store.postgres_url.empty()) {
    return Fail(2, "the PostgreSQL store is not available yet; use the embedded store (--data)");
  }

  // Signals are handled by sigwait below; block them before any thread starts so every thread
  // inherits the mask and none is interrupted.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const Clock& clock = SystemClock::Instance();
  Random& random = SystemRandom::Instance();

  store::SqliteOptions sqlite;
  sqlite.dir = config.store.dir;
  sqlite.max_page_count = options.sqlite_max_page_count;
  auto opened = store::OpenSqliteStore(sqlite, clock);
  if (!opened.ok()) {
    return Fail(1,
                "cannot open the store in " + config.store.dir + ": " + opened.status().message());
  }
  std::unique_ptr<store::Store> store = std::move(*opened);

  const char* env_token = std::getenv("HOOKRELAY_ADMIN_TOKEN");
  auto token = SetUpAdminToken(config.store.dir, env_token ? env_token : "", std::cout);
  if (!token.ok()) return Fail(2, token.status().message());

  model::Registry registry;

  delivery::Sender::Options sender_options;
  sender_options.allow_private_destinations = config.server.allow_private_destinations;
  auto sender = std::make_unique<delivery::Sender>(sender_options, clock);
  std::unique_ptr<alerts::AlertDispatcher> alert_dispatcher;
  if (config.alerts.enabled()) {
    alert_dispatcher = std::make_unique<alerts::AlertDispatcher>(config.alerts, clock);
  }
  delivery::EngineOptions engine_options;
  engine_options.node_id = NodeId(config.store.dir);
  engine_options.lease_margin = config.delivery.lease_margin;
  engine_options.poll_interval = config.delivery.poll_interval;
  engine_options.stall_threshold = config.delivery.stall_threshold;
  delivery::DeliveryEngine engine(*store, registry, *sender, alert_dispatcher.get(), clock, random,
                                  engine_options);
  // The catalog lives in the store (objects created through the API survive restarts); the config
  // file's objects are merged in at every start and stay owned by the file.
  catalog::CatalogService catalog(*store, registry, clock, [&engine] { engine.Wake(); });
  // A destination the sender would refuse for its literal address is refused when it is
  // defined, in the config file or through the API.
  const bool allow_private = config.server.allow_private_destinations;
  for (const auto& [name, d] : config.catalog.destinations) {
    if (Status st = delivery::CheckDestinationAddress(d, allow_private); !st.ok()) {
      return Fail(2, "config: destination \"" + name + "\": " + st.field() + ": " + st.message());
    }
  }
  catalog.SetDestinationCheck([allow_private](const model::Destination& d) {
    return delivery::CheckDestinationAddress(d, allow_private);
  });
  {
    auto notes = catalog.Load(
        options.config_path.empty() ? std::nullopt : std::make_optional(config.catalog_objects));
    if (!notes.ok()) return Fail(2, "catalog: " + notes.status().message());
    for (const std::string& note : *notes) std::cout << "hookrelay: " << note << std::endl;
  }
  // Deletes events past the longest replay window whose deliveries are all final, in small
  // batches so ingest keeps flowing.
  retention::RetentionOptions retention_options;
  retention_options.interval = config.retention.interval;
  retention_options.batch = config.retention.batch;
  retention::RetentionJob retention(*store, registry, clock, retention_options);

  // Bulk replay jobs (POST /api/v1/replays): this node runs whichever job it claims first.
  replay::ReplayRunnerOptions replay_options;
  replay_options.node_id = engine_options.node_id;
  replay::ReplayRunner replays(
      *store, registry, clock, random, [&engine] { engine.Wake(); }, replay_options);

  ingest::IngestService ingest(registry, *store, clock, random);
  ingest.SetOnStored([&engine] { engine.Wake(); });
  const AdminToken& admin_token = *token;
  auto api = std::make_unique<api::ApiHandler>(
      [&admin_token](std::string_view authorization) {
        return admin_token.CheckAuthorizationHeader(authorization);
      },
      *store, registry, [&engine] { return engine.Destinations(); },
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
          .catalog = &catalog},
      clock);
  Router router(
      ingest, *store,
      [&ingest, &engine, &retention, &alert_dispatcher] {
        return RenderMetrics(ingest.stats(), engine.Stats(), engine.Destinations()) +
               RenderRetentionMetrics(retention.stats()) +
               RenderAlertMetrics(alert_dispatcher ? alert_dispatcher->stats()
                                                   : alerts::AlertDispatcher::Stats{});
      },
      api.get());

  http::ServerOptions http;
  http.listen = config.server.listen;
  http.threads = config.server.threads;
  http.header_limit = config.server.max_header;
  http.header_timeout = config.server.header_timeout;
  http.body_timeout = config.server.body_timeout;
  http.idle_timeout = config.server.idle_timeout;
  auto server = http::Server::Start(http, router);
  if (!server.ok()) return Fail(1, server.status().message());
  engine.Start();
  retention.Start();
  replays.Start();

  std::cout << "hookrelay " << HOOKRELAY_VERSION << " listening on " << (*server)->url()
            << " (data: " << config.store.dir << "; " << registry.Get()->sources.size()
            << " sources, " << registry.Get()->destinations.size() << " destinations)" << std::endl;

  int sig = 0;
  sigwait(&signals, &sig);
  std::cout << "hookrelay: " << (sig == SIGTERM ? "SIGTERM" : "SIGINT")
            << " received; finishing in-flight requests" << std::endl;
  router.SetDraining();
  (*server)->Shutdown(kShutdownGrace);
  server->reset();
  api.reset();     // finishes queued API requests while the store is still open
  replays.Stop();  // a running job keeps its lease; it resumes when the lease expires
  retention.Stop();
  engine.Stop(kShutdownGrace);  // attempts in flight are recorded; the rest keep their lease
  sender.reset();               // before the engine goes: its callbacks point into the engine
  alert_dispatcher.reset();     // flushes pending alert batches
  store.reset();                // drains queued writes before closing
  std::cout << "hookrelay: stopped" << std::endl;
  return 0;
}

}  // namespace hookrelay::app
