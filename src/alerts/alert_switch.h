#pragma once

#include <memory>

#include "alerts/alert.h"
#include "alerts/alert_dispatcher.h"
#include "alerts/alerts_config.h"
#include "common/clock.h"
#include "common/mutex.h"

namespace hookrelay::alerts {

// The alert sink the engine raises into, whose channels a config reload may change while it runs
// (SIGHUP, docs/operations.md): it passes each alert to the AlertDispatcher of the current
// config, and Configure replaces that dispatcher.
//
// Thread-safe. The clock must outlive it.
class AlertSwitch : public AlertSink {
 public:
  AlertSwitch(AlertsConfig config, const Clock& clock, AlertDispatcherOptions options = {});
  ~AlertSwitch() override;
  AlertSwitch(const AlertSwitch&) = delete;
  AlertSwitch& operator=(const AlertSwitch&) = delete;

  void Raise(Alert a) override;

  // Alerts raised from now on go out through `config`'s channels (none: they are only counted).
  // The dispatcher it replaces sends what it still holds first, as at shutdown (bounded by the
  // options' flush_timeout), so nothing raised before is dropped by the change. A config equal
  // to the current one changes nothing. Returns whether it changed.
  bool Configure(AlertsConfig config);
  const AlertsConfig& config() const;  // for the caller that configures it (not thread-safe)

  // Summed over every dispatcher this switch has had.
  AlertDispatcher::Stats stats() const;

 private:
  const Clock& clock_;
  const AlertDispatcherOptions options_;
  AlertsConfig config_;  // the caller's thread (Configure, config)
  mutable Mutex mu_;
  std::unique_ptr<AlertDispatcher> current_ GUARDED_BY(mu_);
  AlertDispatcher::Stats retired_ GUARDED_BY(mu_);  // the replaced dispatchers' counts
};

}  // namespace hookrelay::alerts
