#pragma once

// Waiting in tests: for a condition, with a deadline, never for a fixed time.
//
//   ASSERT_TRUE(test::WaitFor([&] { return sink.Count() == 3; }));
//
// The timeout is a bound on a hang, not a measurement: generous (20 s) so a loaded CI machine
// does not fail a test that is merely slow. A test that needs time itself to pass (a window that
// must elapse in real time) sleeps, and says why in a comment; components with an injected Clock
// are tested on a FakeClock instead (see docs/delivery.md, "Testing on simulated time").

#include <chrono>
#include <thread>

namespace hookrelay::test {

// Evaluates `pred` every `poll` until it returns true (true) or `timeout` of real time passed
// (false; `pred` is evaluated one last time then).
template <typename Pred>
bool WaitFor(Pred&& pred, std::chrono::milliseconds timeout = std::chrono::seconds(20),
             std::chrono::milliseconds poll = std::chrono::milliseconds(2)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(poll);  // the polling interval, not a wait for an event
  }
  return static_cast<bool>(pred());
}

}  // namespace hookrelay::test
