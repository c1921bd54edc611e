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
// budget. One thread for any number of watched threads. While anything was armed in the last
// kLinger it wakes every kPoll, and reads a watched thread's CPU clock only once that thread
// could have used its budget (CPU time never runs faster than wall time); so a budget is seen
// spent at most kPoll late, and arming costs no wake-up of the watchdog (a transform call takes
// tens of microseconds: waking a thread on each would cost as much again). After kLinger with
// nothing armed it sleeps until the next Arm. Thread-safe.
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
  static constexpr std::chrono::milliseconds kPoll{1};
  static constexpr std::chrono::milliseconds kLinger{200};

  // Starts watching the calling thread, whose CPU clock read `cpu_now` (ThreadCpuNow()) just
  // before: every `tick` of wall time (zero: never; kPoll at the finest) `notify` gets kTick, and
  // once the thread has used `budget` of CPU time from `cpu_now` it gets kBudgetSpent.
  // `notify` runs on the watchdog's thread with the watchdog's lock held, so it must be quick
  // and must not call Arm or Disarm: setting a flag and JS_RequestInterruptCallback is what it
  // is for. Returns the token to give Disarm.
  Token Arm(std::chrono::nanoseconds budget, std::chrono::microseconds tick,
            std::function<void(Event)> notify, std::chrono::nanoseconds cpu_now) EXCLUDES(mu_);
  // Gives that arming `more` CPU time (work done for the caller, not by what it runs).
  void Extend(Token token, std::chrono::nanoseconds more) EXCLUDES(mu_);
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
  bool idle_ GUARDED_BY(mu_) = false;  // asleep until an Arm wakes it
  Token next_token_ GUARDED_BY(mu_) = 1;
  std::map<Token, Entry> entries_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace hookrelay::transform
