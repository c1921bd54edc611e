#pragma once

#include <string>
#include <vector>

#include "app/config.h"
#include "app/node.h"
#include "app/serve.h"
#include "app/systemd_notify.h"
#include "common/clock.h"
#include "common/result.h"
#include "http/server.h"

namespace hookrelay::app {

// The settings that differ between the config serving (`running`) and a reloaded one (`next`)
// and that only a restart applies: the listeners and their limits, the store, the delivery
// engine's, retention's and the transforms' settings. Named as in the file ("server.listen",
// "store.dir"). Pure.
std::vector<std::string> RestartOnlyChanges(const Config& running, const Config& next);

// What SIGHUP (`systemctl reload hookrelay`) does to a running `hookrelay serve`
// (docs/operations.md, "Reloading the config"): reads the config file again, with serve's flags
// over it as at start, checks all of it as `serve` would, and only then applies it — the
// sources, destinations and routes (Node::Reload), the alerts' channels, the log level and
// format, and the listeners' TLS certificates and keys (read again from their files). A config
// that does not load or check is refused as a whole: the one in use is kept, the log says why
// (file and line, or the object and field), and hookrelay_config_reload_failures_total counts
// it. Settings only a restart applies are logged as such and otherwise left as they run.
//
// Not thread-safe: serve's signal-waiting thread calls it.
class ConfigReloader {
 public:
  // `running`: the config serve started with (flags applied). `listeners`: the servers whose
  // TLS files are read again (those without TLS are skipped). All must outlive the reloader.
  ConfigReloader(const ServeOptions& options, Config running, Node& node,
                 std::vector<http::Server*> listeners, const SystemdNotifier& notifier,
                 const Clock& clock);

  // Reloads once; OK when the new config was applied.
  Status Reload();

 private:
  Result<std::vector<std::string>> Apply();

  const ServeOptions options_;
  Config running_;
  Node& node_;
  const std::vector<http::Server*> listeners_;
  const SystemdNotifier& notifier_;
  const Clock& clock_;
};

}  // namespace hookrelay::app
