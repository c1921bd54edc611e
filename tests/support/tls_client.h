#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/http_client.h"

namespace hookrelay::testing {

struct TlsClientOptions {
  // Verify the server's certificate against this CA file (and its name against `host`). Empty:
  // accept any certificate.
  std::string ca_file;
  // Sent as SNI and checked against the certificate (an IP literal is checked as an IP address).
  std::string host = "127.0.0.1";
  // Protocol versions to offer (TLS1_2_VERSION…); 0: OpenSSL's default bounds.
  int min_version = 0;
  int max_version = 0;
  std::string ciphers;  // TLS 1.2 cipher list; empty: OpenSSL's default
  // ALPN protocols to offer ("h2", "http/1.1"); empty: no ALPN extension.
  std::vector<std::string> alpn;
  // Bounds the connect, the handshake, and each Send.
  std::chrono::milliseconds timeout = std::chrono::seconds(10);
};

// A blocking TLS client connection to 127.0.0.1 (OpenSSL) for tests of a TLS server, at security
// level 0 so that it would take whatever a misconfigured server offered. Connects and does the
// handshake in the constructor; a failed TCP connect throws std::runtime_error, a failed
// handshake does not (see handshake_ok). Not thread-safe.
class TlsConnection {
 public:
  explicit TlsConnection(uint16_t port, TlsClientOptions options = {});
  ~TlsConnection();
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;

  bool handshake_ok() const { return handshake_ok_; }
  // OpenSSL's reason when the handshake failed ("certificate verify failed: certificate has
  // expired", "tlsv1 alert protocol version"); empty after a successful one.
  const std::string& handshake_error() const { return handshake_error_; }
  // After a handshake: the server certificate's subject CN and serial number (hex), the protocol
  // ("TLSv1.3"), the cipher, and the ALPN protocol selected ("" when none).
  std::string peer_common_name() const;
  std::string peer_serial() const;
  std::string protocol() const;
  std::string cipher() const;
  std::string alpn() const;

  // Sends one request (adding Host, and Content-Length when there is a body) and reads its
  // response (Content-Length framed). Throws std::runtime_error when the connection fails.
  HttpResponse Send(std::string_view method, std::string_view target,
                    const HeaderList& headers = {}, std::string_view body = {});

  // Sends all of `bytes`; false when the connection failed.
  bool Write(std::string_view bytes);
  // Reads until `needle` has come, the peer closes, or `timeout` passes; returns what was read up
  // to and including the needle (all of it when it never came).
  std::string ReadUntil(std::string_view needle, std::chrono::milliseconds timeout);
  // Reads until the peer closes or `timeout` passes; returns everything not yet returned.
  std::string ReadUntilClose(std::chrono::milliseconds timeout);
  // True once the peer closed (or reset) the connection.
  bool closed() const { return closed_; }

 private:
  // Reads once, waiting up to `timeout`; false on timeout, close or error.
  bool ReadSome(std::chrono::milliseconds timeout);

  int fd_ = -1;
  void* ctx_ = nullptr;  // SSL_CTX*
  void* ssl_ = nullptr;  // SSL*
  std::string host_;
  std::chrono::milliseconds timeout_;
  bool handshake_ok_ = false;
  std::string handshake_error_;
  bool closed_ = false;
  std::string pending_;
};

}  // namespace hookrelay::testing
