#pragma once

#include <mutex>

#include "common/thread_annotations.h"

namespace hookrelay {

// A std::mutex that clang's thread-safety analysis knows as a capability, so members declared
// `GUARDED_BY(mu_)` and functions declared `REQUIRES(mu_)` are checked at compile time
// (docs/thread_safety.md). Take it with MutexLock; there is no lock()/unlock(), so std::lock_guard
// and std::unique_lock, which the analysis cannot see, do not compile on it.
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

  // Tells the analysis that the calling thread holds this mutex, where it cannot see it (a
  // callback run under the lock by code it does not analyse). No run-time check: std::mutex does
  // not know its owner.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex for its scope. It is a std::unique_lock<std::mutex>, so it can be passed to
// std::condition_variable::wait and to anything taking `std::unique_lock<std::mutex>&`; a
// predicate that reads guarded members says so: `cv.wait(lock, [&]() REQUIRES(mu_) {...})`.
// lock() and unlock() hide the base class's so the analysis sees them; the base's other
// members that change ownership (release, swap, try_lock...) are not for use on a MutexLock.
class SCOPED_CAPABILITY MutexLock : public std::unique_lock<std::mutex> {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : std::unique_lock<std::mutex>(mu.mu_) {}
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : MutexLock(*mu) {}
  ~MutexLock() RELEASE() = default;

  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Gives the mutex up for a while (a slow call that must not hold it), then takes it back.
  void lock() ACQUIRE() { std::unique_lock<std::mutex>::lock(); }
  void unlock() RELEASE() { std::unique_lock<std::mutex>::unlock(); }
};

}  // namespace hookrelay
