#include "cli/serve_command.h"

#include <CLI/CLI.hpp>
#include <memory>

#include "app/serve.h"

namespace hookrelay::cli {

void AddServeCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<app::ServeOptions>();
  auto listen = std::make_shared<std::string>();
  auto data = std::make_shared<std::string>();
  auto store = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "Receive webhooks on /in/{source}, store them durably and deliver them");
  cmd->add_option("--config", options->config_path, "TOML config file (hookrelay.toml)");
  auto* listen_opt =
      cmd->add_option("--listen", *listen, "Address to listen on (default 127.0.0.1:8080)");
  auto* data_opt = cmd->add_option(
      "--data", *data,
      "Data directory (./hookrelay-data): the embedded store; with --store, only this node's "
      "admin token and id");
  auto* store_opt = cmd->add_option("--store", *store,
                                    "postgres://… to keep events in PostgreSQL (docs/postgres.md)");
  cmd->add_flag("--allow-private-destinations", options->allow_private_destinations,
                "Allow destinations on loopback and private addresses");
  auto log_level = std::make_shared<std::string>();
  auto log_format = std::make_shared<std::string>();
  auto* log_level_opt = cmd->add_option(
      "--log-level", *log_level, "trace|debug|info|warn|error (default info, or [log] level)");
  auto* log_format_opt = cmd->add_option(
      "--log-format", *log_format,
      "text|json: json writes one JSON object per stderr line (default text, or [log] format)");
  // Test hook, hidden from --help: makes SQLite report a full disk past N pages.
  cmd->add_option("--sqlite-max-page-count", options->sqlite_max_page_count)->group("");
  // Test hook, hidden: the first block of an address after too many wrong admin tokens.
  cmd->add_option("--auth-block-ms", options->auth_block_ms)->group("");
  cmd->callback([options, listen, data, store, listen_opt, data_opt, store_opt, log_level,
                 log_format, log_level_opt, log_format_opt, &exit_code] {
    if (log_level_opt->count() > 0) options->log_level = *log_level;
    if (log_format_opt->count() > 0) options->log_format = *log_format;
    // Given, even empty (--data "$UNSET"): serve refuses an empty one, never the default.
    if (listen_opt->count() > 0) options->listen = *listen;
    if (data_opt->count() > 0) options->data_dir = *data;
    if (store_opt->count() > 0) options->store_url = *store;
    exit_code = app::Serve(*options);
  });
}

}  // namespace hookrelay::cli
