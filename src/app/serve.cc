#include "app/serve.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <iterator>

#include "app/admin_token.h"
#include "app/config.h"
#include "app/config_check.h"
#include "app/config_reload.h"
#include "app/fd_limit.h"
#include "app/logging.h"
#include "app/master_key_file.h"
#include "app/node.h"
#include "app/plane_filter.h"
#include "app/serve_flags.h"
#include "app/systemd_notify.h"
#include "app/watchdog.h"
#include "catalog/catalog_plan.h"
#include "common/allocator.h"
#include "common/random.h"
#include "common/units.h"
#include "delivery/ssrf.h"
#include "model/source.h"
#include "secrets/encrypting_store.h"
#include "store/open_store.h"
#include "store/sqlite/data_dir_lock.h"
#include "store/store.h"

namespace hookrelay::app {

namespace {

constexpr Duration kShutdownGrace = std::chrono::seconds(10);

// Set once the log format is known: with json, every stderr line is a JSON record, so a fatal
// error is logged as one; otherwise it is a plain line for the person who started the server.
bool json_log = false;

int Fail(int code, const std::string& message) {
  if (json_log) {
    spdlog::error("hookrelay serve: {}", message);
  } else {
    std::cerr << "hookrelay serve: " << message << std::endl;
  }
  return code;
}

// A store that cannot be opened because of what the user gave or did (a data directory held by
// another process, a path that is not a directory, a store this build lacks, a hookrelay.db that
// is damaged, not hookrelay's or of another schema) is a usage error: exit 2, retrying will not
// help. Anything else (I/O errors, a full disk, permissions) exits 1: it may pass.
int StoreExitCode(const Status& status) {
  return status.code() == Status::Code::kFailedPrecondition ||
                 status.code() == Status::Code::kInvalidArgument
             ? 2
             : 1;
}

// The admin token from the environment: HOOKRELAY_TOKEN (the name the CLI reads too), or its
// alias HOOKRELAY_ADMIN_TOKEN. Sets `name` to the variable used.
std::string EnvToken(std::string& name) {
  const char* token = std::getenv("HOOKRELAY_TOKEN");
  const char* alias = std::getenv("HOOKRELAY_ADMIN_TOKEN");
  if (token != nullptr && *token != '\0') {
    if (alias != nullptr && *alias != '\0' && std::string_view(alias) != token) {
      spdlog::warn("HOOKRELAY_TOKEN and HOOKRELAY_ADMIN_TOKEN differ; using HOOKRELAY_TOKEN");
    }
    name = "HOOKRELAY_TOKEN";
    return token;
  }
  if (alias != nullptr && *alias != '\0') {
    name = "HOOKRELAY_ADMIN_TOKEN";
    return alias;
  }
  return {};
}

// hookrelay's own files in the data directory: every payload and the sources' and destinations'
// secrets (the database and SQLite's journal files), the token hash, the node id, the lock.
constexpr const char* kOwnFiles[] = {"hookrelay.db",       "hookrelay.db-wal", "hookrelay.db-shm",
                                     "admin-token.sha256", "node-id",          "hookrelay.lock"};

// Before the store is opened: hookrelay's own files that others than the owner may access are
// made owner-only (0600), with a warning naming each one changed, so that SQLite's -wal and -shm
// (which copy the database's mode) are owner-only too. The directory and any other file in it
// are the user's: those get a warning that says how to fix them.
void TightenPermissions(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  auto mode_text = [](mode_t m) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(m & 07777));
    return std::string(mode);
  };
  auto warn = [&](const fs::path& p, bool is_dir) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || (st.st_mode & 077) == 0) return;
    spdlog::warn("{} is accessible to other users (mode {}); it holds secrets: chmod {} {}",
                 p.string(), mode_text(st.st_mode), is_dir ? "700" : "600", p.string());
  };
  warn(dir, true);
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    const std::string name = entry.path().filename().string();
    const bool own =
        std::find(std::begin(kOwnFiles), std::end(kOwnFiles), name) != std::end(kOwnFiles);
    struct stat st;
    if (!own || ::lstat(entry.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        (st.st_mode & 077) == 0) {
      if (!own) warn(entry.path(), false);
      continue;
    }
    if (::chmod(entry.path().c_str(), 0600) == 0) {
      spdlog::warn(
          "{} was accessible to other users (mode {}); changed it to 0600 (it holds "
          "secrets)",
          entry.path().string(), mode_text(st.st_mode));
    } else {
      spdlog::warn(
          "{} is accessible to other users (mode {}) and could not be changed ({}); it "
          "holds secrets: chmod 600 {}",
          entry.path().string(), mode_text(st.st_mode), std::strerror(errno),
          entry.path().string());
    }
  }
}

