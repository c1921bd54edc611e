#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace hookrelay::testing {

// The result of running a program to completion.
struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] is a path), feeding `input` on stdin, and waits for it (killing it after
// `timeout`). Extra environment variables in `env` are added to the current environment.
RunResult RunProgram(const std::vector<std::string>& argv, const std::string& input = {},
                     std::chrono::milliseconds timeout = std::chrono::seconds(60),
                     const std::map<std::string, std::string>& env = {});

// A child process that runs until stopped; its stdout and stderr go to files so a test can read
// what it printed so far. The destructor kills it (SIGKILL) if it still runs.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_dir,
               const std::map<std::string, std::string>& env = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Sends `sig` to the process.
  void Signal(int sig);
  // Waits up to `timeout` for it to exit; returns its exit code (-1 if killed by a signal,
  // -2 on timeout).
  int Wait(std::chrono::milliseconds timeout);
  bool Running();
  std::string Stdout() const;
  std::string Stderr() const;
  // Waits until stdout or stderr contains `needle`; false on timeout or exit.
  bool WaitForOutput(const std::string& needle, std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string out_path_, err_path_;
};

// A fresh temporary directory, removed (recursively) when the object is destroyed.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The report a sanitizer printed in a child's stderr (from its first line on), or "" when there
// is none. RunProgram and ~ChildProcess fail the running test with it: a sanitizer build
// (make test-sanitize) instruments the hookrelay binary the tests start, and a report there,
// at shutdown too, must fail the run like a report in the test itself.
std::string SanitizerReport(const std::string& err);

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& content);

}  // namespace hookrelay::testing
