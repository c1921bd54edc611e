#pragma once

#include <pthread.h>
#include <time.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <thread>

#include "common/mutex.h"
#include "common/thread_annotations.h"

namespace hookrelay::transform {

// Watches the CPU time of threads running transforms, and calls a function when one has used its
// budget. One thread for any number of watched threads; it sleeps until the earliest moment a
// watched thread could have used its budget (CPU time never runs faster than wall time), reads
// that thread's CPU clock, and either fires or sleeps again for what is left. Nothing runs while
// nothing is armed. Thread-safe.
class Watchdog {
 public:
  using Token = uint64_t;

  Watchdog();
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  enum class Event {
    kTick,         // `tick` of wall time passed since arming or the last tick
    kBudgetSpent,  // the thread used its CPU budget; the last event of this arming
  };
  // Starts watching the calling thread: every `tick` of wall time (zero: never) `notify` gets
  // kTick, and once the thread has used `budget` of CPU time from now it gets kBudgetSpent.
  // `notify` runs on the watchdog's thread with the watchdog's lock held, so it must be quick
  // and must not call Arm or Disarm: setting a flag and JS_RequestInterruptCallback is what it
  // is for. Returns the token to give Disarm.
  Token Arm(std::chrono::nanoseconds budget, std::chrono::microseconds tick,
            std::function<void(Event)> notify) EXCLUDES(mu_);
  // Stops watching. After it returns, that arming's `notify` does not run again.
  void Disarm(Token token) EXCLUDES(mu_);

  // CPU time the calling thread has used so far.
  static std::chrono::nanoseconds ThreadCpuNow();

 private:
  struct Entry {
    clockid_t clock;
    std::chrono::nanoseconds cpu_deadline;  // on `clock`
    std::chrono::steady_clock::time_point next_check;
    std::chrono::microseconds tick;
    std::chrono::steady_clock::time_point next_tick;  // max() without ticks
    std::function<void(Event)> notify;
  };
  void Loop() EXCLUDES(mu_);

  Mutex mu_;
  std::condition_variable cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  Token next_token_ GUARDED_BY(mu_) = 1;
  std::map<Token, Entry> entries_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace hookrelay::transform
