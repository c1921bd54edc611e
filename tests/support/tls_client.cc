#include "support/tls_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/ascii.h"

namespace hookrelay::testing {
namespace {

using Clock = std::chrono::steady_clock;

SSL* AsSsl(void* p) { return static_cast<SSL*>(p); }

std::chrono::milliseconds Left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? left : std::chrono::milliseconds(0);
}

// Waits for `events` on `fd` until `deadline`; false on timeout.
bool Wait(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int r = ::poll(&p, 1, static_cast<int>(Left(deadline).count()));
    if (r < 0 && errno == EINTR) continue;
    return r > 0;
  }
}

std::string LastOpenSslError() {
  const unsigned long err = ERR_peek_last_error();
  std::string out;
  if (err != 0) {
    const char* reason = ERR_reason_error_string(err);
    out = reason != nullptr ? reason : "error " + std::to_string(err);
  }
  ERR_clear_error();
  return out;
}

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

}  // namespace

TlsConnection::TlsConnection(uint16_t port, TlsClientOptions options)
    : host_(options.host), timeout_(options.timeout) {
  std::signal(SIGPIPE, SIG_IGN);  // OpenSSL writes with write(): a reset must not end the test
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    const std::string reason = std::strerror(errno);
    if (fd_ >= 0) ::close(fd_);
    throw std::runtime_error("TlsConnection: cannot connect to 127.0.0.1:" + std::to_string(port) +
                             ": " + reason);
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);

  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ctx_ = ctx;
  if (ctx == nullptr) throw std::runtime_error("TlsConnection: SSL_CTX_new");
  SSL_CTX_set_security_level(ctx, 0);
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);  // a close without close_notify is EOF
  if (options.min_version != 0) SSL_CTX_set_min_proto_version(ctx, options.min_version);
  if (options.max_version != 0) SSL_CTX_set_max_proto_version(ctx, options.max_version);
  if (!options.ciphers.empty() && SSL_CTX_set_cipher_list(ctx, options.ciphers.c_str()) != 1) {
    throw std::runtime_error("TlsConnection: bad cipher list " + options.ciphers);
  }
  if (!options.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, options.ca_file.c_str(), nullptr) != 1) {
      throw std::runtime_error("TlsConnection: cannot load CA " + options.ca_file);
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  if (!options.alpn.empty()) {
    std::string wire;
    for (const auto& p : options.alpn) wire += static_cast<char>(p.size()) + p;
    SSL_CTX_set_alpn_protos(ctx, reinterpret_cast<const unsigned char*>(wire.data()),
                            static_cast<unsigned>(wire.size()));
  }
  SSL* ssl = SSL_new(ctx);
  ssl_ = ssl;
  if (ssl == nullptr) throw std::runtime_error("TlsConnection: SSL_new");
  SSL_set_fd(ssl, fd_);
  if (IsIpLiteral(host_)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host_.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, host_.c_str());
    SSL_set1_host(ssl, host_.c_str());
  }
  const auto deadline = Clock::now() + timeout_;
  ERR_clear_error();
  for (;;) {
    const int r = SSL_connect(ssl);
    if (r == 1) {
      handshake_ok_ = true;
      return;
    }
    const int err = SSL_get_error(ssl, r);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      if (Wait(fd_, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) continue;
      handshake_error_ = "timed out";
      return;
    }
    handshake_error_ = LastOpenSslError();
    const long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK) {
      handshake_error_ += std::string(": ") + X509_verify_cert_error_string(verify);
    }
    if (handshake_error_.empty()) {
      handshake_error_ = err == SSL_ERROR_SYSCALL ? "connection closed" : "handshake failed";
    }
    closed_ = true;
    return;
  }
}

TlsConnection::~TlsConnection() {
  SSL_free(AsSsl(ssl_));
  SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
  if (fd_ >= 0) ::close(fd_);
}

std::string TlsConnection::peer_common_name() const {
  X509* cert = SSL_get0_peer_certificate(AsSsl(ssl_));
  if (cert == nullptr) return "";
  char cn[256] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
  return cn;
}

std::string TlsConnection::peer_serial() const {
  X509* cert = SSL_get0_peer_certificate(AsSsl(ssl_));
  if (cert == nullptr) return "";
  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
  char* hex = BN_bn2hex(bn);
  std::string out = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  BN_free(bn);
  return out;
}

std::string TlsConnection::protocol() const { return SSL_get_version(AsSsl(ssl_)); }

