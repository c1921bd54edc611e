#include "cli/serve_command.h"

#include <memory>

#include "app/serve.h"
#include "cli/args.h"

namespace hookrelay::cli {

void AddServeCommand(Command app, int& exit_code) {
  auto options = std::make_shared<app::ServeOptions>();
  auto listen = std::make_shared<std::string>();
  auto data = std::make_shared<std::string>();
  auto store = std::make_shared<std::string>();
  Command cmd = app.Subcommand(
      "serve", "Receive webhooks on /in/{source}, store them durably and deliver them");
  cmd.Add("--config", options->config_path, "TOML config file (hookrelay.toml)");
  Option listen_opt = cmd.Add("--listen", *listen, "Address to listen on (default 127.0.0.1:8080)");
  auto admin_listen = std::make_shared<std::string>();
  Option admin_listen_opt =
      cmd.Add("--admin-listen", *admin_listen,
              "Serve the API, dashboard and metrics here alone; --listen then serves only /in/ and "
              "/healthz");
  Option data_opt = cmd.Add(
      "--data", *data,
      "Data directory (./hookrelay-data): the embedded store; with --store, only this node's "
      "admin token and id");
  Option store_opt =
      cmd.Add("--store", *store, "postgres://… to keep events in PostgreSQL (docs/postgres.md)");
  cmd.Flag("--allow-private-destinations", options->allow_private_destinations,
           "Allow destinations on loopback and private addresses");
  auto log_level = std::make_shared<std::string>();
  auto log_format = std::make_shared<std::string>();
  Option log_level_opt = cmd.Add("--log-level", *log_level,
                                 "trace|debug|info|warn|error (default info, or [log] level)");
  Option log_format_opt = cmd.Add(
      "--log-format", *log_format,
      "text|json: json writes one JSON object per stderr line (default text, or [log] format)");
  // Test hook, hidden from --help: makes SQLite report a full disk past N pages.
  cmd.Add("--sqlite-max-page-count", options->sqlite_max_page_count).Hidden();
  // Test hook, hidden: the first block of an address after too many wrong admin tokens.
  cmd.Add("--auth-block-ms", options->auth_block_ms).Hidden();
  cmd.Callback([options, listen, admin_listen, data, store, listen_opt, admin_listen_opt, data_opt,
                store_opt, log_level, log_format, log_level_opt, log_format_opt, &exit_code] {
    if (log_level_opt.Given()) options->log_level = *log_level;
    if (log_format_opt.Given()) options->log_format = *log_format;
    // Given, even empty (--data "$UNSET"): serve refuses an empty one, never the default.
    if (listen_opt.Given()) options->listen = *listen;
    if (admin_listen_opt.Given()) options->admin_listen = *admin_listen;
    if (data_opt.Given()) options->data_dir = *data;
    if (store_opt.Given()) options->store_url = *store;
    exit_code = app::Serve(*options);
  });
}

}  // namespace hookrelay::cli
