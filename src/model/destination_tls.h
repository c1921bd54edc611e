#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace hookrelay::model {

// What a destination's client certificate says about itself (shown by the API; not secret).
struct CertificateSummary {
  std::string subject;  // one line, RFC 2253 ("CN=billing-client,O=Example")
  std::string issuer;
  TimePoint not_after{};
  std::string sha256;  // of the DER, lower-case hex
  bool operator==(const CertificateSummary&) const = default;
};

// A destination's TLS client settings ("tls"): the PEM texts themselves, never paths. Files
// named with "@path" are read into the stored spec when the destination is created or loaded
// (catalog::InlineTlsFiles), so every node can deliver without the files.
struct DestinationTls {
  std::string client_cert;  // PEM: the certificate, then any intermediates; "" none
  std::string client_key;   // PEM, unencrypted; write-only; set exactly when client_cert is
  std::string ca;           // PEM bundle trusted instead of the system's CAs; "" the system's
  CertificateSummary cert;  // of client_cert's first certificate (when set)
  std::vector<std::string> ca_subjects;  // one per certificate of `ca`
  bool empty() const { return client_cert.empty() && ca.empty(); }
  bool operator==(const DestinationTls&) const = default;
};

// A credential sent as the Authorization header ("auth"); write-only.
struct DestinationAuth {
  enum class Kind { kNone, kBearer, kBasic };
  Kind kind = Kind::kNone;
  std::string token;     // kBearer
  std::string username;  // kBasic (shown by the API)
  std::string password;  // kBasic
  // What the Authorization header carries: "Bearer <token>" or "Basic <base64(user:pass)>".
  std::string header_value;
  bool operator==(const DestinationAuth&) const = default;
};

// {"client_cert": PEM, "client_key": PEM, "ca_file": PEM}, all optional but client_cert and
// client_key go together. Each PEM is parsed with OpenSSL: a certificate that does not parse, a
// key that is encrypted or does not match the certificate, a CA bundle without a certificate
// are kInvalidArgument naming the field ("tls.client_key"). The messages never quote a value.
// A value still naming a file ("@path") was not inlined: refused, saying so. Expiry is not
// checked here (an expired certificate still loads; the endpoint says so when it refuses it).
Result<DestinationTls> ParseDestinationTls(const boost::json::value& v);
// {"client_cert": CertificateSummary as JSON | null, "client_key_set": bool,
//  "ca_file": {"certificates": n, "subjects": [...]} | null}; never a key.
boost::json::object DestinationTlsToJson(const DestinationTls& tls);

// {"bearer": "token"} or {"basic": {"username": "u", "password": "p"}}. Errors name the field
// ("auth.basic.username").
Result<DestinationAuth> ParseDestinationAuth(const boost::json::value& v);
// {"type": "bearer"} or {"type": "basic", "username": "u"}; never the token or password.
boost::json::object DestinationAuthToJson(const DestinationAuth& auth);

}  // namespace hookrelay::model
