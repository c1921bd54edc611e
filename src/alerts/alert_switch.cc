#include "alerts/alert_switch.h"

#include <utility>

namespace hookrelay::alerts {

AlertSwitch::AlertSwitch(AlertsConfig config, const Clock& clock, AlertDispatcherOptions options)
    : clock_(clock),
      options_(options),
      config_(config),
      current_(std::make_unique<AlertDispatcher>(std::move(config), clock, options)) {}

AlertSwitch::~AlertSwitch() = default;

void AlertSwitch::Raise(Alert a) {
  // Under the lock, so that Configure never destroys a dispatcher in the middle of a Raise; a
  // dispatcher's Raise only queues.
  MutexLock lock(mu_);
  current_->Raise(std::move(a));
}

bool AlertSwitch::Configure(AlertsConfig config) {
  if (config == config_) return false;
  config_ = config;
  auto next = std::make_unique<AlertDispatcher>(std::move(config), clock_, options_);
  std::unique_ptr<AlertDispatcher> previous;
  {
    MutexLock lock(mu_);
    previous = std::exchange(current_, std::move(next));
  }
  // Outside the lock: closing it sends what it holds, which may take a while; Raise goes to the
  // new one meanwhile.
  const AlertDispatcher::Stats flushed = previous->Close();
  previous.reset();
  MutexLock lock(mu_);
  retired_.raised += flushed.raised;
  retired_.sent += flushed.sent;
  retired_.failed += flushed.failed;
  retired_.dropped += flushed.dropped;
  return true;
}

const AlertsConfig& AlertSwitch::config() const { return config_; }

AlertDispatcher::Stats AlertSwitch::stats() const {
  MutexLock lock(mu_);
  AlertDispatcher::Stats s = current_->stats();
  s.raised += retired_.raised;
  s.sent += retired_.sent;
  s.failed += retired_.failed;
  s.dropped += retired_.dropped;
  return s;
}

}  // namespace hookrelay::alerts
