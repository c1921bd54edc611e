#include "common/clock.h"

#include <algorithm>

namespace hookrelay {

TimePoint SystemClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

Duration SystemClock::MonotonicNow() const {
  return std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now().time_since_epoch());
}

SystemClock& SystemClock::Instance() {
  static SystemClock clock;
  return clock;
}

bool SystemClock::WaitOnce(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                           Deadline deadline) const {
  // Slept on the steady clock for what is left now; a wall-clock deadline is re-read at every
  // wake-up (the caller calls again), so a clock set meanwhile counts from then on.
  const Duration left =
      deadline.at - (deadline.monotonic ? MonotonicNow() : Now().time_since_epoch());
  if (left <= Duration::zero()) return false;
  cv.wait_for(lock, left);
  return true;
}

FakeClock::~FakeClock() = default;

TimePoint FakeClock::Now() const {
  MutexLock lock(mu_);
  return now_;
}

Duration FakeClock::MonotonicNow() const {
  MutexLock lock(mu_);
  return mono_;
}

void FakeClock::Advance(Duration d) {
  WaiterList due;
  {
    MutexLock lock(mu_);
    now_ += d;
    mono_ += d;
    due = TakeDueLocked();
  }
  Notify(due);
}

void FakeClock::Set(TimePoint t) {
  WaiterList due;
  {
    MutexLock lock(mu_);
    if (t > now_) mono_ += t - now_;
    now_ = t;
    due = TakeDueLocked();
  }
  Notify(due);
}

bool FakeClock::DueLocked(const Deadline& d) const {
  return d.monotonic ? mono_ >= d.at : now_.time_since_epoch() >= d.at;
}

TimePoint FakeClock::WallOfLocked(const Deadline& d) const {
  return d.monotonic ? now_ + (d.at - mono_) : TimePoint(d.at);
}

bool FakeClock::WaitOnce(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                         Deadline deadline) const {
  auto w = std::make_shared<Waiter>(Waiter{lock.mutex(), &cv, deadline});
  {
    // Checked and registered under the caller's mutex, which an Advance takes before it notifies:
    // it cannot notify between this check and the wait below (no lost wake-up).
    MutexLock g(mu_);
    if (DueLocked(deadline)) return false;
    waiters_.push_back(w);
  }
  changed_cv_.notify_all();
  cv.wait(lock);
  MutexLock g(mu_);
  waiters_.erase(std::find(waiters_.begin(), waiters_.end(), w));
  if (w->pinned > 0) {
    // An Advance is about to take the caller's mutex to notify this waiter: let it have it, and
    // return only once it is done with the mutex and the condition variable (both may be
    // destroyed once we return).
    g.unlock();
    lock.unlock();
    g.lock();
    changed_cv_.wait(g, [&] { return w->pinned == 0; });
    g.unlock();
    lock.lock();
  }
  return true;
}

FakeClock::WaiterList FakeClock::TakeDueLocked() {
  WaiterList due;
  for (const auto& w : waiters_) {
    if (!w->fired && DueLocked(w->deadline)) {
      w->fired = true;
      w->pinned++;
      due.push_back(w);
    }
  }
  return due;
}

void FakeClock::Notify(const WaiterList& due) {
  if (due.empty()) return;
  for (const auto& w : due) {
    // Once we hold its mutex the waiter is inside cv.wait (it registered under that mutex and
    // holds it until it waits), so this notify cannot be lost.
    std::lock_guard m(*w->mutex);
    w->cv->notify_all();
  }
  MutexLock lock(mu_);
  for (const auto& w : due) w->pinned--;
  changed_cv_.notify_all();
}

size_t FakeClock::WaitingLocked() const {
  return static_cast<size_t>(
      std::count_if(waiters_.begin(), waiters_.end(), [](const auto& w) { return !w->fired; }));
}

size_t FakeClock::Waiters() const {
  MutexLock lock(mu_);
  return WaitingLocked();
}

std::optional<TimePoint> FakeClock::NextDeadline() const {
  MutexLock lock(mu_);
  return NextDeadlineLocked();
}

std::optional<TimePoint> FakeClock::NextDeadlineLocked() const {
  std::optional<TimePoint> next;
  for (const auto& w : waiters_) {
    if (w->fired) continue;
    const TimePoint at = WallOfLocked(w->deadline);
    if (!next || at < *next) next = at;
  }
  return next;
}

bool FakeClock::AwaitWaiters(size_t n, std::chrono::milliseconds timeout) const {
  MutexLock lock(mu_);
  // Real time on purpose: this is how long a test gives the component to fall asleep.
  return changed_cv_.wait_for(lock, timeout, [&]() REQUIRES(mu_) { return WaitingLocked() >= n; });
}

std::optional<TimePoint> FakeClock::AdvanceToNextDeadline() {
  WaiterList due;
  std::optional<TimePoint> next;
  {
    MutexLock lock(mu_);
    next = NextDeadlineLocked();
    if (!next) return std::nullopt;
    if (*next > now_) {
      mono_ += *next - now_;
      now_ = *next;
    }
    due = TakeDueLocked();
  }
  Notify(due);
  return next;
}

}  // namespace hookrelay
