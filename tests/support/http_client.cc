#include "support/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace hookrelay::testing {
namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool HasField(const HeaderList& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) return true;
  }
  return false;
}

}  // namespace

std::string HttpResponse::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return "";
}

bool HttpResponse::HasHeader(std::string_view name) const { return HasField(headers, name); }

struct HttpConnection::Impl {
  Impl(std::string host, std::chrono::milliseconds timeout)
      : host(std::move(host)), timeout(timeout) {}

  // Runs the operation started by `start` (which must complete by calling the handler it is
  // given) until it completes or `limit` passes; on timeout the socket's operations are
  // cancelled and operation_aborted is returned.
  template <typename Start>
  error_code Run(Start start, std::chrono::milliseconds limit, size_t* n = nullptr) {
    error_code result;
    bool done = false;
    start([&](const error_code& ec, size_t bytes) {
      result = ec;
      done = true;
      if (n) *n = bytes;
      timer.cancel();
    });
    timer.expires_after(limit);
    timer.async_wait([&](const error_code& ec) {
      if (!ec && !done) socket.cancel();
    });
    ioc.restart();
    ioc.run();
    return result;
  }

  std::string host;
  std::chrono::milliseconds timeout;
  asio::io_context ioc;
  tcp::socket socket{ioc};
  asio::steady_timer timer{ioc};
  boost::beast::flat_buffer buffer;
  std::string out;
};

HttpConnection::HttpConnection(uint16_t port, std::string host, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>(std::move(host), timeout)) {
  error_code ec;
  auto address = asio::ip::make_address(impl_->host, ec);
  if (ec) throw std::runtime_error("HttpConnection: bad host " + impl_->host);
  tcp::endpoint endpoint(address, port);
  ec = impl_->Run(
      [&](auto handler) {
        impl_->socket.async_connect(endpoint,
                                    [handler](const error_code& e) mutable { handler(e, 0); });
      },
      timeout);
  if (ec) {
    throw std::runtime_error("HttpConnection: connect to " + impl_->host + ":" +
                             std::to_string(port) + ": " + ec.message());
  }
}

HttpConnection::~HttpConnection() = default;

HttpResponse HttpConnection::Send(std::string_view method, std::string_view target,
                                  const HeaderList& headers, std::string_view body) {
  Impl& d = *impl_;
  std::string& out = d.out;
  out.clear();
  out.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
  if (!HasField(headers, "host")) out.append("Host: ").append(d.host).append("\r\n");
  for (const auto& [name, value] : headers)
    out.append(name).append(": ").append(value).append("\r\n");
  const bool wants_length =
      !body.empty() || method == "POST" || method == "PUT" || method == "PATCH";
  if (wants_length && !HasField(headers, "content-length") &&
      !HasField(headers, "transfer-encoding")) {
    out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  }
  out.append("\r\n").append(body);
  error_code ec = d.Run(
      [&](auto handler) { asio::async_write(d.socket, asio::buffer(out), handler); }, d.timeout);
  if (ec) throw std::runtime_error("HttpConnection: sending request: " + ec.message());

  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(boost::none);
  if (method == "HEAD") parser.skip(true);
  ec = d.Run([&](auto handler) { bhttp::async_read(d.socket, d.buffer, parser, handler); },
             d.timeout);
  if (ec) throw std::runtime_error("HttpConnection: reading response: " + ec.message());
  auto message = parser.release();
  HttpResponse response;
  response.status = static_cast<int>(message.result_int());
  for (const auto& field : message) {
    response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  response.body = std::move(message.body());
  response.keep_alive = message.keep_alive();
  return response;
}

bool HttpConnection::WaitForClose(std::chrono::milliseconds wait) {
  Impl& d = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  char scratch[4096];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds(0)) return false;
    error_code ec = d.Run(
        [&](auto handler) { d.socket.async_read_some(asio::buffer(scratch), handler); }, left);
    if (ec == asio::error::operation_aborted) return false;
    if (ec) return true;  // EOF or reset
  }
}

RawConnection::RawConnection(uint16_t port, const std::string& from) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) throw std::runtime_error(std::string("RawConnection: socket: ") + strerror(errno));
  if (!from.empty()) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    if (::inet_pton(AF_INET, from.c_str(), &local.sin_addr) != 1 ||
        ::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      std::string err = strerror(errno);
      ::close(fd_);
      fd_ = -1;
      throw std::runtime_error("RawConnection: bind to " + from + ": " + err);
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::string err = strerror(errno);
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("RawConnection: connect to port " + std::to_string(port) + ": " + err);
  }
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawConnection::Write(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void RawConnection::ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }

bool RawConnection::ReadSome(std::chrono::milliseconds timeout) {
  if (closed_) return false;
  pollfd p{fd_, POLLIN, 0};
  int r = ::poll(&p, 1, static_cast<int>(timeout.count()));
  if (r <= 0) return false;
  char buf[16384];
  ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
  if (n <= 0) {
    closed_ = true;
    return false;
  }
  pending_.append(buf, static_cast<size_t>(n));
  return true;
}

std::string RawConnection::ReadUntil(std::string_view needle, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    size_t at = pending_.find(needle);
    if (at != std::string::npos) {
      std::string out = pending_.substr(0, at + needle.size());
      pending_.erase(0, at + needle.size());
      return out;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds(0) || !ReadSome(left)) {
      if (!closed_ && left > std::chrono::milliseconds(0)) continue;  // poll interrupted
      return std::exchange(pending_, std::string());
    }
  }
}

std::string RawConnection::ReadUntilClose(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!closed_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds(0)) break;
    ReadSome(left);
  }
  return std::exchange(pending_, std::string());
}

std::string SendRaw(uint16_t port, std::string_view bytes, std::chrono::milliseconds timeout) {
  RawConnection c(port);
  c.Write(bytes);
  return c.ReadUntilClose(timeout);
}

int StatusOf(std::string_view raw) {
  if (raw.size() < 12 || raw.substr(0, 9) != "HTTP/1.1 ") return 0;
  return std::stoi(std::string(raw.substr(9, 3)));
}

int CountResponses(std::string_view raw) {
  int n = 0;
  for (size_t at = raw.find("HTTP/1.1 "); at != std::string_view::npos;
       at = raw.find("HTTP/1.1 ", at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace hookrelay::testing
