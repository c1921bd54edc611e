// The clock owns waiting: FakeClock wakes waiters when a test moves it (and only then), and
// SystemClock waits on the condition variable in real time.
#include "common/clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

namespace hookrelay {
namespace {

using namespace std::chrono_literals;

// A component's waiting state: a flag under a mutex, and the condition variable it is told on.
struct Waitable {
  std::mutex mu;
  std::condition_variable cv;
  bool flag = false;

  void Set() {
    {
      std::lock_guard lock(mu);
      flag = true;
    }
    cv.notify_all();
  }
};

// Waits through `clock` on another thread until the flag is set or `deadline`.
std::future<bool> WaitAsync(const Clock& clock, Waitable& w, TimePoint deadline) {
  return std::async(std::launch::async, [&clock, &w, deadline] {
    std::unique_lock<std::mutex> lock(w.mu);
    return clock.WaitUntil(lock, w.cv, deadline, [&] { return w.flag; });
  });
}

bool Ready(std::future<bool>& f) { return f.wait_for(0ms) == std::future_status::ready; }

TEST(FakeClockTest, AWaitEndsWhenTheClockReachesItsDeadlineAndNotBefore) {
  FakeClock clock;
  Waitable w;
  const TimePoint deadline = clock.Now() + 10s;
  std::future<bool> waited = WaitAsync(clock, w, deadline);
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(clock.Waiters(), 1u);
  EXPECT_EQ(clock.NextDeadline(), deadline);

  clock.Advance(9999ms);  // not due: nobody is woken, so the waiter is still there
  EXPECT_EQ(clock.Waiters(), 1u);
  EXPECT_FALSE(Ready(waited));

  clock.Advance(1ms);
  ASSERT_EQ(waited.wait_for(20s), std::future_status::ready);
  EXPECT_FALSE(waited.get());  // the deadline passed, the flag was never set
  EXPECT_EQ(clock.Waiters(), 0u);
  EXPECT_EQ(clock.NextDeadline(), std::nullopt);
}

TEST(FakeClockTest, ANotifyEndsAWaitWithoutTimeMoving) {
  FakeClock clock;
  Waitable w;
  const TimePoint start = clock.Now();
  std::future<bool> waited = WaitAsync(clock, w, start + 1h);
  ASSERT_TRUE(clock.AwaitWaiters(1));
  w.Set();
  ASSERT_EQ(waited.wait_for(20s), std::future_status::ready);
  EXPECT_TRUE(waited.get());
  EXPECT_EQ(clock.Now(), start);
}

TEST(FakeClockTest, SetForwardWakesAWallClockDeadline) {
  FakeClock clock;
  Waitable w;
  const TimePoint deadline = clock.Now() + 24h;
  std::future<bool> waited = WaitAsync(clock, w, deadline);
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Set(deadline + 1s);
  ASSERT_EQ(waited.wait_for(20s), std::future_status::ready);
  EXPECT_FALSE(waited.get());
}

// WaitFor counts monotonic time: setting the wall clock back neither ends nor stretches it.
TEST(FakeClockTest, WaitForFollowsMonotonicTime) {
  FakeClock clock;
  Waitable w;
  auto waited = std::async(std::launch::async, [&] {
    std::unique_lock<std::mutex> lock(w.mu);
    return clock.WaitFor(lock, w.cv, 10s, [&] { return w.flag; });
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(clock.NextDeadline(), clock.Now() + 10s);
  clock.Set(clock.Now() - 1h);  // the wall clock goes back; monotonic time stands still
  EXPECT_EQ(clock.NextDeadline(), clock.Now() + 10s);
  clock.Advance(9s);
  EXPECT_FALSE(Ready(waited));
  clock.Advance(1s);
  ASSERT_EQ(waited.wait_for(20s), std::future_status::ready);
  EXPECT_FALSE(waited.get());
}

// A test can move exactly to the next deadline: only the earliest waiter wakes.
TEST(FakeClockTest, AdvanceToNextDeadlineWakesOnlyTheEarliest) {
  FakeClock clock;
  Waitable early, late;
  const TimePoint start = clock.Now();
  std::future<bool> e = WaitAsync(clock, early, start + 5s);
  std::future<bool> l = WaitAsync(clock, late, start + 7s);
  ASSERT_TRUE(clock.AwaitWaiters(2));
  EXPECT_EQ(clock.AdvanceToNextDeadline(), start + 5s);
  EXPECT_EQ(clock.Now(), start + 5s);
  ASSERT_EQ(e.wait_for(20s), std::future_status::ready);
  EXPECT_FALSE(e.get());
  EXPECT_FALSE(Ready(l));
  EXPECT_EQ(clock.Waiters(), 1u);
  EXPECT_EQ(clock.AdvanceToNextDeadline(), start + 7s);
  ASSERT_EQ(l.wait_for(20s), std::future_status::ready);
  EXPECT_FALSE(l.get());
  EXPECT_EQ(clock.AdvanceToNextDeadline(), std::nullopt);  // nobody waits: the clock stays
  EXPECT_EQ(clock.Now(), start + 7s);
}

TEST(FakeClockTest, AWaitForAPastDeadlineReturnsAtOnce) {
  FakeClock clock;
  Waitable w;
  std::unique_lock<std::mutex> lock(w.mu);
  EXPECT_FALSE(clock.WaitUntil(lock, w.cv, clock.Now(), [&] { return w.flag; }));
  w.flag = true;
  EXPECT_TRUE(clock.WaitUntil(lock, w.cv, clock.Now() - 1s, [&] { return w.flag; }));
  EXPECT_EQ(clock.Waiters(), 0u);
}

// The clock is moved the moment the waiter may be registering: Advance takes the waiter's mutex
// before it notifies, so the wake-up can never fall between the waiter's check and its wait.
// (Without that, some of these waits sleep forever and the test times out.)
TEST(FakeClockTest, NoWakeUpIsLostWhenTheClockMovesAsAWaitBegins) {
  FakeClock clock;
  for (int i = 0; i < 2000; ++i) {
    Waitable w;
    const TimePoint deadline = clock.Now() + 1ms;
    std::future<bool> waited = WaitAsync(clock, w, deadline);
    if (i % 2) std::this_thread::yield();
    clock.Advance(1ms);
    ASSERT_EQ(waited.wait_for(20s), std::future_status::ready) << "lost wake-up at " << i;
    EXPECT_FALSE(waited.get());
  }
}

// The mechanism behind the test above, shown deterministically: Advance notifies a due waiter
// only under the waiter's mutex, so while a thread holds that mutex (as a waiter does between
// its check and its wait), Advance cannot complete.
TEST(FakeClockTest, AdvanceTakesTheWaitersMutexBeforeItNotifies) {
  FakeClock clock;
  Waitable w;
  std::future<bool> waited = WaitAsync(clock, w, clock.Now() + 1s);
  ASSERT_TRUE(clock.AwaitWaiters(1));
  std::unique_lock<std::mutex> held(w.mu);
  auto advanced = std::async(std::launch::async, [&] { clock.Advance(1s); });
  // Not a measurement: whatever the load, a correct Advance is still blocked after this.
  EXPECT_EQ(advanced.wait_for(100ms), std::future_status::timeout)
      << "Advance notified without the waiter's mutex";
  held.unlock();
  ASSERT_EQ(advanced.wait_for(20s), std::future_status::ready);
  ASSERT_EQ(waited.wait_for(20s), std::future_status::ready);
  EXPECT_FALSE(waited.get());
}

TEST(SystemClockTest, WaitsOnTheConditionVariable) {
  const Clock& clock = SystemClock::Instance();
  Waitable w;
  std::future<bool> waited = WaitAsync(clock, w, clock.Now() + 1h);
  w.Set();
  ASSERT_EQ(waited.wait_for(20s), std::future_status::ready);
  EXPECT_TRUE(waited.get());
}

TEST(SystemClockTest, AWaitEndsAtItsDeadline) {
  const Clock& clock = SystemClock::Instance();
  Waitable w;
  std::unique_lock<std::mutex> lock(w.mu);
  // Real time is the subject here: 20 ms must pass on the system clock.
  const Duration start = clock.MonotonicNow();
  EXPECT_FALSE(clock.WaitFor(lock, w.cv, 20ms, [&] { return w.flag; }));
  EXPECT_GE(clock.MonotonicNow() - start, 20ms);
  const TimePoint deadline = clock.Now() + 20ms;
  EXPECT_FALSE(clock.WaitUntil(lock, w.cv, deadline, [&] { return w.flag; }));
  EXPECT_GE(clock.Now(), deadline);
}

}  // namespace
}  // namespace hookrelay
