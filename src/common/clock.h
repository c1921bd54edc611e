#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "common/mutex.h"
#include "common/thread_annotations.h"

namespace hookrelay {

// Durations and instants throughout hookrelay are whole milliseconds. Instants are wall-clock
// (system_clock) because they are stored and shown to users (next_attempt_at); intervals that
// must not jump with NTP use MonotonicNow().
using Duration = std::chrono::milliseconds;
using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;

// Source of time, injected into all pure logic so tests can pin it, and the owner of every wait
// that ends at a time: a component that sleeps until a deadline sleeps through its clock
// (WaitUntil / WaitFor), so a FakeClock that a test moves wakes it. Thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time, for instants that are stored and shown.
  virtual TimePoint Now() const = 0;
  // Monotonic time, for measuring intervals (timeouts, durations).
  virtual Duration MonotonicNow() const = 0;

  // Waits on `cv` (releasing `lock`, which must hold the mutex that guards what `pred` reads and
  // under which `cv` is notified) until `pred()` holds or Now() reaches `deadline`. Returns
  // pred() as it was last evaluated, under the lock: false means the deadline passed first.
  // A wall-clock deadline follows the clock as it is set (a jump forward ends the wait at the
  // next wake-up; SystemClock re-reads the time whenever it wakes).
  //
  // Not analysed for thread safety: `pred` runs with the caller's lock held, which the analysis
  // cannot tie to a std::unique_lock parameter (the caller's predicate says REQUIRES(mu_)).
  template <class Pred>
  bool WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                 TimePoint deadline, Pred pred) const NO_THREAD_SAFETY_ANALYSIS {
    while (!pred()) {
      if (!WaitOnce(lock, cv, Deadline{false, deadline.time_since_epoch()})) return pred();
    }
    return true;
  }
  // As WaitUntil, for `d` of monotonic time (an interval that must not jump with the wall clock).
  template <class Pred>
  bool WaitFor(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Duration d,
               Pred pred) const NO_THREAD_SAFETY_ANALYSIS {
    const Deadline deadline{true, MonotonicNow() + d};
    while (!pred()) {
      if (!WaitOnce(lock, cv, deadline)) return pred();
    }
    return true;
  }

 protected:
  // A deadline on the wall clock (Now().time_since_epoch()) or on the monotonic one.
  struct Deadline {
    bool monotonic = false;
    Duration at{0};
  };
  // One wait: false at once when `deadline` has passed; otherwise blocks on `cv` (releasing
  // `lock`) until it is notified, the deadline passes, or spuriously, and returns true. The caller
  // re-checks its predicate and calls again.
  virtual bool WaitOnce(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                        Deadline deadline) const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override;
  Duration MonotonicNow() const override;
  // A process-wide instance.
  static SystemClock& Instance();

 protected:
  bool WaitOnce(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                Deadline deadline) const override;
};

// A clock that only moves when told; for tests. Now() and MonotonicNow() advance together
// (Set() backwards moves only Now()).
//
// Waits through it block until their condition variable is notified or until the test moves the
// clock to (or past) their deadline: Advance() and Set() wake every waiter that became due, so
// no real time passes in a test. Waiters() and NextDeadline() tell a test that a component is
// waiting and for when, so it can advance exactly to the next deadline. Advance() and Set() must
// not be called with a waiter's mutex held.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(Duration(1'700'000'000'000))) : now_(start) {}
  ~FakeClock() override;
  TimePoint Now() const override;
  Duration MonotonicNow() const override;
  void Advance(Duration d);
  void Set(TimePoint t);

  // Threads waiting through this clock now.
  size_t Waiters() const;
  // The earliest time (on Now()'s scale) a waiter waits for; nullopt when none waits.
  std::optional<TimePoint> NextDeadline() const;
  // Blocks (in real time, at most `timeout`) until at least `n` threads wait through this clock;
  // false on timeout. For tests: "the component is now asleep until its next deadline".
  bool AwaitWaiters(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;
  // Moves the clock to NextDeadline() (when it is later than now) and returns it; nullopt (and
  // the clock unchanged) when nobody waits.
  std::optional<TimePoint> AdvanceToNextDeadline();

 protected:
  bool WaitOnce(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                Deadline deadline) const override;

 private:
  struct Waiter {
    std::mutex* mutex;
    std::condition_variable* cv;
    Deadline deadline;
    bool fired = false;  // guarded by the clock's mu_: an Advance notified it; no longer waiting
    int pinned = 0;      // guarded by the clock's mu_: an Advance is about to notify it (keep it)
  };
  using WaiterList = std::vector<std::shared_ptr<Waiter>>;
  bool DueLocked(const Deadline& d) const REQUIRES(mu_);
  std::optional<TimePoint> NextDeadlineLocked() const REQUIRES(mu_);
  TimePoint WallOfLocked(const Deadline& d) const REQUIRES(mu_);
  size_t WaitingLocked() const REQUIRES(mu_);
  // The waiters that are due now (after the time moved), marked fired and pinned.
  WaiterList TakeDueLocked() REQUIRES(mu_);
  // Notifies `due` (each under its own mutex, with mu_ not held: waiters take mu_ under theirs),
  // then unpins them.
  void Notify(const WaiterList& due) EXCLUDES(mu_);

  mutable Mutex mu_;
  mutable std::condition_variable changed_cv_;  // waiters registered or unpinned
  TimePoint now_ GUARDED_BY(mu_);
  Duration mono_ GUARDED_BY(mu_){0};
  mutable WaiterList waiters_ GUARDED_BY(mu_);
};

// Milliseconds since the Unix epoch, and back.
inline int64_t ToUnixMillis(TimePoint t) { return t.time_since_epoch().count(); }
inline TimePoint FromUnixMillis(int64_t ms) { return TimePoint(Duration(ms)); }

}  // namespace hookrelay
