#include "http/tls_context.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace hookrelay::http {
namespace {

namespace ssl = boost::asio::ssl;

// A certificate chain or a key is a few KiB; a larger file is not one (and is not read whole).
constexpr off_t kMaxPemFile = 1 << 20;

// What a reader of the config calls the two files, and the Status field of each.
struct FileRole {
  const char* label;  // "tls.cert"
  const char* field;  // "cert"
};
constexpr FileRole kCert{"tls.cert", "cert"};
constexpr FileRole kKey{"tls.key", "key"};

Status FileError(const FileRole& role, const std::string& path, const std::string& what) {
  return Status::InvalidArgument(std::string(role.label) + " " + path + ": " + what, role.field);
}

// The reason of OpenSSL's most recent error ("ee key too small"), or `fallback`; empties the
// thread's error queue either way, so nothing is left for the next TLS operation on this thread.
std::string TakeOpenSslReason(const char* fallback) {
  const unsigned long err = ERR_peek_last_error();
  const char* reason = err != 0 ? ERR_reason_error_string(err) : nullptr;
  std::string out = reason != nullptr ? reason : fallback;
  ERR_clear_error();
  return out;
}

// Never prompts on a terminal for a passphrase: an encrypted key fails to load instead.
int NoPassphrase(char*, int, int, void*) { return 0; }

// ALPN: "http/1.1" when the client offers it; otherwise no protocol is selected (the client then
// speaks HTTP/1.1 or gives up). Never "h2": the server speaks HTTP/1.1 only.
int SelectAlpn(SSL*, const unsigned char** out, unsigned char* out_len, const unsigned char* in,
               unsigned int in_len, void*) {
  constexpr std::string_view kHttp11 = "http/1.1";
  for (unsigned int i = 0; i < in_len;) {
    const unsigned int len = in[i];
    if (len == 0 || i + 1 + len > in_len) break;  // malformed list
    if (len == kHttp11.size() && std::memcmp(in + i + 1, kHttp11.data(), len) == 0) {
      *out = in + i + 1;
      *out_len = static_cast<unsigned char>(len);
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + len;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

// The whole of a PEM file, or an error naming it. `mode` gets the file's permission bits.
Result<std::string> ReadPemFile(const FileRole& role, const std::string& path, mode_t* mode) {
  if (path.empty()) {
    return Status::InvalidArgument(std::string(role.label) + ": no file given", role.field);
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FileError(role, path, std::string("cannot read: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return FileError(role, path, std::string("cannot read: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return FileError(role, path, "cannot read: Is a directory");
  if (!S_ISREG(st.st_mode)) return FileError(role, path, "not a regular file");
  if (st.st_size > kMaxPemFile) {
    return FileError(role, path, "larger than 1 MiB: not a PEM file");
  }
  *mode = st.st_mode;
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FileError(role, path, std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;  // shrank meanwhile
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return text;
}

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;

BioPtr MemoryBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// Loads the leaf certificate and the chain after it into `ctx` (as
// SSL_CTX_use_certificate_chain_file does, from memory). Returns the leaf.
Result<X509Ptr> UseCertificateChain(SSL_CTX* ctx, const std::string& path) {
  mode_t mode = 0;
  Result<std::string> text = ReadPemFile(kCert, path, &mode);
  if (!text.ok()) return text.status();
  BioPtr bio = MemoryBio(*text);
  if (!bio) return Status::Internal("tls.cert " + path + ": " + TakeOpenSslReason("out of memory"));
  X509Ptr leaf(PEM_read_bio_X509_AUX(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!leaf) {
    const bool has_block = text->find("-----BEGIN CERTIFICATE-----") != std::string::npos ||
                           text->find("-----BEGIN TRUSTED CERTIFICATE-----") != std::string::npos;
    std::string reason = TakeOpenSslReason("unreadable");
    return FileError(kCert, path,
                     has_block ? "its certificate is not valid PEM: " + reason
                               : "no PEM certificate in it (expected a -----BEGIN "
                                 "CERTIFICATE----- block)");
  }
  if (SSL_CTX_use_certificate(ctx, leaf.get()) != 1) {
    // e.g. "ee key too small", "ca md too weak" (OpenSSL's security level).
    return FileError(kCert, path, "the certificate cannot be used: " + TakeOpenSslReason("?"));
  }
  SSL_CTX_clear_chain_certs(ctx);
  for (int n = 2;; ++n) {
    X509Ptr ca(PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr));
    if (!ca) {
      const unsigned long err = ERR_peek_last_error();
      if (ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE) {
        ERR_clear_error();  // the end of the file
        break;
      }
      return FileError(kCert, path,
                       "certificate " + std::to_string(n) +
                           " of the chain is not valid PEM: " + TakeOpenSslReason("?"));
    }
    if (SSL_CTX_add0_chain_cert(ctx, ca.get()) != 1) {
      return FileError(kCert, path,
                       "certificate " + std::to_string(n) +
                           " of the chain cannot be used: " + TakeOpenSslReason("?"));
    }
    (void)ca.release();  // owned by ctx now
  }
  return leaf;
}

Status UsePrivateKey(SSL_CTX* ctx, X509* leaf, const TlsFiles& files) {
  const std::string& path = files.key_file;
  mode_t mode = 0;
  Result<std::string> text = ReadPemFile(kKey, path, &mode);
  if (!text.ok()) return text.status();
  if ((mode & S_IROTH) != 0) {
    spdlog::warn(
        "tls.key {} can be read by every user of this machine (mode {:04o}); make it "
        "0600 or 0640",
        path, static_cast<unsigned>(mode & 07777));
  }
  PkeyPtr key;
  bool encrypted = false;
  {
    BioPtr bio = MemoryBio(*text);
    if (bio) key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
    encrypted = text->find("ENCRYPTED") != std::string::npos;
    OPENSSL_cleanse(text->data(), text->size());
  }
  if (!key) {
    ERR_clear_error();
    return FileError(kKey, path,
                     encrypted ? "the key is encrypted and hookrelay cannot ask for its "
                                 "passphrase; store it unencrypted (openssl pkey -in KEY -out "
                                 "KEY.plain) with mode 0600"
                               : "no PEM private key in it (expected a -----BEGIN PRIVATE "
                                 "KEY----- block)");
  }
  // Checked before SSL_CTX_use_PrivateKey, whose own check depends on the key's type.
  if (X509_check_private_key(leaf, key.get()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument(
        "tls.key " + path + " does not match tls.cert " + files.cert_file, kKey.field);
  }
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1) {
    return FileError(kKey, path, "the key cannot be used: " + TakeOpenSslReason("?"));
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument(
        "tls.key " + path + " does not match tls.cert " + files.cert_file, kKey.field);
  }
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<ssl::context>> LoadTlsContext(const TlsFiles& files) {
  std::shared_ptr<ssl::context> context;
  try {
    context = std::make_shared<ssl::context>(ssl::context::tls_server);
  } catch (const boost::system::system_error& e) {
    return Status::Internal(std::string("cannot create a TLS context: ") + e.what());
  }
  SSL_CTX* ctx = context->native_handle();
  const std::string ciphers(kTls12Ciphers);
  const bool configured = SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) == 1 &&
                          SSL_CTX_set_cipher_list(ctx, ciphers.c_str()) == 1 &&
                          SSL_CTX_set1_groups_list(ctx, "X25519:prime256v1:secp384r1") == 1 &&
                          SSL_CTX_set_dh_auto(ctx, 1) == 1;  // the DHE suites: RFC 7919 groups
  if (!configured) {
    return Status::Internal("cannot configure the TLS context: " + TakeOpenSslReason("?"));
  }
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  // Keep-alive connections mostly wait: give back OpenSSL's record buffers while they do.
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_alpn_select_cb(ctx, SelectAlpn, nullptr);

  Result<X509Ptr> leaf = UseCertificateChain(ctx, files.cert_file);
  if (!leaf.ok()) return leaf.status();
  if (Status key = UsePrivateKey(ctx, leaf->get(), files); !key.ok()) return key;
  ERR_clear_error();
  return context;
}

Status CheckTlsFiles(const TlsFiles& files) { return LoadTlsContext(files).status(); }

}  // namespace hookrelay::http
