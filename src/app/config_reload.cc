#include "app/config_reload.h"

#include <spdlog/spdlog.h>

#include <functional>
#include <utility>

#include "app/config_check.h"
#include "app/logging.h"
#include "app/serve_flags.h"

namespace hookrelay::app {

namespace {

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

std::string Describe(const LogSettings& log) {
  return std::string("level ") + std::string(LogLevelName(log.level)) + ", format " +
         (log.format == LogFormat::kJson ? "json" : "text");
}

bool SameTls(const std::optional<http::TlsFiles>& a, const std::optional<http::TlsFiles>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->cert_file == b->cert_file && a->key_file == b->key_file);
}

}  // namespace

std::vector<std::string> RestartOnlyChanges(const Config& running, const Config& next) {
  const ServerConfig& a = running.server;
  const ServerConfig& b = next.server;
  const std::pair<const char*, bool> fields[] = {
      {"server.listen", a.listen != b.listen},
      {"server.admin_listen", a.admin_listen != b.admin_listen},
      {"server.threads", a.threads != b.threads},
      {"server.max_header", a.max_header != b.max_header},
      {"server.header_timeout", a.header_timeout != b.header_timeout},
      {"server.body_timeout", a.body_timeout != b.body_timeout},
      {"server.idle_timeout", a.idle_timeout != b.idle_timeout},
      {"server.allow_private_destinations",
       a.allow_private_destinations != b.allow_private_destinations},
      {"server.max_connections", a.max_connections != b.max_connections},
      {"server.max_connections_per_client",
       a.max_connections_per_client != b.max_connections_per_client},
      {"server.max_body_memory", a.max_body_memory != b.max_body_memory},
      {"server.max_body_memory_per_client",
       a.max_body_memory_per_client != b.max_body_memory_per_client},
      {"server.allowed_hosts", !(a.allowed_hosts == b.allowed_hosts)},
      {"server.trusted_proxies", !(a.trusted_proxies == b.trusted_proxies)},
      {"server.tls", !SameTls(a.tls, b.tls)},
      {"server.admin_tls", !SameTls(a.admin_tls, b.admin_tls)},
      {"store.dir", running.store.dir != next.store.dir},
      {"store.url", running.store.postgres_url != next.store.postgres_url},
      {"store.master_key_file", running.store.master_key_file != next.store.master_key_file},
      {"store.migrate", running.store.migrate_auto != next.store.migrate_auto},
      {"delivery.lease_margin", running.delivery.lease_margin != next.delivery.lease_margin},
      {"delivery.poll_interval", running.delivery.poll_interval != next.delivery.poll_interval},
      {"delivery.stall_threshold",
       running.delivery.stall_threshold != next.delivery.stall_threshold},
      {"retention.interval", running.retention.interval != next.retention.interval},
      {"retention.batch", running.retention.batch != next.retention.batch},
      {"transforms.threads", running.transforms.threads != next.transforms.threads},
      {"transforms.max_cpu", running.transforms.max_cpu != next.transforms.max_cpu},
      {"transforms.max_memory", running.transforms.max_memory != next.transforms.max_memory},
      {"transforms.default_cpu", running.transforms.default_cpu != next.transforms.default_cpu},
      {"transforms.default_memory",
       running.transforms.default_memory != next.transforms.default_memory},
  };
  std::vector<std::string> changed;
  for (const auto& [name, differs] : fields) {
    if (differs) changed.emplace_back(name);
  }
  return changed;
}

ConfigReloader::ConfigReloader(const ServeOptions& options, Config running, Node& node,
                               std::vector<http::Server*> listeners,
                               const SystemdNotifier& notifier, const Clock& clock)
    : options_(options),
      running_(std::move(running)),
      node_(node),
      listeners_(std::move(listeners)),
      notifier_(notifier),
      clock_(clock) {}

Status ConfigReloader::Reload() {
  notifier_.Reloading();
  spdlog::info("SIGHUP received: reloading the config from {}",
               options_.config_path.empty() ? "(no file)" : options_.config_path);
  Result<std::vector<std::string>> applied = Apply();
  Node::ReloadStats& stats = node_.reload_stats();
  if (!applied.ok()) {
    stats.failures.fetch_add(1);
    spdlog::error("config reload refused, nothing changed (the config in use is kept): {}",
                  applied.status().message());
    notifier_.Ready("serving; the last config reload was refused: " + applied.status().message());
    return applied.status();
  }
  stats.reloads.fetch_add(1);
  stats.last_success_unix.store(
      std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch()).count());
  spdlog::info("config reloaded from {}: {}", options_.config_path,
               applied->empty() ? "nothing changed" : Join(*applied, "; "));
  ConfigureLogging(running_.log);  // the reloaded one (Apply took it), after the line above
  notifier_.Ready("serving");
  return Status::Ok();
}

Result<std::vector<std::string>> ConfigReloader::Apply() {
  if (options_.config_path.empty()) {
    return Status::FailedPrecondition(
        "serve was started without --config: there is no config file to read again");
  }
  // Everything is read and checked before anything changes.
  auto loaded = LoadConfigFile(options_.config_path);
  if (!loaded.ok()) return loaded.status();
  Config next = std::move(*loaded);
  HR_RETURN_IF_ERROR(ApplyServeFlags(options_, next));
  if (std::string error = CheckConfigCatalog(next); !error.empty()) {
    return Status::InvalidArgument(error);
  }
  // The TLS files the listeners run with, read again (a renewed certificate under the same
  // names); files named differently apply at the next restart.
  if (std::string error = CheckListenerTls(running_.server); !error.empty()) {
    return Status::InvalidArgument(error);
  }
  const std::vector<std::string> restart_only = RestartOnlyChanges(running_, next);

  // Then applied: the catalog and alerts (refused as a whole if a transform does not compile or
  // the store does not take the catalog), then what cannot fail.
  auto changes = node_.Reload(next);
  if (!changes.ok()) return changes.status();
  if (!(next.log == running_.log)) {
    // Set by Reload once it has logged the outcome under the old settings.
    changes->push_back("log: " + Describe(next.log) + " (was " + Describe(running_.log) + ")");
  }
  for (http::Server* listener : listeners_) {
    Status st = listener->ReloadTls();
    if (st.code() == Status::Code::kFailedPrecondition) continue;  // plain HTTP
    if (!st.ok()) {
      // Checked just above: only a file changed in between gets here. The old one keeps serving.
      spdlog::error("config reload: {}: TLS files not reloaded, the current ones kept: {}",
                    listener->url(), st.message());
      continue;
    }
    changes->push_back("TLS certificate and key of " + listener->url() + " read again");
  }
  for (const std::string& name : restart_only) {
    spdlog::warn("config reload: {} changed; it takes effect at the next restart", name);
  }
  // What runs now: the reloaded parts of `next`, the rest as started.
  running_.catalog = next.catalog;
  running_.catalog_objects = next.catalog_objects;
  running_.alerts = next.alerts;
  running_.log = next.log;
  return changes;
}

}  // namespace hookrelay::app
