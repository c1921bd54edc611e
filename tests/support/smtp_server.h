#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/process.h"

namespace hookrelay::testing {

// A port that was free a moment ago (bind to port 0, read it, close).
int FreePort();
// True when something accepts TCP connections on 127.0.0.1:port.
bool Accepts(int port);

// A real SMTP server (Debian's python3-aiosmtpd) storing what it receives in a maildir.
class SmtpServer {
 public:
  SmtpServer();
  // Waits until it accepts connections; false (with its output) when it does not start.
  ::testing::AssertionResult Ready();
  std::string url() const { return "smtp://127.0.0.1:" + std::to_string(port_); }
  // Every message delivered so far, in no particular order.
  std::vector<std::string> Messages() const;
  // The first message containing `needle`, or "".
  std::string Find(std::string_view needle) const;

 private:
  TempDir dir_;
  int port_;
  std::string maildir_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace hookrelay::testing
