// The watchdog feeder (issue 29: WatchdogSec fed by the engine's loop): it feeds while the
// engine's scheduler begins rounds, stops when they stop, and starts again when they do.

#include "app/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "support/log_capture.h"
#include "support/wait.h"

namespace hookrelay::app {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(EngineAliveTest, ARoundWithinTheLimitIsAlive) {
  const SteadyTime now = SteadyTime() + seconds(100);
  EXPECT_TRUE(EngineAlive(now - seconds(14), now, seconds(15)));
  EXPECT_TRUE(EngineAlive(now, now, seconds(15)));
  EXPECT_FALSE(EngineAlive(now - seconds(15), now, seconds(15)));
  EXPECT_FALSE(EngineAlive(now - seconds(60), now, seconds(15)));
  EXPECT_FALSE(EngineAlive(std::nullopt, now, seconds(15))) << "never began a round";
}

// A hand-driven steady time and engine: the feeder's own thread checks every half timeout (here
// 30 s of its time, so in the test only Check() calls count past the first).
class WatchdogFeederTest : public ::testing::Test {
 protected:
  std::optional<SteadyTime> LastRound() {
    std::lock_guard lock(mu_);
    return last_round_;
  }
  SteadyTime Now() {
    std::lock_guard lock(mu_);
    return now_;
  }
  void Advance(Duration d, bool engine_runs) {
    std::lock_guard lock(mu_);
    now_ += d;
    if (engine_runs) last_round_ = now_;
  }

  std::mutex mu_;
  SteadyTime now_ = SteadyTime() + seconds(1000);
  std::optional<SteadyTime> last_round_;
  std::atomic<int> feeds_{0};
};

TEST_F(WatchdogFeederTest, FeedsWhileTheEngineRunsAndStopsWhenItStalls) {
  testing::LogCapture log;
  Advance(Duration(0), true);
  WatchdogFeeder feeder(
      seconds(60), [this] { return LastRound(); }, [this] { feeds_++; }, [this] { return Now(); });
  ASSERT_TRUE(test::WaitFor([&] { return feeds_.load() == 1; })) << "the first check, at start";
  Advance(seconds(20), true);
  EXPECT_TRUE(feeder.Check());
  EXPECT_EQ(feeds_.load(), 2);
  // The engine stops beginning rounds: within half the timeout it is still fed, then not.
  Advance(seconds(29), false);
  EXPECT_TRUE(feeder.Check());
  Advance(seconds(2), false);
  EXPECT_FALSE(feeder.Check());
  EXPECT_FALSE(feeder.Check());
  EXPECT_EQ(feeds_.load(), 3);
  EXPECT_EQ(Occurrences(log.text(), "the delivery engine's loop has not run for 31000 ms"), 1u)
      << "logged once per stall: " << log.text();
  // It runs again: fed again, and said so.
  Advance(seconds(1), true);
  EXPECT_TRUE(feeder.Check());
  EXPECT_EQ(feeds_.load(), 4);
  EXPECT_NE(log.text().find("the delivery engine runs again"), std::string::npos) << log.text();
}

TEST_F(WatchdogFeederTest, AnEngineThatNeverBeganARoundIsNotFed) {
  testing::LogCapture log;
  WatchdogFeeder feeder(
      seconds(60), [this] { return LastRound(); }, [this] { feeds_++; }, [this] { return Now(); });
  EXPECT_FALSE(feeder.Check());
  EXPECT_EQ(feeds_.load(), 0);
  EXPECT_TRUE(test::WaitFor([&] {
    return log.text().find("the delivery engine's loop has not started") != std::string::npos;
  }));
}

}  // namespace
}  // namespace hookrelay::app
