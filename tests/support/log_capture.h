#pragma once

#include <memory>
#include <string>

namespace spdlog {
class logger;
}

namespace hookrelay::testing {

// Captures what library code logs through spdlog while it lives: the default logger is replaced
// by one writing "<level> <message>" lines into memory (every level), and restored at the end.
// text() may be called while other threads log. One at a time per process.
class LogCapture {
 public:
  LogCapture();
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // Everything logged so far.
  std::string text() const;

  class Sink;

 private:
  std::shared_ptr<Sink> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace hookrelay::testing
