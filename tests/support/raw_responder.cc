#include "support/raw_responder.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace hookrelay::testing {

RawResponder::RawResponder(std::vector<std::string> chunks, std::chrono::milliseconds every,
                           Then then)
    : chunks_(std::move(chunks)), every_(every), then_(then) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    throw std::runtime_error("RawResponder: cannot listen");
  }
  port_ = ntohs(a.sin_port);
  accept_ = std::thread([this] {
    for (;;) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::lock_guard lock(mu_);
      if (stop_) {
        ::close(c);
        return;
      }
      conns_.emplace_back([this, c] { Serve(c); });
    }
  });
}

RawResponder::~RawResponder() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  ::shutdown(fd_, SHUT_RDWR);
  accept_.join();
  for (std::thread& t : conns_) t.join();
  ::close(fd_);
}

void RawResponder::Serve(int c) {
  std::string in;
  char buf[4096];
  while (in.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = ::recv(c, buf, sizeof buf, 0);
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
  }
  std::unique_lock lock(mu_);
  for (const std::string& chunk : chunks_) {
    if (cv_.wait_for(lock, every_, [this] { return stop_; })) break;
    if (::send(c, chunk.data(), chunk.size(), MSG_NOSIGNAL) < 0) break;
  }
  if (then_ == Then::kReset) {
    linger l{1, 0};
    ::setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  } else {
    cv_.wait(lock, [this] { return stop_; });
  }
  ::close(c);
}

}  // namespace hookrelay::testing
