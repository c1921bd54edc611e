#include "support/smtp_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace hookrelay::testing {

namespace fs = std::filesystem;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

SmtpServer::SmtpServer() : port_(FreePort()), maildir_(dir_.path() + "/mail") {
  process_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{"/usr/bin/python3", "-m", "aiosmtpd", "-n", "-l",
                               "127.0.0.1:" + std::to_string(port_), "-c",
                               "aiosmtpd.handlers.Mailbox", maildir_},
      dir_.path());
}

::testing::AssertionResult SmtpServer::Ready() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (!Accepts(port_) && process_->Running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (Accepts(port_) && process_->Running()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "aiosmtpd did not start (run scripts/install-deps): " << process_->Stderr();
}

std::vector<std::string> SmtpServer::Messages() const {
  std::vector<std::string> out;
  for (const char* sub : {"new", "cur"}) {
    fs::path p = fs::path(maildir_) / sub;
    std::error_code ec;
    if (!fs::is_directory(p, ec)) continue;
    for (const auto& e : fs::directory_iterator(p, ec)) {
      out.push_back(ReadFile(e.path().string()));
    }
  }
  return out;
}

std::string SmtpServer::Find(std::string_view needle) const {
  for (const auto& m : Messages()) {
    if (m.find(needle) != std::string::npos) return m;
  }
  return {};
}

}  // namespace hookrelay::testing
