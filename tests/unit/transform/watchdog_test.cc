// The watchdog of transform calls (src/transform/watchdog.h) on its own: real threads, the real
// CPU clock of the calling thread.
#include "transform/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

namespace hookrelay::transform {
namespace {

// Burns this thread's CPU until `done` or `cpu` of CPU time is used; returns whether `done`.
bool BurnUntil(const std::atomic<bool>& done, std::chrono::nanoseconds cpu) {
  const std::chrono::nanoseconds start = Watchdog::ThreadCpuNow();
  volatile uint64_t sink = 0;
  while (!done.load()) {
    for (int i = 0; i < 10000; ++i) sink = sink + static_cast<uint64_t>(i);
    if (Watchdog::ThreadCpuNow() - start >= cpu) return done.load();
  }
  return true;
}

// Watches the calling thread with a 20 ms CPU budget; `spent` turns true when it is used up.
Watchdog::Token ArmTwentyMilliseconds(Watchdog& watchdog, std::atomic<bool>& spent) {
  return watchdog.Arm(
      std::chrono::milliseconds(20), std::chrono::microseconds(0),
      [&spent](Watchdog::Event e) { spent = spent || e == Watchdog::Event::kBudgetSpent; },
      Watchdog::ThreadCpuNow());
}

TEST(WatchdogTest, ABudgetSpentIsReported) {
  Watchdog watchdog;
  std::atomic<bool> spent{false};
  const Watchdog::Token token = ArmTwentyMilliseconds(watchdog, spent);
  EXPECT_TRUE(BurnUntil(spent, std::chrono::seconds(2)));
  watchdog.Disarm(token);
}

// An extension taken back (what Sandbox does around its own work) leaves the budget as it was,
// even when the watchdog looked at the thread while the extension lasted: before the fix that
// look planned the next one an hour away, and an endless loop after it was never stopped.
TEST(WatchdogTest, ABudgetGivenBackAfterAnExtensionIsStillWatched) {
  Watchdog watchdog;
  std::atomic<bool> spent{false};
  const Watchdog::Token token = ArmTwentyMilliseconds(watchdog, spent);
  watchdog.Extend(token, std::chrono::hours(1));
  // Past the 20 ms the first look waits for (in CPU time, so in wall time too): it has looked.
  EXPECT_FALSE(BurnUntil(spent, std::chrono::milliseconds(60)));
  watchdog.Extend(token, -std::chrono::hours(1));
  EXPECT_TRUE(BurnUntil(spent, std::chrono::seconds(2)))
      << "the budget given back was not watched again";
  watchdog.Disarm(token);
}

}  // namespace
}  // namespace hookrelay::transform
