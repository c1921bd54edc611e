#include "support/tls_responder.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <csignal>
#include <cstdlib>
#include <cstring>
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

std::string Pem(X509* cert) {
  BIO* b = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(b, cert);
  char* data = nullptr;
  const long n = BIO_get_mem_data(b, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(b);
  return out;
}

std::string Pem(EVP_PKEY* key) {
  BIO* b = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(b, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(b);
  return out;
}

void AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, issuer, cert, nullptr, nullptr, 0);
  if (X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, nid, value)) {
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }
}

// A certificate for `cn` with a fresh P-256 key, valid for an hour, signed by `issuer` (or by
// itself when null). Returns the certificate; its key in `key_out`. Both owned by the caller.
X509* MakeCert(const char* cn, X509* issuer, EVP_PKEY* issuer_key, bool ca, const char* san,
               EVP_PKEY** key_out) {
  static std::atomic<long> serial{100};
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  if (key == nullptr || cert == nullptr) throw std::runtime_error("TlsResponder: OpenSSL");
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial.fetch_add(1));
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
  X509* signer = issuer ? issuer : cert;
  if (ca) {
    AddExt(cert, signer, NID_basic_constraints, "critical,CA:TRUE");
    AddExt(cert, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    AddExt(cert, signer, NID_basic_constraints, "CA:FALSE");
  }
  if (san != nullptr) AddExt(cert, signer, NID_subject_alt_name, san);
  if (X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256()) <= 0) {
    throw std::runtime_error("TlsResponder: cannot sign");
  }
  *key_out = key;
  return cert;
}

std::string CommonName(X509* cert) {
  if (cert == nullptr) return "";
  char cn[256] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
  return cn;
}

}  // namespace

std::vector<std::string> TlsResponder::client_names() const {
  std::lock_guard<std::mutex> lock(mu_);
  return client_names_;
}

std::vector<std::string> TlsResponder::request_heads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return request_heads_;
}

TlsResponder::TlsResponder(Mode mode) : mode_(mode) {
  // OpenSSL writes to the socket with write(): an alert or answer to a client that has already
  // gone would otherwise end the test process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  if (mode_ == Mode::kClientCertificate) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == nullptr) throw std::runtime_error("TlsResponder: SSL_CTX_new");
    EVP_PKEY *ca_key = nullptr, *server_key = nullptr, *client_key = nullptr,
             *other_ca_key = nullptr, *other_key = nullptr;
    X509* ca = MakeCert("hookrelay test CA", nullptr, nullptr, true, nullptr, &ca_key);
    X509* server =
        MakeCert("127.0.0.1", ca, ca_key, false, "IP:127.0.0.1,DNS:localhost", &server_key);
    X509* client = MakeCert("hookrelay-client", ca, ca_key, false, nullptr, &client_key);
    X509* other_ca = MakeCert("untrusted test CA", nullptr, nullptr, true, nullptr, &other_ca_key);
    X509* other = MakeCert("untrusted-client", other_ca, other_ca_key, false, nullptr, &other_key);
    ca_pem_ = Pem(ca);
    client_cert_pem_ = Pem(client);
    client_key_pem_ = Pem(client_key);
    untrusted_cert_pem_ = Pem(other);
    untrusted_key_pem_ = Pem(other_key);
    const bool ok = SSL_CTX_use_certificate(ctx, server) == 1 &&
                    SSL_CTX_use_PrivateKey(ctx, server_key) == 1 &&
                    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca) == 1;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    for (X509* x : {ca, server, client, other_ca, other}) X509_free(x);
    for (EVP_PKEY* k : {ca_key, server_key, client_key, other_ca_key, other_key}) EVP_PKEY_free(k);
    if (!ok) {
      SSL_CTX_free(ctx);
      throw std::runtime_error("TlsResponder: cannot set up the client-certificate server");
    }
    ctx_ = ctx;
  }
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
      if (mode_ == Mode::kClientCertificate) {
        std::lock_guard<std::mutex> lock(mu_);
        open_.push_back(c);
        workers_.emplace_back([this, c] { ServeKeepAlive(c); });
        continue;  // the destructor shuts it down and closes it
      }
      Serve(c);
      ::close(c);
    }
  });
}

TlsResponder::~TlsResponder() {
  stop_.store(true);
  ::shutdown(fd_, SHUT_RDWR);
  thread_.join();
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int c : open_) ::shutdown(c, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (std::thread& w : workers) w.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int c : open_) ::close(c);
  }
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

namespace hookrelay::testing {

void TlsResponder::ServeKeepAlive(int c) {
  SSL* ssl = SSL_new(static_cast<SSL_CTX*>(ctx_));
  if (ssl == nullptr) return;
  SSL_set_fd(ssl, c);
  if (SSL_accept(ssl) != 1) {
    SSL_free(ssl);
    return;
  }
  completed_.fetch_add(1);
  X509* peer = SSL_get1_peer_certificate(ssl);
  const std::string cn = CommonName(peer);
  X509_free(peer);
  std::string in;
  char buf[8192];
  for (;;) {
    // One request: the head, then Content-Length bytes of body.
    size_t end;
    while ((end = in.find("\r\n\r\n")) == std::string::npos) {
      const int n = SSL_read(ssl, buf, sizeof buf);
      if (n <= 0) {
        // TLS 1.3: a refused client certificate is found here, after the client's handshake;
        // OpenSSL has sent the alert.
        SSL_free(ssl);
        return;
      }
      in.append(buf, static_cast<size_t>(n));
    }
    const std::string head = in.substr(0, end);
    size_t length = 0;
    std::string lower = head;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (size_t at = lower.find("\r\ncontent-length:"); at != std::string::npos) {
      length = std::strtoul(head.c_str() + at + 17, nullptr, 10);
    }
    while (in.size() < end + 4 + length) {
      const int n = SSL_read(ssl, buf, sizeof buf);
      if (n <= 0) {
        SSL_free(ssl);
        return;
      }
      in.append(buf, static_cast<size_t>(n));
    }
    in.erase(0, end + 4 + length);
    {
      std::lock_guard<std::mutex> lock(mu_);
      client_names_.push_back(cn);
      request_heads_.push_back(head);
    }
    static const char kOk[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    if (SSL_write(ssl, kOk, sizeof kOk - 1) <= 0) break;
  }
  SSL_free(ssl);
}

}  // namespace hookrelay::testing
