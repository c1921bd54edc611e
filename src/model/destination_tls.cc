#include "model/destination_tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <boost/json.hpp>
#include <ctime>
#include <memory>

#include "common/crypto.h"
#include "common/time_format.h"
#include "model/json_fields.h"

namespace hookrelay::model {

namespace json = boost::json;

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

// Larger than any real certificate chain or CA bundle (Mozilla's whole bundle is ~220 KB).
constexpr size_t kMaxPem = 1 << 20;

// Refuses what cannot be PEM before OpenSSL sees it, with a message that never quotes the value.
Status CheckPemText(const std::string& text, const std::string& field) {
  if (text.size() > kMaxPem) return Status::InvalidArgument("is larger than 1 MiB", field);
  if (!text.empty() && text[0] == '@') {
    return Status::InvalidArgument(
        "names a file (\"@path\") that was not read; give the PEM text itself", field);
  }
  if (text.find("-----BEGIN ") == std::string::npos) {
    return Status::InvalidArgument("must be PEM text (\"-----BEGIN …\") or \"@path\" of a PEM file",
                                   field);
  }
  return Status::Ok();
}

std::unique_ptr<BIO, BioFree> MemBio(const std::string& text) {
  return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// Every certificate of a PEM text, in order; an error when there is none or one is damaged.
Result<std::vector<X509Ptr>> ReadCertificates(const std::string& text, const std::string& field) {
  HR_RETURN_IF_ERROR(CheckPemText(text, field));
  auto bio = MemBio(text);
  std::vector<X509Ptr> certs;
  ERR_clear_error();
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) certs.emplace_back(x);
  // The loop ends at the end of the text (PEM_R_NO_START_LINE) or at a block that is damaged.
  const unsigned long err = ERR_peek_last_error();
  ERR_clear_error();
  const bool clean_end =
      ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE;
  if (certs.empty()) {
    return Status::InvalidArgument(
        "holds no PEM certificate (\"-----BEGIN CERTIFICATE-----\") that parses", field);
  }
  if (!clean_end) {
    return Status::InvalidArgument(
        "certificate " + std::to_string(certs.size() + 1) + " does not parse as PEM X.509", field);
  }
  return certs;
}

std::string NameLine(X509_NAME* name) {
  std::unique_ptr<BIO, BioFree> out(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(out.get(), name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
  char* data = nullptr;
  const long n = BIO_get_mem_data(out.get(), &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

CertificateSummary Summarize(X509* x) {
  CertificateSummary s;
  s.subject = NameLine(X509_get_subject_name(x));
  s.issuer = NameLine(X509_get_issuer_name(x));
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) == 1) {
    s.not_after = TimePoint(std::chrono::seconds(timegm(&tm)));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (X509_digest(x, EVP_sha256(), md, &len) == 1) {
    s.sha256 = HexEncode(std::string_view(reinterpret_cast<const char*>(md), len));
  }
  return s;
}

// A password callback that declines: an encrypted key fails to load instead of prompting.
int NoPassword(char*, int, int, void*) { return 0; }

Result<std::unique_ptr<EVP_PKEY, PkeyFree>> ReadKey(const std::string& text,
                                                    const std::string& field) {
  HR_RETURN_IF_ERROR(CheckPemText(text, field));
  if (text.find("-----BEGIN ENCRYPTED PRIVATE KEY-----") != std::string::npos ||
      text.find("Proc-Type: 4,ENCRYPTED") != std::string::npos) {
    return Status::InvalidArgument(
        "is encrypted; give the key unencrypted (openssl pkey -in key.pem -out plain.pem), "
        "it is stored like the other secrets",
        field);
  }
  auto bio = MemBio(text);
  ERR_clear_error();
  std::unique_ptr<EVP_PKEY, PkeyFree> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, &NoPassword, nullptr));
  ERR_clear_error();
  if (!key) {
    return Status::InvalidArgument(
        "holds no PEM private key (\"-----BEGIN PRIVATE KEY-----\", \"… RSA PRIVATE KEY\", \"… EC "
        "PRIVATE KEY\") that parses",
        field);
  }
  return key;
}

}  // namespace

Result<DestinationTls> ParseDestinationTls(const json::value& v) {
  if (!v.is_object()) {
    return Status::InvalidArgument(
        "must be an object: {\"client_cert\": …, \"client_key\": …, \"ca_file\": …}");
  }
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(CheckKnownFields(o, {"client_cert", "client_key", "ca_file"}));
  auto text = [&o](const char* field) -> Result<std::string> {
    const json::value* f = o.if_contains(field);
    if (f == nullptr || f->is_null()) return std::string();
    return GetString(*f, field);
  };
  HR_ASSIGN_OR_RETURN(std::string cert, text("client_cert"));
  HR_ASSIGN_OR_RETURN(std::string key, text("client_key"));
  HR_ASSIGN_OR_RETURN(std::string ca, text("ca_file"));
  DestinationTls tls;
  if (!cert.empty() || !key.empty()) {
    if (cert.empty()) return Status::InvalidArgument("is required with client_key", "client_cert");
    if (key.empty()) return Status::InvalidArgument("is required with client_cert", "client_key");
    HR_ASSIGN_OR_RETURN(auto certs, ReadCertificates(cert, "client_cert"));
    HR_ASSIGN_OR_RETURN(auto pkey, ReadKey(key, "client_key"));
    ERR_clear_error();
    const bool match = X509_check_private_key(certs[0].get(), pkey.get()) == 1;
    ERR_clear_error();
    if (!match) {
      return Status::InvalidArgument(
          "does not match client_cert (the key of the first certificate in it)", "client_key");
    }
    tls.cert = Summarize(certs[0].get());
    tls.client_cert = std::move(cert);
    tls.client_key = std::move(key);
  }
  if (!ca.empty()) {
    HR_ASSIGN_OR_RETURN(auto certs, ReadCertificates(ca, "ca_file"));
    for (const X509Ptr& x : certs)
      tls.ca_subjects.push_back(NameLine(X509_get_subject_name(x.get())));
    tls.ca = std::move(ca);
  }
  return tls;
}

json::object DestinationTlsToJson(const DestinationTls& tls) {
  json::object o;
  if (tls.client_cert.empty()) {
    o["client_cert"] = nullptr;
  } else {
    o["client_cert"] = json::object{{"subject", tls.cert.subject},
                                    {"issuer", tls.cert.issuer},
                                    {"not_after", FormatRfc3339(tls.cert.not_after, false)},
                                    {"sha256", tls.cert.sha256}};
  }
  o["client_key_set"] = !tls.client_key.empty();
  if (tls.ca.empty()) {
    o["ca_file"] = nullptr;
  } else {
    json::array subjects;
    for (const std::string& s : tls.ca_subjects) subjects.emplace_back(s);
    o["ca_file"] = json::object{{"certificates", static_cast<int64_t>(tls.ca_subjects.size())},
                                {"subjects", std::move(subjects)}};
  }
  return o;
}

namespace {

// A value for a header: no control characters (they would split or end the header).
Status CheckHeaderText(const std::string& s, const std::string& field) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::InvalidArgument("must not contain control characters", field);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<DestinationAuth> ParseDestinationAuth(const json::value& v) {
  if (!v.is_object()) {
    return Status::InvalidArgument(
        "must be {\"bearer\": \"…\"} or {\"basic\": {\"username\": \"…\", \"password\": \"…\"}}");
  }
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(CheckKnownFields(o, {"bearer", "basic"}));
  const json::value* bearer = o.if_contains("bearer");
  const json::value* basic = o.if_contains("basic");
  if (bearer != nullptr && bearer->is_null()) bearer = nullptr;
  if (basic != nullptr && basic->is_null()) basic = nullptr;
  if (bearer != nullptr && basic != nullptr) {
    return Status::InvalidArgument(
        "give one of bearer and basic (in a PATCH, set the other to null)");
  }
  DestinationAuth a;
  if (bearer != nullptr) {
    HR_ASSIGN_OR_RETURN(a.token, GetString(*bearer, "bearer"));
    if (a.token.empty()) return Status::InvalidArgument("must not be empty", "bearer");
    if (a.token.find_first_of(" \t") != std::string::npos) {
      return Status::InvalidArgument(
          "must be the token alone, without \"Bearer \" or spaces (hookrelay sends "
          "\"Authorization: Bearer <token>\")",
          "bearer");
    }
    HR_RETURN_IF_ERROR(CheckHeaderText(a.token, "bearer"));
    a.kind = DestinationAuth::Kind::kBearer;
    a.header_value = "Bearer " + a.token;
    return a;
  }
  if (basic == nullptr) {
    return Status::InvalidArgument(
        "must be {\"bearer\": \"…\"} or {\"basic\": {\"username\": \"…\", \"password\": \"…\"}} "
        "(to remove the credential, set auth to null)");
  }
  if (!basic->is_object()) {
    return Status::InvalidArgument("must be {\"username\": \"…\", \"password\": \"…\"}", "basic");
  }
  const json::object& b = basic->as_object();
  if (Status st = CheckKnownFields(b, {"username", "password"}); !st.ok()) {
    return st.WithFieldPrefix("basic");
  }
  const json::value* user = b.if_contains("username");
  const json::value* pass = b.if_contains("password");
  if (user == nullptr) return Status::InvalidArgument("is required", "basic.username");
  if (pass == nullptr) return Status::InvalidArgument("is required", "basic.password");
  HR_ASSIGN_OR_RETURN(a.username, GetString(*user, "basic.username"));
  HR_ASSIGN_OR_RETURN(a.password, GetString(*pass, "basic.password"));
  if (a.username.find(':') != std::string::npos) {
    return Status::InvalidArgument("must not contain ':' (RFC 7617)", "basic.username");
  }
  HR_RETURN_IF_ERROR(CheckHeaderText(a.username, "basic.username"));
  HR_RETURN_IF_ERROR(CheckHeaderText(a.password, "basic.password"));
  a.kind = DestinationAuth::Kind::kBasic;
  a.header_value = "Basic " + Base64Encode(a.username + ":" + a.password);
  return a;
}

json::object DestinationAuthToJson(const DestinationAuth& auth) {
  switch (auth.kind) {
    case DestinationAuth::Kind::kBearer: return {{"type", "bearer"}};
    case DestinationAuth::Kind::kBasic: return {{"type", "basic"}, {"username", auth.username}};
    case DestinationAuth::Kind::kNone: break;
  }
  return {};
}

}  // namespace hookrelay::model
