#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "alerts/alerts_config.h"
#include "app/allowed_hosts.h"
#include "app/logging.h"
#include "common/clock.h"
#include "common/result.h"
#include "http/server.h"
#include "model/registry.h"
#include "store/store.h"

namespace hookrelay::app {

struct ServerConfig {
  std::string listen = "127.0.0.1:8080";
  // Set: the management plane (/api/v1, /ui/, /metrics, /readyz) listens here alone, and
  // `listen` serves only /in/{source} and /healthz. Empty: `listen` serves everything.
  std::string admin_listen;
  int threads = 2;
  uint64_t max_header = 16 << 10;
  Duration header_timeout = std::chrono::seconds(10);
  Duration body_timeout = std::chrono::seconds(30);
  Duration idle_timeout = std::chrono::seconds(60);
  bool allow_private_destinations = false;
  int max_connections = 10000;
  int max_connections_per_client = 256;  // 0: no per-client cap
  uint64_t max_body_memory = 256 << 20;
  // One client address's part of max_body_memory; 0: no per-client cap. When not set: a quarter
  // of max_body_memory, but at least the default max_body (5 MiB), at most max_body_memory.
  uint64_t max_body_memory_per_client = 64 << 20;
  // Host header values requests must carry; empty: any (no check).
  AllowedHosts allowed_hosts;
  // Reverse proxies whose Forwarded / X-Forwarded-For name the client, for the per-client limits,
  // the auth throttle and the logs (http::ServerOptions::trusted_proxies). Empty: none.
  http::TrustedProxies trusted_proxies;
  // [server] tls = { cert = "…", key = "…" }: `listen` serves HTTPS with these PEM files; and
  // admin_tls the same for `admin_listen` (which it requires). A relative path is relative to
  // the config file's directory (made absolute when the file is parsed). The files are read when
  // the server starts, at each reload, and by check-config, not when the config is parsed.
  std::optional<http::TlsFiles> tls;
  std::optional<http::TlsFiles> admin_tls;
};

struct StoreConfig {
  std::string dir = "./hookrelay-data";  // SQLite (the default, embedded store)
  std::string postgres_url;              // set: use PostgreSQL instead
  // The master key's file (32 bytes in base64; docs/secrets.md). Empty: HOOKRELAY_MASTER_KEY,
  // else <dir>/master.key (made at the first start).
  std::string master_key_file;
  // PostgreSQL only: "auto" (serve migrates at start) or "manual" (serve refuses a database
  // behind this build's schema; `hookrelay migrate` applies the migrations).
  bool migrate_auto = true;
};

struct DeliveryConfig {
  Duration lease_margin = std::chrono::seconds(30);
  Duration poll_interval = std::chrono::seconds(1);
  Duration stall_threshold = std::chrono::minutes(5);
};

struct RetentionConfig {
  Duration interval = std::chrono::minutes(1);  // between purge passes
  int batch = 500;                              // events per purge transaction
};

// [transforms]: the server-wide bounds of JavaScript transforms (docs/transforms.md).
struct TransformsConfig {
  int threads = 2;                            // worker threads, each with its own engine
  std::chrono::milliseconds max_cpu{1000};    // the most a destination may ask for
  uint64_t max_memory = 64ull << 20;          // bytes of heap, likewise
  std::chrono::milliseconds default_cpu{50};  // when a transform gives no cpu
  uint64_t default_memory = 16ull << 20;      // when it gives no memory
};

struct Config {
  ServerConfig server;
  StoreConfig store;
  DeliveryConfig delivery;
  RetentionConfig retention;
  TransformsConfig transforms;
  alerts::AlertsConfig alerts;
  LogSettings log;  // [log]; --log-level and --log-format win over it
  model::Catalog catalog;
  // The same sources, destinations and routes as written in the file (their JSON), in file
  // order, with origin "config": what the catalog store is seeded with at start.
  std::vector<store::CatalogObject> catalog_objects;
  // Where each destination's fields are, for errors found after parsing (a refused address):
  // "hookrelay.toml:14: destination \"billing\": url: …". Keyed by destination name, then
  // field ("url"; "" for the destination's own table).
  std::string file_name;
  std::map<std::string, std::map<std::string, int>> destination_lines;

  // "FILE:LINE: " for a field of a destination from the file ("" when there is no file).
  std::string DestinationLocation(const std::string& name, const std::string& field) const;
};

// Loads a TOML config file:
//   [server] listen, threads, max_header, header_timeout, body_timeout, idle_timeout,
//            allow_private_destinations, max_connections, max_connections_per_client,
//            max_body_memory, max_body_memory_per_client, allowed_hosts, trusted_proxies,
//            tls, admin_tls
//   [store]  dir | postgres_url, master_key_file
//   [delivery] lease_margin, poll_interval, stall_threshold
//   [retention] interval, batch
//   [transforms] threads, max_cpu, max_memory, default_cpu, default_memory
//   [log] level (trace|debug|info|warn|error), format (text|json)
//   [alerts] smtp_url, from, to, username, password, starttls, webhook_url, window
//   [[sources]], [[destinations]], [[routes]]  — the JSON objects of the API, in TOML.
// Errors are InvalidArgument with a message "FILE:LINE: FIELD: what is wrong", e.g.
// "hookrelay.toml:14: destinations[0].policy.cap: must be greater than or equal to base (1m)".
Result<Config> LoadConfigFile(const std::string& path);
// The same from text (`name` is used in messages in place of the file name).
Result<Config> ParseConfig(std::string_view toml_text, const std::string& name);

}  // namespace hookrelay::app
