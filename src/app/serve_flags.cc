#include "app/serve_flags.h"

#include "app/logging.h"

namespace hookrelay::app {

Status ApplyServeFlags(const ServeOptions& options, Config& config) {
  // An empty flag (--store "$PG" with PG unset) is a mistake, refused as the file's empty
  // values are — never the default directory.
  if (options.data_dir && options.data_dir->empty()) {
    return Status::InvalidArgument(
        "--data: is empty: give the data directory (without --data, serve uses "
        "./hookrelay-data)");
  }
  if (options.store_url && options.store_url->empty()) {
    return Status::InvalidArgument(
        "--store: is empty: give a postgres:// or postgresql:// URL, or --data DIR for the "
        "embedded store");
  }
  if (options.listen && options.listen->empty()) {
    return Status::InvalidArgument(
        "--listen: is empty: give an address such as 127.0.0.1:8080 (without --listen, serve "
        "uses [server] listen or 127.0.0.1:8080)");
  }
  if (options.admin_listen && options.admin_listen->empty()) {
    return Status::InvalidArgument(
        "--admin-listen: is empty: give an address such as 127.0.0.1:8081");
  }
  if (options.listen) config.server.listen = *options.listen;
  if (options.admin_listen) config.server.admin_listen = *options.admin_listen;
  // --data names the data directory; with a PostgreSQL store (--store, or [store] url in the
  // file) it holds only this node's admin token and id, and the store stays PostgreSQL: --data
  // never turns a configured PostgreSQL store into the embedded one.
  if (options.data_dir) config.store.dir = *options.data_dir;
  if (options.store_url) config.store.postgres_url = *options.store_url;
  if (options.allow_private_destinations) config.server.allow_private_destinations = true;
  if (options.log_level) {
    auto level = ParseLogLevel(*options.log_level);
    if (!level.ok()) return Status::InvalidArgument("--log-level: " + level.status().message());
    config.log.level = *level;
  }
  if (options.log_format) {
    auto format = ParseLogFormat(*options.log_format);
    if (!format.ok()) return Status::InvalidArgument("--log-format: " + format.status().message());
    config.log.format = *format;
  }
  return Status::Ok();
}

}  // namespace hookrelay::app
