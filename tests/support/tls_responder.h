#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace hookrelay::testing {

// A TLS endpoint on 127.0.0.1 (port 0) that a client cannot complete a delivery to, for the
// hostile-destination tests:
//  - kUntrustedCertificate: a real TLS server (OpenSSL) with a self-signed certificate for
//    127.0.0.1 made when it starts (a fresh P-256 key; nothing is read from disk). A client that
//    accepted it would get "200 OK"; one that verifies certificates aborts the handshake.
//  - kHandshakeFailure: reads the ClientHello and answers with a fatal handshake_failure alert,
//    then closes (a server that shares no protocol version or cipher with the client).
// Connections are served one at a time. Throws std::runtime_error when it cannot start.
class TlsResponder {
 public:
  enum class Mode { kUntrustedCertificate, kHandshakeFailure };
  explicit TlsResponder(Mode mode);
  ~TlsResponder();
  TlsResponder(const TlsResponder&) = delete;
  TlsResponder& operator=(const TlsResponder&) = delete;

  uint16_t port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_) + "/"; }
  // Connections accepted, and TLS handshakes that completed (kUntrustedCertificate).
  int connections() const { return connections_.load(); }
  int handshakes_completed() const { return completed_.load(); }

 private:
  void Serve(int connection);

  Mode mode_;
  int fd_ = -1;
  uint16_t port_ = 0;
  void* ctx_ = nullptr;  // SSL_CTX*
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> completed_{0};
  std::thread thread_;
};

}  // namespace hookrelay::testing
