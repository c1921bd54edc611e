#include "app/watchdog.h"

#include <spdlog/spdlog.h>

namespace hookrelay::app {

bool EngineAlive(std::optional<SteadyTime> last_round, SteadyTime now, Duration limit) {
  return last_round.has_value() && now - *last_round < limit;
}

WatchdogFeeder::WatchdogFeeder(Duration timeout, LastRound last_round, std::function<void()> feed,
                               Now now)
    : interval_(std::max<Duration>(timeout / 2, std::chrono::milliseconds(1))),
      last_round_(std::move(last_round)),
      feed_(std::move(feed)),
      now_(now ? std::move(now) : Now([] { return std::chrono::steady_clock::now(); })),
      loop_("hr-watchdog", SystemClock::Instance()) {
  loop_.Start([this] {
    Check();
    return interval_;
  });
}

WatchdogFeeder::~WatchdogFeeder() { loop_.Stop(); }

bool WatchdogFeeder::Check() {
  const std::optional<SteadyTime> last = last_round_();
  const SteadyTime now = now_();
  if (EngineAlive(last, now, interval_)) {
    if (stalled_.exchange(false)) {
      spdlog::info("the delivery engine runs again: feeding the watchdog again");
    }
    feed_();
    return true;
  }
  if (!stalled_.exchange(true)) {
    if (last) {
      spdlog::error(
          "the delivery engine's loop has not run for {} ms: not feeding the service manager's "
          "watchdog, which restarts hookrelay if it stays so",
          std::chrono::duration_cast<std::chrono::milliseconds>(now - *last).count());
    } else {
      spdlog::error(
          "the delivery engine's loop has not started: not feeding the service manager's "
          "watchdog");
    }
  }
  return false;
}

}  // namespace hookrelay::app
