#include "support/tls_responder.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <stdexcept>

namespace hookrelay::testing {
namespace {

// A self-signed certificate for 127.0.0.1 (subject and SAN), valid for an hour, with its key.
bool MakeSelfSigned(SSL_CTX* ctx) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  bool ok = key != nullptr && cert != nullptr;
  if (ok) {
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 14);
    X509_gmtime_adj(X509_getm_notBefore(cert), -60);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, cert, cert, nullptr, nullptr, 0);
    if (X509_EXTENSION* san =
            X509V3_EXT_conf_nid(nullptr, &v3, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost")) {
      X509_add_ext(cert, san, -1);
      X509_EXTENSION_free(san);
    }
    ok = X509_sign(cert, key, EVP_sha256()) > 0 && SSL_CTX_use_certificate(ctx, cert) == 1 &&
         SSL_CTX_use_PrivateKey(ctx, key) == 1;
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  return ok;
}

}  // namespace

TlsResponder::TlsResponder(Mode mode) : mode_(mode) {
  if (mode_ == Mode::kUntrustedCertificate) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == nullptr || !MakeSelfSigned(ctx)) {
      SSL_CTX_free(ctx);
      throw std::runtime_error("TlsResponder: cannot make a self-signed certificate");
    }
    ctx_ = ctx;
  }
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
    throw std::runtime_error("TlsResponder: cannot listen");
  }
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] {
    for (;;) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0 || stop_.load()) {
        if (c >= 0) ::close(c);
        return;
      }
      connections_.fetch_add(1);
      // A client that goes quiet does not hold the responder (nor its destructor) for long.
      timeval tv{2, 0};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      ::setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      Serve(c);
      ::close(c);
    }
  });
}

TlsResponder::~TlsResponder() {
  stop_.store(true);
  ::shutdown(fd_, SHUT_RDWR);
  thread_.join();
  ::close(fd_);
  SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
}

void TlsResponder::Serve(int c) {
  if (mode_ == Mode::kHandshakeFailure) {
    char buf[4096];
    if (::recv(c, buf, sizeof buf, 0) <= 0) return;  // the ClientHello (or part of it)
    // A TLS 1.2 record: alert, length 2, level fatal (2), handshake_failure (40).
    const unsigned char alert[] = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28};
    (void)::send(c, alert, sizeof alert, MSG_NOSIGNAL);
    return;
  }
  SSL* ssl = SSL_new(static_cast<SSL_CTX*>(ctx_));
  if (ssl == nullptr) return;
  SSL_set_fd(ssl, c);
  if (SSL_accept(ssl) == 1) {
    completed_.fetch_add(1);
    char buf[4096];
    (void)SSL_read(ssl, buf, sizeof buf);
    static const char kOk[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    (void)SSL_write(ssl, kOk, sizeof kOk - 1);
    SSL_shutdown(ssl);
  }
  SSL_free(ssl);
}

}  // namespace hookrelay::testing
