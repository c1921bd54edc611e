#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>

#include "common/background_loop.h"
#include "common/clock.h"

namespace hookrelay::app {

using SteadyTime = std::chrono::steady_clock::time_point;

// Whether the delivery engine counts as alive at `now`: its scheduler began a round (`last_round`,
// DeliveryEngine::LastRound) less than `limit` ago. Never began one: not alive. Pure.
bool EngineAlive(std::optional<SteadyTime> last_round, SteadyTime now, Duration limit);

// Feeds a service manager's watchdog while the delivery engine works: every half of `timeout` it
// checks the engine's last round and calls `feed` only when that round began within half of
// `timeout`. A stalled engine (a store that hangs, a deadlock) thus stops the feeding, and systemd
// restarts the service once `timeout` passes without it; the stall is logged once, when noticed.
// Real time (a steady clock), whatever the clock the engine runs on.
class WatchdogFeeder {
 public:
  using LastRound = std::function<std::optional<SteadyTime>()>;
  using Now = std::function<SteadyTime()>;

  // Starts feeding at once. `now` defaults to std::chrono::steady_clock (tests give their own).
  WatchdogFeeder(Duration timeout, LastRound last_round, std::function<void()> feed,
                 Now now = nullptr);
  ~WatchdogFeeder();  // stops the thread
  WatchdogFeeder(const WatchdogFeeder&) = delete;
  WatchdogFeeder& operator=(const WatchdogFeeder&) = delete;

  // One check: feeds if the engine is alive; returns whether it fed (the thread calls it; tests
  // may too).
  bool Check();

 private:
  const Duration interval_;
  const LastRound last_round_;
  const std::function<void()> feed_;
  const Now now_;
  std::atomic<bool> stalled_{false};  // logged once per stall
  BackgroundLoop loop_;
};

}  // namespace hookrelay::app
