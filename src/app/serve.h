#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hookrelay::app {

struct ServeOptions {
  std::string config_path;                  // empty: no config file (defaults only)
  std::optional<std::string> listen;        // set when --listen was given (empty: refused, exit 2)
  std::optional<std::string> admin_listen;  // --admin-listen (idem): the management plane apart
  std::optional<std::string> data_dir;      // set when --data was given (empty: refused, exit 2)
  std::optional<std::string> store_url;     // postgres://…; set when --store was given (idem)
  bool allow_private_destinations = false;
  // --log-level / --log-format when given (win over [log]); a bad value is refused, exit 2.
  std::optional<std::string> log_level;
  std::optional<std::string> log_format;
  // Test hook: SQLite max_page_count, to make SQLite report a full disk (0 = off).
  int64_t sqlite_max_page_count = 0;
  // Test hook: how long a client address is first blocked after too many wrong admin tokens
  // (0 = the default, one minute).
  int64_t auth_block_ms = 0;
};

// `hookrelay serve`: loads config, opens the store, serves until SIGTERM/SIGINT, then stops
// accepting, finishes in-flight commits and returns 0. Returns 2 for bad config or arguments and
// for a data directory that cannot be used as it is (held by another process; a hookrelay.db that
// is damaged, not hookrelay's, or of another schema), 1 when an I/O failure that may pass stops
// the store from opening or the address cannot be bound (message on stderr). The
// admin token is shown (and its hash stored) only once the address is bound.
int Serve(const ServeOptions& options);

}  // namespace hookrelay::app
