#pragma once

#include <string>
#include <vector>

#include "support/process.h"

namespace hookrelay::testing {

// A certificate authority for tests, made with the real `openssl` command-line tool (`openssl
// req`, `openssl ca`) in a temporary directory of its own, removed with it. Keys are P-256 unless
// asked for RSA; key files are written 0600. Throws std::runtime_error, with openssl's output,
// when a command fails (or when no openssl is installed).
class TestPki {
 public:
  // A self-signed root CA whose subject is CN=`name`, valid from a minute ago for two days.
  explicit TestPki(const std::string& name = "hookrelay test CA");
  // An intermediate CA (CN=`name`) issued by `parent`: what it issues chains up to parent's root.
  TestPki(TestPki& parent, const std::string& name);
  ~TestPki();
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  struct CertOptions {
    std::string common_name = "127.0.0.1";
    std::string san = "IP:127.0.0.1,DNS:localhost";  // subjectAltName; empty: none
    bool expired = false;  // valid only on 2020-01-01: every verifier finds it expired
    bool rsa = false;      // a 2048-bit RSA key instead of P-256 (for RSA-only cipher suites)
  };
  struct Issued {
    std::string cert_file;  // the certificate (PEM) alone
    std::string key_file;   // its private key (PEM, unencrypted)
    // What a server sends: the certificate, then this CA's when this CA is an intermediate
    // (a root's certificate is the client's to have).
    std::string chain_file;
  };
  // A server certificate (extendedKeyUsage serverAuth) issued by this CA, in files named
  // `name`.pem, `name`.key and `name`.chain.pem in this CA's directory.
  Issued Issue(const std::string& name, const CertOptions& options);
  Issued Issue(const std::string& name) { return Issue(name, CertOptions{}); }

  // This CA's certificate, for clients to trust (a root's: its own).
  const std::string& cert_file() const { return cert_file_; }
  const std::string& dir() const { return dir_.path(); }

 private:
  void WriteConfig();
  TempDir dir_;
  std::string config_file_;
  std::string cert_file_;
  std::string key_file_;
  bool intermediate_ = false;
};

// Runs the `openssl` command-line tool with `args` (and OPENSSL_CONF pointing at an empty file,
// so the machine's configuration does not change what it accepts). Returns what it printed.
RunResult RunOpenssl(const std::vector<std::string>& args, const std::string& input = {});

// The full path of `program` found on PATH; throws std::runtime_error when it is not there.
std::string FindProgram(const std::string& program);

}  // namespace hookrelay::testing
