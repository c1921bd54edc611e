#include "transform/watchdog.h"

#include <algorithm>
#include <utility>

#include "common/thread_name.h"

namespace hookrelay::transform {
namespace {

std::chrono::nanoseconds CpuNow(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

}  // namespace

Watchdog::Watchdog() : thread_([this] { Loop(); }) {}

Watchdog::~Watchdog() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::chrono::nanoseconds Watchdog::ThreadCpuNow() { return CpuNow(CLOCK_THREAD_CPUTIME_ID); }

Watchdog::Token Watchdog::Arm(std::chrono::nanoseconds budget, std::chrono::microseconds tick,
                              std::function<void(Event)> notify, std::chrono::nanoseconds cpu_now) {
  clockid_t clock{};
  // The calling thread's CPU clock, readable from the watchdog's thread (CLOCK_THREAD_CPUTIME_ID
  // would read the watchdog's own).
  if (pthread_getcpuclockid(pthread_self(), &clock) != 0) clock = CLOCK_THREAD_CPUTIME_ID;
  Token token;
  bool wake = false;
  {
    MutexLock lock(mu_);
    token = next_token_++;
    const auto now = std::chrono::steady_clock::now();
    entries_.emplace(
        token, Entry{clock, cpu_now + budget,
                     now + std::chrono::duration_cast<std::chrono::microseconds>(budget), tick,
                     tick.count() > 0 ? now + tick : std::chrono::steady_clock::time_point::max(),
                     std::move(notify)});
    wake = idle_;
  }
  if (wake) cv_.notify_all();
  return token;
}

void Watchdog::Extend(Token token, std::chrono::nanoseconds more) {
  MutexLock lock(mu_);
  if (auto it = entries_.find(token); it != entries_.end()) {
    it->second.cpu_deadline += more;
    // The next check was planned from the old deadline: a check made while the budget was
    // extended (Sandbox's Uncharged adds an hour) put it an hour away, so a budget given back
    // afterwards would not be watched until then (an endless loop ran on; seen under ASan, where
    // making a realm outlasts the 50 ms before the first check). Look again at the next poll.
    it->second.next_check = std::chrono::steady_clock::now();
  }
}

void Watchdog::Disarm(Token token) {
  MutexLock lock(mu_);
  entries_.erase(token);
}

void Watchdog::Loop() {
  NameThisThread("hr-js-watchdog");
  MutexLock lock(mu_);
  auto last_armed = std::chrono::steady_clock::now();
  while (!stop_) {
    const auto now = std::chrono::steady_clock::now();
    if (!entries_.empty()) {
      last_armed = now;
    } else if (now - last_armed >= kLinger) {
      idle_ = true;
      cv_.wait(lock);
      idle_ = false;
      last_armed = std::chrono::steady_clock::now();
      continue;
    }
    for (auto it = entries_.begin(); it != entries_.end();) {
      Entry& e = it->second;
      if (e.next_tick <= now) {
        e.notify(Event::kTick);
        e.next_tick = now + e.tick;
      }
      if (e.next_check > now) {
        ++it;
        continue;
      }
      const std::chrono::nanoseconds used = CpuNow(e.clock);
      if (used >= e.cpu_deadline) {
        e.notify(Event::kBudgetSpent);
        it = entries_.erase(it);
        continue;
      }
      // The thread cannot use what is left sooner than that much wall time.
      e.next_check =
          now + std::chrono::duration_cast<std::chrono::microseconds>(e.cpu_deadline - used);
      ++it;
    }
    cv_.wait_until(lock, now + kPoll);
  }
}

}  // namespace hookrelay::transform
