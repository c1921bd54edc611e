#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hookrelay::app {

struct ServeOptions {
  std::string config_path;  // empty: no config file (defaults only)
  std::optional<std::string> listen;
  std::optional<std::string> data_dir;
  std::optional<std::string> store_url;  // postgres://…
  bool allow_private_destinations = false;
  // Test hook: SQLite max_page_count, to make SQLite report a full disk (0 = off).
  int64_t sqlite_max_page_count = 0;
  // Test hook: how long a client address is first blocked after too many wrong admin tokens
  // (0 = the default, one minute).
  int64_t auth_block_ms = 0;
};

// `hookrelay serve`: loads config, opens the store, serves until SIGTERM/SIGINT, then stops
// accepting, finishes in-flight commits and returns 0. Returns 2 for bad config or arguments,
// 1 when the store cannot be opened or the address cannot be bound (message on stderr). The
// admin token is shown (and its hash stored) only once the address is bound.
int Serve(const ServeOptions& options);

}  // namespace hookrelay::app
