#include "support/hookrelay_server.h"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <regex>

namespace hookrelay::testing {

#ifndef HOOKRELAY_BINARY
#error "HOOKRELAY_BINARY must be defined by the build"
#endif

HookrelayServer::HookrelayServer(Options options) : options_(std::move(options)) {
  std::vector<std::string> argv = {HOOKRELAY_BINARY, "serve",  "--listen",
                                   "127.0.0.1:0",    "--data", options_.data_dir};
  if (!options_.config_toml.empty()) {
    std::string path = options_.data_dir + ".toml";
    WriteFile(path, options_.config_toml);
    argv.push_back("--config");
    argv.push_back(path);
  }
  argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
  // Nodes on one PostgreSQL database share its master key (docs/secrets.md); each test's nodes
  // have data directories of their own, so a key made in one would not open the others'.
  const bool postgres = std::any_of(argv.begin(), argv.end(), [](const std::string& a) {
    return a.starts_with("postgres://") || a.starts_with("postgresql://");
  });
  if (postgres && !options_.env.contains("HOOKRELAY_MASTER_KEY")) {
    options_.env["HOOKRELAY_MASTER_KEY"] = kTestMasterKey;
  }
  std::filesystem::create_directories(options_.data_dir + ".logs");
  process_ = std::make_unique<ChildProcess>(argv, options_.data_dir + ".logs", options_.env);
  if (!process_->WaitForOutput("listening on http", std::chrono::seconds(30))) return;
  std::smatch m;
  std::string out = process_->Stdout();
  static const std::regex kUrl(R"(listening on (https?://127\.0\.0\.1:(\d+)))");
  if (std::regex_search(out, m, kUrl)) {
    url_ = m[1];
    port_ = static_cast<uint16_t>(std::stoi(m[2]));
  }
}

HookrelayServer::~HookrelayServer() {
#ifdef HOOKRELAY_SANITIZE
  // Under the sanitizers, stop the server as an operator would (SIGTERM), not with the
  // SIGKILL of ~ChildProcess, so that its shutdown and exit (LeakSanitizer) run checked too;
  // ~ChildProcess then fails the test on any report in its stderr.
  if (process_->Running()) Stop();
#endif
}

std::string HookrelayServer::output() const { return process_->Stdout() + process_->Stderr(); }
std::string HookrelayServer::stdout_output() const { return process_->Stdout(); }
std::string HookrelayServer::stderr_output() const { return process_->Stderr(); }

int HookrelayServer::Stop(std::chrono::milliseconds timeout) {
  process_->Signal(SIGTERM);
  return process_->Wait(timeout);
}

void HookrelayServer::Kill() {
  process_->Signal(SIGKILL);
  process_->Wait(std::chrono::seconds(10));
}

}  // namespace hookrelay::testing
