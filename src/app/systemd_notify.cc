#include "app/systemd_notify.h"

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace hookrelay::app {

namespace {

// A STATUS= value on one line: the protocol separates assignments with newlines.
std::string OneLine(std::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return line;
}

}  // namespace

SystemdNotifier::SystemdNotifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  active_ = socket != nullptr && *socket != '\0';
  uint64_t usec = 0;
  // > 0 only when WATCHDOG_USEC is set and WATCHDOG_PID (if set) is this process.
  if (active_ && sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    watchdog_timeout_ = std::chrono::duration_cast<Duration>(std::chrono::microseconds(usec));
  }
}

void SystemdNotifier::Send(const std::string& message) const {
  if (!active_) return;
  if (int r = sd_notify(0, message.c_str()); r < 0) {
    spdlog::warn("cannot notify the service manager ({}): {}",
                 message.substr(0, message.find('\n')), std::strerror(-r));
  }
}

void SystemdNotifier::Ready(std::string_view status) const {
  Send("READY=1\nSTATUS=" + OneLine(status));
}

void SystemdNotifier::Reloading() const {
  // MONOTONIC_USEC: systemd 253 and later match it against the reload they asked for.
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  const uint64_t usec =
      static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
  Send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec) + "\nSTATUS=reloading the config");
}

void SystemdNotifier::Stopping() const { Send("STOPPING=1\nSTATUS=finishing in-flight requests"); }

void SystemdNotifier::Status(std::string_view status) const { Send("STATUS=" + OneLine(status)); }

void SystemdNotifier::FeedWatchdog() const { Send("WATCHDOG=1"); }

}  // namespace hookrelay::app
