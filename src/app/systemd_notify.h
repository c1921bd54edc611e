#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace hookrelay::app {

// Tells systemd how `hookrelay serve` is, for a unit of Type=notify (packaging/hookrelay.service):
// READY=1 once the store is open and the listeners bound, RELOADING=1 and READY=1 around a
// SIGHUP reload, STOPPING=1 at shutdown, a STATUS= line, and WATCHDOG=1 to feed WatchdogSec.
// Not started by systemd (no NOTIFY_SOCKET in the environment), every call does nothing.
// Thread-safe (sd_notify opens a socket per message).
class SystemdNotifier {
 public:
  // Reads NOTIFY_SOCKET and WATCHDOG_USEC (and WATCHDOG_PID) from the environment.
  SystemdNotifier();

  // Whether a service manager listens (NOTIFY_SOCKET is set).
  bool active() const { return active_; }
  // The watchdog's timeout (WatchdogSec) when the manager asks this process to feed one.
  std::optional<Duration> watchdog_timeout() const { return watchdog_timeout_; }

  void Ready(std::string_view status) const;
  void Reloading() const;  // READY follows when the reload ended, failed or not
  void Stopping() const;
  void Status(std::string_view status) const;
  void FeedWatchdog() const;

 private:
  void Send(const std::string& message) const;

  bool active_ = false;
  std::optional<Duration> watchdog_timeout_;
};

}  // namespace hookrelay::app