std::string TlsConnection::cipher() const {
  const char* name = SSL_get_cipher_name(AsSsl(ssl_));
  return name != nullptr ? name : "";
}

std::string TlsConnection::alpn() const {
  const unsigned char* data = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(AsSsl(ssl_), &data, &len);
  return std::string(reinterpret_cast<const char*>(data), data != nullptr ? len : 0);
}

bool TlsConnection::Write(std::string_view bytes) {
  if (!handshake_ok_ || closed_) return false;
  const auto deadline = Clock::now() + timeout_;
  size_t done = 0;
  while (done < bytes.size()) {
    const int r =
        SSL_write(AsSsl(ssl_), bytes.data() + done, static_cast<int>(bytes.size() - done));
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    const int err = SSL_get_error(AsSsl(ssl_), r);
    if ((err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) &&
        Wait(fd_, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
      continue;
    }
    ERR_clear_error();
    return false;
  }
  return true;
}

bool TlsConnection::ReadSome(std::chrono::milliseconds timeout) {
  if (!handshake_ok_ || closed_) return false;
  const auto deadline = Clock::now() + timeout;
  char buf[16384];
  for (;;) {
    const int r = SSL_read(AsSsl(ssl_), buf, sizeof buf);
    if (r > 0) {
      pending_.append(buf, static_cast<size_t>(r));
      return true;
    }
    const int err = SSL_get_error(AsSsl(ssl_), r);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      if (Wait(fd_, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) continue;
      return false;  // timed out
    }
    ERR_clear_error();
    closed_ = true;  // close_notify, EOF or reset
    return false;
  }
}

std::string TlsConnection::ReadUntil(std::string_view needle, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  size_t at;
  while ((at = pending_.find(needle)) == std::string::npos) {
    if (Left(deadline).count() == 0 || !ReadSome(Left(deadline))) {
      return std::exchange(pending_, std::string());
    }
  }
  std::string out = pending_.substr(0, at + needle.size());
  pending_.erase(0, at + needle.size());
  return out;
}

std::string TlsConnection::ReadUntilClose(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!closed_ && Left(deadline).count() > 0) ReadSome(Left(deadline));
  return std::exchange(pending_, std::string());
}

HttpResponse TlsConnection::Send(std::string_view method, std::string_view target,
                                 const HeaderList& headers, std::string_view body) {
  std::string request = std::string(method) + " " + std::string(target) + " HTTP/1.1\r\n";
  bool has_host = false;
  for (const auto& [name, value] : headers) {
    if (AsciiEqualsIgnoreCase(name, "host")) has_host = true;
    request += name + ": " + value + "\r\n";
  }
  if (!has_host) request += "Host: " + host_ + "\r\n";
  if (!body.empty() || method == "POST") {
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n";
  request += body;
  if (!Write(request)) throw std::runtime_error("TlsConnection: cannot send the request");

  const auto deadline = Clock::now() + timeout_;
  std::string head = ReadUntil("\r\n\r\n", timeout_);
  if (head.size() < 4 || head.compare(head.size() - 4, 4, "\r\n\r\n") != 0) {
    throw std::runtime_error("TlsConnection: no complete response head (got \"" + head + "\")");
  }
  HttpResponse response;
  size_t line_end = head.find("\r\n");
  const std::string status_line = head.substr(0, line_end);
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) {
    throw std::runtime_error("TlsConnection: bad status line \"" + status_line + "\"");
  }
  response.status = std::atoi(status_line.c_str() + 9);
  size_t pos = line_end + 2;
  while (pos < head.size() - 2) {
    const size_t end = head.find("\r\n", pos);
    const std::string line = head.substr(pos, end - pos);
    pos = end + 2;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    response.headers.emplace_back(line.substr(0, colon), value);
  }
  response.keep_alive = Lower(response.Header("Connection")) != "close";
  const std::string length = response.Header("Content-Length");
  const size_t want = length.empty() ? 0 : std::strtoul(length.c_str(), nullptr, 10);
  if (method == "HEAD") return response;
  while (pending_.size() < want) {
    if (Left(deadline).count() == 0 || !ReadSome(Left(deadline))) {
      throw std::runtime_error("TlsConnection: the response body was cut short");
    }
  }
  response.body = pending_.substr(0, want);
  pending_.erase(0, want);
  return response;
}

}  // namespace hookrelay::testing
