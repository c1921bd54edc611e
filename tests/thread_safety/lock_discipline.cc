// Compiled, not run, by the thread_safety_* ctest cases (tests/thread_safety/CMakeLists.txt):
// with clang++ -Wthread-safety -Werror it must compile as it is, and fail with the expected
// diagnostic when one of the BREAK_* macros re-creates a mistake the analysis is there to catch.
// So the check is shown to work, not only to be switched on.
#include <condition_variable>

#include "common/mutex.h"

namespace hookrelay {
namespace {

class Queue {
 public:
  void Push(int v) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    AddLocked(v);
    cv_.notify_one();
  }

  int Pop() EXCLUDES(mu_) {
    MutexLock lock(mu_);
#if defined(BREAK_PREDICATE)
    cv_.wait(lock, [this] { return count_ > 0; });  // the lambda does not say it holds mu_
#else
    cv_.wait(lock, [this]() REQUIRES(mu_) { return count_ > 0; });
#endif
    --count_;
    lock.unlock();  // slow work without the lock...
    Slow();
#if !defined(BREAK_RELOCK)
    lock.lock();  // ...then back under it
#endif
    return count_;
  }

#if defined(BREAK_STD_LOCK)
  void Clear() {
    std::lock_guard lock(mu_);  // invisible to the analysis: Mutex has no lock() to allow it
    count_ = 0;
  }
#endif

  int Size() EXCLUDES(mu_) {
#if !defined(BREAK_READ)
    MutexLock lock(mu_);
#endif
    return count_;
  }

  void Add(int v) EXCLUDES(mu_) {
#if !defined(BREAK_CALL)
    MutexLock lock(mu_);
#endif
    AddLocked(v);
  }

  void Held() REQUIRES(mu_) { mu_.AssertHeld(); }

  void Twice() EXCLUDES(mu_) {
    MutexLock lock(mu_);
#if defined(BREAK_DOUBLE_LOCK)
    MutexLock again(mu_);
#endif
    Held();
  }

 private:
  void AddLocked(int v) REQUIRES(mu_) { count_ += v; }
  static void Slow() {}

  Mutex mu_;
  std::condition_variable cv_;
  int count_ GUARDED_BY(mu_) = 0;
};

}  // namespace

int UseQueue() {
  Queue q;
  q.Push(1);
  q.Add(2);
  q.Twice();
  return q.Pop() + q.Size();
}

}  // namespace hookrelay
