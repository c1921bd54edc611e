#include "support/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/wait.h"

namespace hookrelay::testing {
namespace {

std::vector<char*> CArgs(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

void SetEnv(const std::map<std::string, std::string>& env) {
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
}

}  // namespace

RunResult RunProgram(const std::vector<std::string>& argv, const std::string& input,
                     std::chrono::milliseconds timeout,
                     const std::map<std::string, std::string>& env) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe(in_pipe) || pipe(out_pipe) || pipe(err_pipe)) throw std::runtime_error("pipe failed");
  auto args = CArgs(argv);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      close(fd);
    }
    SetEnv(env);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  // Feed stdin from a thread so a child that writes a lot before reading cannot deadlock us.
  std::thread feeder([fd = in_pipe[1], &input] {
    signal(SIGPIPE, SIG_IGN);
    size_t off = 0;
    while (off < input.size()) {
      ssize_t n = write(fd, input.data() + off, input.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(fd);
  });
  RunResult result;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 && !killed) {
      kill(pid, SIGKILL);
      killed = true;
    }
    int r = poll(fds, 2, killed ? 1000 : static_cast<int>(std::max<int64_t>(1, left.count())));
    if (r < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  feeder.join();
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (std::string report = SanitizerReport(result.err); !report.empty()) {
    ADD_FAILURE() << argv[0] << " printed a sanitizer report:\n" << report;
  }
  return result;
}

std::string SanitizerReport(const std::string& err) {
  for (const char* marker : {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                             "WARNING: ThreadSanitizer", "runtime error: "}) {
    size_t at = err.find(marker);
    if (at == std::string::npos) continue;
    size_t line = err.rfind('\n', at);
    return err.substr(line == std::string::npos ? 0 : line + 1);
  }
  return "";
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_dir,
                           const std::map<std::string, std::string>& env) {
  static int counter = 0;
  std::string stem = log_dir + "/proc" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  out_path_ = stem + ".out";
  err_path_ = stem + ".err";
  auto args = CArgs(argv);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out, 1);
    dup2(err, 2);
    SetEnv(env);
    execv(args[0], args.data());
    _exit(127);
  }
}

ChildProcess::~ChildProcess() {
  if (!reaped_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
  if (std::string report = SanitizerReport(Stderr()); !report.empty()) {
    ADD_FAILURE() << "child " << pid_ << " printed a sanitizer report:\n" << report;
  }
}

void ChildProcess::Signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

bool ChildProcess::Running() {
  if (reaped_) return false;
  pid_t r = waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) reaped_ = true;
  return !reaped_;
}

int ChildProcess::Wait(std::chrono::milliseconds timeout) {
  if (!test::WaitFor([&] { return !Running(); }, timeout, std::chrono::milliseconds(5))) return -2;
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

std::string ChildProcess::Stdout() const { return ReadFile(out_path_); }
std::string ChildProcess::Stderr() const { return ReadFile(err_path_); }

bool ChildProcess::WaitForOutput(const std::string& needle, std::chrono::milliseconds timeout) {
  auto found = [&] {
    return Stdout().find(needle) != std::string::npos || Stderr().find(needle) != std::string::npos;
  };
  (void)test::WaitFor([&] { return found() || !Running(); }, timeout, std::chrono::milliseconds(5));
  return found();
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "hookrelay-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

}  // namespace hookrelay::testing
