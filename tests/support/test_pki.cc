#include "support/test_pki.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace hookrelay::testing {
namespace {

void Check(const RunResult& r, const std::string& what) {
  if (r.exit_code != 0) {
    throw std::runtime_error("TestPki: " + what + " failed (exit " + std::to_string(r.exit_code) +
                             "): " + r.out + r.err);
  }
}

std::vector<std::string> KeyArgs(bool rsa) {
  if (rsa) return {"-newkey", "rsa:2048"};
  return {"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"};
}

}  // namespace

std::string FindProgram(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw std::runtime_error("`" + program + "` is not installed (not found on PATH)");
}

RunResult RunOpenssl(const std::vector<std::string>& args, const std::string& input) {
  std::vector<std::string> argv{FindProgram("openssl")};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv, input, std::chrono::seconds(60), {{"OPENSSL_CONF", "/dev/null"}});
}

void TestPki::WriteConfig() {
  const std::string& d = dir_.path();
  config_file_ = d + "/openssl.cnf";
  cert_file_ = d + "/ca.pem";
  key_file_ = d + "/ca.key";
  WriteFile(d + "/index.txt", "");
  WriteFile(d + "/serial", "1000\n");
  // `openssl ca` rather than `openssl x509 -req`: it takes -startdate/-enddate (expired certs).
  std::string config =
      "[req]\n"
      "distinguished_name = dn\n"
      "prompt = no\n"
      "[dn]\n"
      "CN = unused\n"
      "[v3_ca]\n"
      "basicConstraints = critical,CA:TRUE\n"
      "keyUsage = critical,keyCertSign,cRLSign\n"
      "subjectKeyIdentifier = hash\n"
      "[ca]\n"
      "default_ca = test_ca\n"
      "[test_ca]\n"
      "default_md = sha256\n"
      "default_days = 2\n"
      "unique_subject = no\n"
      "policy = any\n";
  config += "database = " + d + "/index.txt\n";
  config += "serial = " + d + "/serial\n";
  config += "new_certs_dir = " + d + "\n";
  config += "certificate = " + cert_file_ + "\n";
  config += "private_key = " + key_file_ + "\n";
  config += "[any]\ncommonName = supplied\n";
  WriteFile(config_file_, config);
}

TestPki::TestPki(const std::string& name) {
  WriteConfig();
  std::vector<std::string> req{"req", "-config", config_file_, "-x509", "-new"};
  for (const auto& a : KeyArgs(false)) req.push_back(a);
  req.insert(req.end(), {"-nodes", "-keyout", key_file_, "-out", cert_file_, "-days", "2", "-subj",
                         "/CN=" + name, "-extensions", "v3_ca"});
  Check(RunOpenssl(req), "making the root CA");
}

TestPki::TestPki(TestPki& parent, const std::string& name) : intermediate_(true) {
  WriteConfig();
  const std::string csr = dir_.path() + "/ca.csr";
  std::vector<std::string> req{"req", "-config", config_file_, "-new"};
  for (const auto& a : KeyArgs(false)) req.push_back(a);
  req.insert(req.end(), {"-nodes", "-keyout", key_file_, "-out", csr, "-subj", "/CN=" + name});
  Check(RunOpenssl(req), "making the intermediate CA's request");
  const std::string ext = dir_.path() + "/ca.ext";
  WriteFile(ext, "basicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n");
  Check(RunOpenssl({"ca", "-config", parent.config_file_, "-batch", "-notext", "-in", csr, "-out",
                    cert_file_, "-extfile", ext}),
        "signing the intermediate CA");
}

TestPki::~TestPki() = default;

TestPki::Issued TestPki::Issue(const std::string& name, const CertOptions& options) {
  const std::string base = dir_.path() + "/" + name;
  Issued out{base + ".pem", base + ".key", base + ".chain.pem"};
  const std::string csr = base + ".csr";
  std::vector<std::string> req{"req", "-config", config_file_, "-new"};
  for (const auto& a : KeyArgs(options.rsa)) req.push_back(a);
  req.insert(req.end(), {"-nodes", "-keyout", out.key_file, "-out", csr, "-subj",
                         "/CN=" + options.common_name});
  Check(RunOpenssl(req), "making the request for " + name);
  ::chmod(out.key_file.c_str(), 0600);
  const std::string ext = base + ".ext";
  std::string ext_text =
      "basicConstraints = CA:FALSE\n"
      "keyUsage = critical,digitalSignature,keyEncipherment\n"
      "extendedKeyUsage = serverAuth\n";
  if (!options.san.empty()) ext_text += "subjectAltName = " + options.san + "\n";
  WriteFile(ext, ext_text);
  std::vector<std::string> ca{"ca", "-config", config_file_,  "-batch",   "-notext", "-in",
                              csr,  "-out",    out.cert_file, "-extfile", ext};
  if (options.expired) {
    ca.insert(ca.end(), {"-startdate", "20200101000000Z", "-enddate", "20200102000000Z"});
  }
  Check(RunOpenssl(ca), "issuing " + name);
  // The chain a server sends: its certificate, then the intermediates (not the root).
  std::string chain = ReadFile(out.cert_file);
  if (intermediate_) chain += ReadFile(cert_file_);
  WriteFile(out.chain_file, chain);
  return out;
}

}  // namespace hookrelay::testing
