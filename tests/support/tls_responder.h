#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hookrelay::testing {

// A TLS endpoint on 127.0.0.1 (port 0) that a client cannot complete a delivery to, for the
// hostile-destination tests:
//  - kUntrustedCertificate: a real TLS server (OpenSSL) with a self-signed certificate for
//    127.0.0.1 made when it starts (a fresh P-256 key; nothing is read from disk). A client that
//    accepted it would get "200 OK"; one that verifies certificates aborts the handshake.
//  - kHandshakeFailure: reads the ClientHello and answers with a fatal handshake_failure alert,
//    then closes (a server that shares no protocol version or cipher with the client).
//  - kClientCertificate: a server that requires a client certificate. It makes a test CA, a
//    server certificate for 127.0.0.1 signed by it (a client trusting ca_pem() verifies it), a
//    client certificate the CA signed (client_cert_pem/client_key_pem, CN "hookrelay-client")
//    and one signed by another CA it does not trust (untrusted_cert_pem/untrusted_key_pem, CN
//    "untrusted-client"). A client without a certificate, or with the untrusted one, is refused
//    with a TLS alert (TLS 1.3: after the client's side of the handshake). It answers every
//    request "200 OK" over HTTP/1.1 with keep-alive, each connection on its own thread.
// The other modes serve connections one at a time. Throws std::runtime_error when it cannot
// start.
class TlsResponder {
 public:
  enum class Mode { kUntrustedCertificate, kHandshakeFailure, kClientCertificate };
  explicit TlsResponder(Mode mode);
  ~TlsResponder();
  TlsResponder(const TlsResponder&) = delete;
  TlsResponder& operator=(const TlsResponder&) = delete;

  uint16_t port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_) + "/"; }
  // Connections accepted, and TLS handshakes that completed (kUntrustedCertificate).
  int connections() const { return connections_.load(); }
  int handshakes_completed() const { return completed_.load(); }

  // kClientCertificate: the PEM texts described above.
  const std::string& ca_pem() const { return ca_pem_; }
  const std::string& client_cert_pem() const { return client_cert_pem_; }
  const std::string& client_key_pem() const { return client_key_pem_; }
  const std::string& untrusted_cert_pem() const { return untrusted_cert_pem_; }
  const std::string& untrusted_key_pem() const { return untrusted_key_pem_; }
  // kClientCertificate: for every request answered, the CN of the client certificate its
  // connection presented, and the request's head (request line and headers), in order.
  std::vector<std::string> client_names() const;
  std::vector<std::string> request_heads() const;

 private:
  void Serve(int connection);
  void ServeKeepAlive(int connection);

  Mode mode_;
  int fd_ = -1;
  uint16_t port_ = 0;
  void* ctx_ = nullptr;  // SSL_CTX*
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> completed_{0};
  std::thread thread_;
  std::string ca_pem_, client_cert_pem_, client_key_pem_, untrusted_cert_pem_, untrusted_key_pem_;
  mutable std::mutex mu_;
  std::vector<std::thread> workers_;  // kClientCertificate: one per connection
  std::vector<int> open_;             // their sockets, shut down by the destructor
  std::vector<std::string> client_names_;
  std::vector<std::string> request_heads_;
};

}  // namespace hookrelay::testing
