#include "support/smtp_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "support/wait.h"

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

SmtpServer::SmtpServer(Options options) : port_(FreePort()), maildir_(dir_.path() + "/mail") {
  std::vector<std::string> argv{"/usr/bin/python3", HOOKRELAY_TEST_SUPPORT_DIR "/smtp_server.py",
                                "--port",           std::to_string(port_),
                                "--maildir",        maildir_};
  if (options.starttls) {
    // A certificate for 127.0.0.1, valid for a day: what the client must be told to trust.
    RunResult openssl =
        RunProgram({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    dir_.path() + "/key.pem", "-out", ca_file(), "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1"});
    if (openssl.exit_code != 0) {
      setup_error_ =
          "openssl could not make a certificate (run scripts/install-deps): " + openssl.err;
      return;
    }
    argv.insert(argv.end(), {"--cert", ca_file(), "--key", dir_.path() + "/key.pem"});
  }
  if (!options.username.empty()) {
    argv.insert(argv.end(), {"--user", options.username, "--password", options.password, "--log",
                             dir_.path() + "/logins"});
  }
  process_ = std::make_unique<ChildProcess>(argv, dir_.path());
}

::testing::AssertionResult SmtpServer::Ready() {
  if (!process_) return ::testing::AssertionFailure() << setup_error_;
  (void)test::WaitFor([&] { return Accepts(port_) || !process_->Running(); },
                      std::chrono::seconds(15), std::chrono::milliseconds(10));
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

std::vector<std::string> SmtpServer::Logins() const {
  std::vector<std::string> out;
  std::istringstream in(ReadFile(dir_.path() + "/logins"));
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string SmtpServer::Find(std::string_view needle) const {
  for (const auto& m : Messages()) {
    if (m.find(needle) != std::string::npos) return m;
  }
  return {};
}

}  // namespace hookrelay::testing
