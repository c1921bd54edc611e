// BackgroundLoop on a FakeClock: the first pass at Start, the next when the clock reaches the wait
// the pass asked for (and not before), RunNow without waiting, Stop without waiting anything out.
#include "common/background_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include "support/wait.h"

namespace hookrelay {
namespace {

using namespace std::chrono_literals;

TEST(BackgroundLoopTest, PassesRunAtStartThenWhenTheClockReachesTheWaitAsked) {
  FakeClock clock;
  std::atomic<int> passes{0};
  BackgroundLoop loop("hr-test", clock);
  loop.Start([&] {
    passes++;
    return Duration(60s);
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(passes.load(), 1);
  clock.Advance(59s);  // not yet
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(passes.load(), 1);
  clock.Advance(1s);
  ASSERT_TRUE(test::WaitFor([&] { return passes.load() == 2; }));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(passes.load(), 2);
  loop.Stop();
  EXPECT_EQ(passes.load(), 2);
}

TEST(BackgroundLoopTest, RunNowStartsAPassWithoutTheClockMoving) {
  FakeClock clock;
  std::atomic<int> passes{0};
  BackgroundLoop loop("hr-test", clock);
  loop.Start([&] {
    passes++;
    return BackgroundLoop::kNoTimer;
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  loop.RunNow();
  ASSERT_TRUE(test::WaitFor([&] { return passes.load() == 2; }));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(passes.load(), 2) << "one RunNow, one pass";
}

TEST(BackgroundLoopTest, ARunNowDuringAPassGivesOneMorePassAndEndsItsSleep) {
  FakeClock clock;
  std::atomic<int> passes{0};
  std::atomic<bool> woke{false};
  BackgroundLoop loop("hr-test", clock);
  loop.Start([&] {
    if (passes++ == 0) {
      // Asleep inside the pass for an hour of the clock: RunNow ends the sleep early.
      woke = loop.Sleep(1h);
    }
    return BackgroundLoop::kNoTimer;
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  loop.RunNow();
  ASSERT_TRUE(test::WaitFor([&] { return passes.load() == 2; }));
  EXPECT_TRUE(woke.load());
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(passes.load(), 2);
}

TEST(BackgroundLoopTest, StopEndsASleepAndAPauseAtOnceAndNoPassFollows) {
  FakeClock clock;
  std::atomic<int> passes{0};
  std::atomic<bool> slept{true};
  std::atomic<bool> paused{true};
  BackgroundLoop loop("hr-test", clock);
  loop.Start([&] {
    passes++;
    slept = loop.Sleep(24h);
    paused = loop.Pause(24h);  // real time: only Stop ends it
    return Duration(0);
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  loop.Stop();  // returns: neither the day's sleep nor the day's pause was waited out
  EXPECT_FALSE(slept.load());
  EXPECT_FALSE(paused.load());
  EXPECT_TRUE(loop.stopping());
  EXPECT_EQ(passes.load(), 1);
  loop.Stop();  // idempotent
}

TEST(BackgroundLoopTest, StopBeforeStartAndWithoutStartIsFine) {
  FakeClock clock;
  BackgroundLoop never("hr-test", clock);
  never.Stop();
  EXPECT_TRUE(never.stopping());
}

}  // namespace
}  // namespace hookrelay
