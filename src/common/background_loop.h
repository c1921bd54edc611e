#pragma once

#include <condition_variable>
#include <functional>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/thread_annotations.h"

namespace hookrelay {

// A thread that runs a pass now and then, as userver's PeriodicTask does: the first pass at
// Start(), each next one when the pass before asked for it (the wait it returns), when RunNow()
// is called, or never once Stop() was. Every background job of hookrelay (retention, the replay
// runner, the rejection recorder, the catalog's refresh) is one of these, so starting, waking and
// stopping are written once.
//
// Waits go through the injected clock: with a FakeClock the next pass runs when a test moves the
// time past it (FakeClock::AwaitWaiters tells the loop is asleep). Give SystemClock::Instance()
// for a loop that must wait in real time whatever a test's clock says.
//
// Thread-safe. The clock must outlive the loop; the pass must not call Stop().
class BackgroundLoop {
 public:
  // One pass; returns how long to wait before the next (kNoTimer: until RunNow or Stop).
  using Pass = std::function<Duration()>;
  static constexpr Duration kNoTimer = std::chrono::hours(24 * 365);

  BackgroundLoop(std::string thread_name, const Clock& clock);
  // Stops the thread if it runs.
  ~BackgroundLoop();
  BackgroundLoop(const BackgroundLoop&) = delete;
  BackgroundLoop& operator=(const BackgroundLoop&) = delete;

  // Starts the thread; its first pass runs at once. REQUIRES: not started, not stopped.
  void Start(Pass pass);
  // The next pass starts without waiting (after the running one ends, if one runs); a pass's
  // Sleep returns early. Calls before the next pass starts count once.
  void RunNow();
  // Stops the thread and waits for it: a running pass runs to its end (it sees stopping() and
  // its Sleep and Pause return at once), no wait is waited out. Idempotent; no start after it.
  void Stop();
  bool stopping() const;

  // For a pass: waits `d` on the clock; returns early (true) on RunNow, and false at once when
  // stopping, before or during the wait.
  bool Sleep(Duration d);
  // For a pass: waits `d` of real time (not the clock's: it lets other threads run now, whatever
  // time a test's clock says), or until Stop; false when stopping.
  bool Pause(Duration d);

 private:
  void Run();

  const std::string thread_name_;
  const Clock& clock_;
  Pass pass_;  // set by Start, before the thread starts
  std::thread thread_;

  mutable Mutex mu_;
  std::condition_variable cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool run_now_ GUARDED_BY(mu_) = false;
};

}  // namespace hookrelay
