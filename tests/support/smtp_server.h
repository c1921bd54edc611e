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

// A real SMTP server (Debian's python3-aiosmtpd, driven by tests/support/smtp_server.py) storing
// what it receives in a maildir. Optionally it offers STARTTLS with a fresh self-signed
// certificate for 127.0.0.1 (and then refuses mail commands before it), and requires AUTH with
// one username and password.
class SmtpServer {
 public:
  struct Options {
    bool starttls = false;
    std::string username;  // non-empty: AUTH required (over TLS with starttls)
    std::string password;
  };
  SmtpServer() : SmtpServer(Options{}) {}
  explicit SmtpServer(Options options);
  // Waits until it accepts connections; false (with its output) when it does not start.
  ::testing::AssertionResult Ready();
  std::string url() const { return "smtp://127.0.0.1:" + std::to_string(port_); }
  // With starttls: the PEM certificate the server presents (its own CA).
  std::string ca_file() const { return dir_.path() + "/cert.pem"; }
  // Every message delivered so far, in no particular order.
  std::vector<std::string> Messages() const;
  // The first message containing `needle`, or "".
  std::string Find(std::string_view needle) const;
  // One line per AUTH attempt: "<mechanism> <login> ok|refused tls|plain".
  std::vector<std::string> Logins() const;

 private:
  TempDir dir_;
  int port_;
  std::string maildir_;
  std::string setup_error_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace hookrelay::testing
