#include "common/clock.h"

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

TimePoint FakeClock::Now() const {
  MutexLock lock(mu_);
  return now_;
}

Duration FakeClock::MonotonicNow() const {
  MutexLock lock(mu_);
  return mono_;
}

void FakeClock::Advance(Duration d) {
  MutexLock lock(mu_);
  now_ += d;
  mono_ += d;
}

void FakeClock::Set(TimePoint t) {
  MutexLock lock(mu_);
  if (t > now_) mono_ += t - now_;
  now_ = t;
}

}  // namespace hookrelay
