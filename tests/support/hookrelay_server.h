#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/process.h"

namespace hookrelay::testing {

// The real `hookrelay serve` binary on 127.0.0.1 with a free port, a config file and a data
// directory of the test's own.
class HookrelayServer {
 public:
  // The master key given to servers on PostgreSQL unless Options::env sets one (32 bytes of
  // 0x01 in base64).
  static constexpr const char* kTestMasterKey = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";
  struct Options {
    std::string config_toml;  // written to <dir>/hookrelay.toml and passed with --config
    std::string data_dir;     // required
    std::vector<std::string> extra_args;
    std::map<std::string, std::string> env;
  };

  // Starts the server and waits until it prints its URL. Check ok() / output() on failure.
  explicit HookrelayServer(Options options);
  ~HookrelayServer();

  bool ok() const { return port_ != 0; }
  uint16_t port() const { return port_; }
  const std::string& url() const { return url_; }
  pid_t pid() const { return process_->pid(); }
  std::string output() const;         // stdout + stderr so far
  std::string stdout_output() const;  // what it printed for the person who started it
  std::string stderr_output() const;  // its log (and fatal errors)

  // SIGTERM and wait; returns the exit code (-2 on timeout).
  int Stop(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // SIGKILL: a crash.
  void Kill();

 private:
  Options options_;
  std::unique_ptr<ChildProcess> process_;
  uint16_t port_ = 0;
  std::string url_;
};

}  // namespace hookrelay::testing
