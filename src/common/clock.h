#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

#include "common/mutex.h"

namespace hookrelay {

// Durations and instants throughout hookrelay are whole milliseconds. Instants are wall-clock
// (system_clock) because they are stored and shown to users (next_attempt_at); intervals that
// must not jump with NTP use MonotonicNow().
using Duration = std::chrono::milliseconds;
using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;

// Source of time, injected into all pure logic so tests can pin it. Thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time, for instants that are stored and shown.
  virtual TimePoint Now() const = 0;
  // Monotonic time, for measuring intervals (timeouts, durations).
  virtual Duration MonotonicNow() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override;
  Duration MonotonicNow() const override;
  // A process-wide instance.
  static SystemClock& Instance();
};

// A clock that only moves when told; for tests. Now() and MonotonicNow() advance together.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(Duration(1'700'000'000'000))) : now_(start) {}
  TimePoint Now() const override;
  Duration MonotonicNow() const override;
  void Advance(Duration d);
  void Set(TimePoint t);

 private:
  mutable Mutex mu_;
  TimePoint now_ GUARDED_BY(mu_);
  Duration mono_ GUARDED_BY(mu_){0};
};

// Milliseconds since the Unix epoch, and back.
inline int64_t ToUnixMillis(TimePoint t) { return t.time_since_epoch().count(); }
inline TimePoint FromUnixMillis(int64_t ms) { return TimePoint(Duration(ms)); }

}  // namespace hookrelay