// Warns when server.max_body_memory is below a body limit: such bodies can never be held in
// memory and are refused with 413. Not an error, as a source's max_body may be lowered through
// the API later; but a budget below the default max_body (what sources created through the API
// get) is odd.
// Waits for a signal of `signals` (blocked by the caller) that stops the server and returns its
// name. SIGHUP reloads the config (`reload`) and is waited past, as SIGUSR1 and SIGUSR2 are
// (logged and ignored).
const char* WaitForStopSignal(const sigset_t& signals, const std::function<void()>& reload) {
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    switch (sig) {
      case SIGINT: return "SIGINT";
      case SIGTERM: return "SIGTERM";
      case SIGQUIT: return "SIGQUIT";
      case SIGHUP: reload(); break;
      default:
        spdlog::warn("{} received: ignored (SIGHUP reloads the config)",
                     sig == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
    }
  }
}

void WarnAboutBodyMemory(const Config& config) {
  const uint64_t memory = config.server.max_body_memory;
  if (memory < model::kDefaultMaxBody) {
    spdlog::warn(
        "server.max_body_memory ({}) is smaller than the default source max_body ({}): bodies "
        "larger than max_body_memory are refused with 413; set max_body_memory higher, or a "
        "smaller max_body on each source (sources created through the API get the default)",
        FormatByteSize(memory), FormatByteSize(model::kDefaultMaxBody));
  }
  for (const auto& [name, source] : config.catalog.sources) {
    if (source.max_body <= memory) continue;
    spdlog::warn(
        "server.max_body_memory ({}) is smaller than source \"{}\" max_body ({}): its bodies "
        "larger than max_body_memory are refused with 413",
        FormatByteSize(memory), name, FormatByteSize(source.max_body));
  }
  // The same for one client's share, where it is the smaller limit.
  const uint64_t share = config.server.max_body_memory_per_client;
  if (share == 0 || share >= memory) return;
  for (const auto& [name, source] : config.catalog.sources) {
    if (source.max_body <= share || source.max_body > memory) continue;
    spdlog::warn(
        "server.max_body_memory_per_client ({}) is smaller than source \"{}\" max_body ({}): "
        "its bodies larger than max_body_memory_per_client are refused with 413",
        FormatByteSize(share), name, FormatByteSize(source.max_body));
  }
}

// Answers 503 "starting" until Set() gives it the real handler, so the address can be bound
// before the parts behind it exist. Set(nullptr) goes back to 503 (a start-up that fails late).
class StartingHandler final : public http::Handler {
 public:
  void Set(http::Handler* h) { target_.store(h, std::memory_order_release); }

  HeadDecision OnHead(const http::RequestHead& head) override {
    if (http::Handler* h = target_.load(std::memory_order_acquire)) return h->OnHead(head);
    HeadDecision d;
    d.reject = http::JsonError(503, "unavailable", "starting");
    return d;
  }
  void OnRequest(http::Request request, http::Responder respond) override {
    if (http::Handler* h = target_.load(std::memory_order_acquire)) {
      h->OnRequest(std::move(request), std::move(respond));
      return;
    }
    respond(http::JsonError(503, "unavailable", "starting"));
  }

 private:
  std::atomic<http::Handler*> target_{nullptr};
};

}  // namespace

int Serve(const ServeOptions& options) {
  TuneAllocator();
  // The log goes to stderr (app/logging.h); defaults until the config file and flags are read.
  json_log = false;
  ConfigureLogging(LogSettings{});
  // Every file this process creates holds secrets or payloads: owner only, whatever the
  // caller's umask (SQLite's -wal and -shm files, node-id, the token hash).
  ::umask(077);
  Config config;
  if (!options.config_path.empty()) {
    auto loaded = LoadConfigFile(options.config_path);
    if (!loaded.ok()) return Fail(2, loaded.status().message());
    config = std::move(*loaded);
  }
  if (Status st = ApplyServeFlags(options, config); !st.ok()) return Fail(2, st.message());
  ConfigureLogging(config.log);
  json_log = config.log.format == LogFormat::kJson;
  // The whole config is checked before anything is created (no data directory, no database, no
  // address bound): a mistake in it leaves nothing behind.
  if (std::string error = CheckConfigCatalog(config); !error.empty()) return Fail(2, error);
  // Where the store is: a data directory (the embedded store) or a postgres:// URL, never the one
  // replaced by the other. With PostgreSQL the data directory still holds this node's admin token
  // and node id (docs/postgres.md).
  const bool postgres = !config.store.postgres_url.empty();
  const std::string address_origin = options.store_url ? "--store: " : "[store] url: ";
  auto address = store::ParseStoreAddress(postgres ? config.store.postgres_url : config.store.dir);
  if (postgres && (!address.ok() || address->kind != store::StoreAddress::Kind::kPostgres)) {
    return Fail(2, address_origin +
                       "must be a postgres:// or postgresql:// URL (the embedded store takes "
                       "--data DIR)");
  }
  if (!address.ok()) return Fail(2, address.status().message());
  if (Status st = store::CheckStoreAvailable(*address); !st.ok()) return Fail(2, st.message());
  // The data directory belongs to one process. When it exists, its lock is taken now, before the
  // address is bound and before anything in it is read or changed, so a second server (even one
  // on the same address) is told which process holds it. A new directory is created and locked
  // by the store when it opens, after the address is bound. Held until the process ends.
  std::shared_ptr<store::DataDirLock> dir_lock;
  if (std::error_code ec; std::filesystem::is_directory(config.store.dir, ec)) {
    auto lock = store::DataDirLock::Acquire(config.store.dir);
    if (!lock.ok()) return Fail(StoreExitCode(lock.status()), lock.status().message());
    dir_lock = std::move(*lock);
  }
  std::string env_name;
  const std::string env_token = EnvToken(env_name);
  auto token_plan = PlanAdminToken(config.store.dir, env_token, env_name);
  if (!token_plan.ok()) return Fail(2, token_plan.status().message());
  for (const std::string& w : token_plan->warnings) spdlog::warn("{}", w);
  TightenPermissions(config.store.dir);
  WarnAboutBodyMemory(config);

  // Signals are handled by sigwait below; block them before any thread starts so every thread
  // inherits the mask and none is interrupted.
  sigset_t signals;
  sigemptyset(&signals);
  // Every signal a terminal or a service manager sends is taken here, so none ends the process
  // silently: SIGINT, SIGTERM and SIGQUIT drain and stop; SIGHUP reloads the config
  // (app/config_reload.h); SIGUSR1 and SIGUSR2 are logged and ignored.
  for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const Clock& clock = SystemClock::Instance();
  Random& random = SystemRandom::Instance();

  // The address is bound before the store is opened or anything is written: an address in use
  // or an invalid one fails here, with nothing created. Requests answer 503 until the router is
  // ready.
  StartingHandler handler;
  http::ServerStats http_stats;  // outlives the server
  http::ServerOptions http;
  http.listen = config.server.listen;
  http.threads = config.server.threads;
  http.header_limit = config.server.max_header;
  http.header_timeout = config.server.header_timeout;
  http.body_timeout = config.server.body_timeout;
  http.idle_timeout = config.server.idle_timeout;
  const ConnectionLimit connection_limit = FitConnectionsToFdLimit(config.server.max_connections);
  if (!connection_limit.note.empty()) {
    std::cout << "hookrelay: " << connection_limit.note << std::endl;
  }
  http.max_connections = connection_limit.max_connections;
  http.max_connections_per_client = config.server.max_connections_per_client;
  http.max_body_memory = config.server.max_body_memory;
  http.max_body_memory_per_client = config.server.max_body_memory_per_client;
  http.stats = &http_stats;
  http.tls = config.server.tls;
  http.trusted_proxies = config.server.trusted_proxies;
  // The planes' filters outlive both servers (declared first, so destroyed last).
  std::optional<PlaneFilter> ingest_plane;
  std::optional<PlaneFilter> admin_plane;
  auto server = http::Server::Start(http, handler);
  if (!server.ok()) {
    // A TLS file that cannot be served names its setting: "server.tls.cert /path: …".
    const bool tls_file = !server.status().field().empty();
    return Fail(server.status().code() == Status::Code::kInvalidArgument ? 2 : 1,
                (tls_file ? "server." : "") + server.status().message());
  }
  // The management plane on a listener of its own ([server] admin_listen): same limits.
  StartingHandler admin_handler;
  Result<std::unique_ptr<http::Server>> admin_server = std::unique_ptr<http::Server>();
  if (!config.server.admin_listen.empty()) {
    http::ServerOptions admin = http;
    admin.listen = config.server.admin_listen;
    admin.tls = config.server.admin_tls;
    admin_server = http::Server::Start(admin, admin_handler);
    if (!admin_server.ok()) {
      (*server)->Shutdown(std::chrono::seconds(0));
      const bool tls_file = !admin_server.status().field().empty();
      return Fail(
          admin_server.status().code() == Status::Code::kInvalidArgument ? 2 : 1,
          (tls_file ? "server.admin_" : "admin_listen: ") + admin_server.status().message());
    }
  }

  store::OpenStoreOptions store_options;
  store_options.dir_lock = dir_lock;
  store_options.sqlite_max_page_count = options.sqlite_max_page_count;
  store_options.migrate_postgres = config.store.migrate_auto;
  auto opened = store::OpenStore(*address, clock, store_options);
  if (!opened.ok()) {
    // PostgreSQL unreachable or refusing at start is a setup error (exit 2), as a bad data
    // directory is: the message names the server without the URL's user or password.
    return Fail(postgres ? 2 : StoreExitCode(opened.status()),
                "cannot open the store in " + address->display + ": " + opened.status().message());
  }
  std::unique_ptr<store::Store> store = std::move(*opened);
  if (postgres) {
    // The embedded store makes its directory when it opens; with PostgreSQL it holds only this
    // node's admin token and id, and is made here, owner-only like the embedded store's.
    std::error_code ec;
    if (std::filesystem::create_directories(config.store.dir, ec)) {
      ::chmod(config.store.dir.c_str(), 0700);
    } else if (ec) {
      return Fail(2, "cannot create the data directory " + config.store.dir + ": " + ec.message());
    }
  }

  // The catalog's secrets are encrypted at rest under the store's data key, which the master
  // key opens (docs/secrets.md). A wrong key stops here: nothing is decrypted wrongly.
  const char* env_master_key = std::getenv(kMasterKeyEnv);
  auto master = LoadMasterKey(env_master_key != nullptr, env_master_key ? env_master_key : "",
                              config.store.master_key_file, config.store.dir);
  if (!master.ok()) return Fail(2, master.status().message());
  if (!master->warning.empty()) spdlog::warn("{}", master->warning);
  auto keyring = secrets::Keyring::Unlock(*store, master->key, clock);
  if (!keyring.ok()) {
    std::string message = keyring.status().message();
    if (!master->generated) message += "; this node's key is from " + master->from;
    if (master->generated) {
      // Made just now for a store that already has its key: it can never be the right one.
      std::error_code ec;
      std::filesystem::remove(master->from, ec);
      message += " (no key was given, and the one made in " + master->from +
                 " is new: give the store's own)";
    }
    return Fail(keyring.status().code() == Status::Code::kFailedPrecondition ? 2 : 1, message);
  }
  const std::string master_key_id = keyring->master_key_id();
  auto encrypting =
      std::make_unique<secrets::EncryptingStore>(std::move(store), std::move(*keyring));
  Result<int> encrypted = encrypting->EncryptExisting();
  if (!encrypted.ok() && encrypted.status().code() == Status::Code::kUnavailable) {
    encrypted = encrypting->EncryptExisting();  // another node changed the catalog meanwhile
  }
  if (!encrypted.ok()) {
    return Fail(1, "cannot encrypt the stored secrets: " + encrypted.status().message());
  }
  if (*encrypted > 0) {
    spdlog::info("encrypted the {} catalog objects stored in plain text (secrets at rest)",
                 *encrypted);
  }
  if (master->generated) {
    std::cout << "hookrelay: made a master key in " << master->from
              << " (the stored secrets are encrypted with it).\n"
                 "  A copy of the data directory now holds the secrets and their key together:\n"
                 "  keep the key elsewhere and point HOOKRELAY_MASTER_KEY or [store] "
                 "master_key_file at it (docs/secrets.md)."
              << std::endl;
  }
  spdlog::info("secrets at rest: master key {} from {}", master_key_id, master->from);
  const secrets::Keyring* keyring_in_use = &encrypting->keyring();
  store = std::move(encrypting);

  // Every part behind the server, in dependency order (app/node.h).
  NodeParts parts{.store = std::move(store),
                  .keyring = keyring_in_use,
                  .admin_token = token_plan->token(),
                  .has_config_file = !options.config_path.empty(),
                  .http_stats = &http_stats,
                  .server_connections = http.max_connections,
                  .fd_limit = connection_limit.fd_limit,
                  .auth_block_ms = options.auth_block_ms,
                  .stop_grace = kShutdownGrace};
  auto created = Node::Create(config, std::move(parts), clock, random);
  if (!created.ok()) return Fail(2, created.status().message());
  std::unique_ptr<Node> node = std::move(*created);
  for (const std::string& note : node->catalog_notes()) {
    std::cout << "hookrelay: " << note << std::endl;
  }
  const model::Registry& registry = node->registry();

  if (*admin_server) {
    ingest_plane.emplace(node->handler(), Plane::kIngest);
    admin_plane.emplace(node->handler(), Plane::kManagement);
    handler.Set(&*ingest_plane);
    admin_handler.Set(&*admin_plane);
  } else {
    handler.Set(&node->handler());
  }
  // Where the API, the dashboard and metrics are.
  const std::string admin_url = *admin_server ? (*admin_server)->url() : (*server)->url();
  // Only now that everything is set up and the address bound: a start-up that failed showed no
  // token and stored none.
  NextStepsContext next_steps;
  next_steps.url = admin_url;
  for (bool verified : {false, true}) {  // a source that checks no signature takes a plain curl
    for (const auto& [name, source] : registry.Get()->sources) {
      if (source.verify.has_value() == verified) next_steps.sources.push_back(name);
    }
  }
  if (!next_steps.sources.empty()) {
    const model::Source* first = registry.Get()->FindSource(next_steps.sources.front());
    if (first != nullptr) next_steps.first_verify = first->verify;
  }
  next_steps.destinations = registry.Get()->destinations.size();
  if (Status st = CommitAdminToken(config.store.dir, *token_plan, std::cout, next_steps);
      !st.ok()) {
    handler.Set(nullptr);
    admin_handler.Set(nullptr);
    (*server)->Shutdown(std::chrono::seconds(0));
    if (*admin_server) (*admin_server)->Shutdown(std::chrono::seconds(0));
    return Fail(1, st.message());
  }
  node->Start();

  // Which store, said plainly: with PostgreSQL the data directory holds only the node's token.
  const std::string where = postgres
                                ? "store: " + address->display + ", node data: " + config.store.dir
                                : "data: " + config.store.dir;
  std::cout << "hookrelay " << HOOKRELAY_VERSION << " listening on " << (*server)->url() << " ("
            << where << "; " << registry.Get()->sources.size()
            << (registry.Get()->sources.size() == 1 ? " source, " : " sources, ")
            << registry.Get()->destinations.size()
            << (registry.Get()->destinations.size() == 1 ? " destination)" : " destinations)")
            << std::endl;
  if (*admin_server) {
    std::cout << "Management (API, dashboard, metrics) on " << admin_url << "; " << (*server)->url()
              << " serves only /in/ and /healthz" << std::endl;
  }
  std::cout << "Dashboard: " << admin_url << "/ui/ (sign in with the admin token)" << std::endl;
  spdlog::info("hookrelay {} started on {} ({}, node {})", HOOKRELAY_VERSION, (*server)->url(),
               where, node->node_id());

  // Under systemd (Type=notify): ready now that the store is open and the listeners bound, and
  // the watchdog fed while the delivery engine's loop runs (app/watchdog.h).
  const SystemdNotifier notifier;
  notifier.Ready("serving on " + (*server)->url());
  std::optional<WatchdogFeeder> watchdog;
  if (std::optional<Duration> timeout = notifier.watchdog_timeout()) {
    if (config.delivery.poll_interval >= *timeout / 2) {
      spdlog::warn(
          "delivery.poll_interval ({} ms) is not under half the service manager's watchdog "
          "timeout ({} ms): an idle engine may look stalled; raise WatchdogSec",
          config.delivery.poll_interval.count(), timeout->count());
    }
    watchdog.emplace(
        *timeout, [&node] { return node->EngineLastRound(); },
        [&notifier] { notifier.FeedWatchdog(); });
    spdlog::info("feeding the service manager's watchdog (timeout {} ms) while the engine runs",
                 timeout->count());
  }
  std::vector<http::Server*> listeners{server->get()};
  if (*admin_server) listeners.push_back(admin_server->get());
  ConfigReloader reloader(options, config, *node, listeners, notifier, clock);

  const char* stop_signal = WaitForStopSignal(signals, [&reloader] { (void)reloader.Reload(); });
  notifier.Stopping();
  watchdog.reset();
  std::cout << "hookrelay: " << stop_signal << " received; finishing in-flight requests"
            << std::endl;
  spdlog::info("{} received: shutting down", stop_signal);
  node->SetDraining();
  (*server)->Shutdown(kShutdownGrace);
  if (*admin_server) (*admin_server)->Shutdown(kShutdownGrace);
  server->reset();
  admin_server->reset();
  handler.Set(nullptr);
  admin_handler.Set(nullptr);
  node.reset();  // stops every part, in the order app/node.h gives
  std::cout << "hookrelay: stopped" << std::endl;
  spdlog::info("stopped");
  return 0;
}

}  // namespace hookrelay::app
