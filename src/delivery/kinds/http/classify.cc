#include "delivery/kinds/http/classify.h"

#include <curl/curl.h>

#include "common/ascii.h"
#include "delivery/ssrf.h"

namespace hookrelay::delivery::http {

using policy::TransportError;

std::string RefusedDetail(const std::string& address) {
  return "refused to connect to " + address + ": " + std::string(kPrivateAddressRule);
}

TransportError MapCurlCode(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT: return TransportError::kTimeout;
    case CURLE_COULDNT_CONNECT: return TransportError::kConnectionRefused;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE: return TransportError::kConnectionReset;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return TransportError::kDns;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
    case CURLE_USE_SSL_FAILED: return TransportError::kTls;
    case CURLE_WEIRD_SERVER_REPLY: return TransportError::kMalformedResponse;
    default: return TransportError::kOther;
  }
}

bool IsHeaderLimitError(CURLcode code, std::string_view detail, long status, size_t body_bytes) {
#if LIBCURL_VERSION_NUM >= 0x080600
  if (code == CURLE_TOO_LARGE) return true;
#endif
  if (code == CURLE_OUT_OF_MEMORY) return status > 0 && body_bytes == 0;
  return code == CURLE_RECV_ERROR &&
         AsciiLower(detail).find("too large response headers") != std::string::npos;
}

std::optional<std::string> TlsReason(CURLcode code, const std::string& detail,
                                     bool has_client_cert) {
  const std::string lower = AsciiLower(detail);
  std::string why;
  auto has = [&lower](std::string_view s) { return lower.find(s) != std::string::npos; };
  if (has("alert certificate required")) {
    why = has_client_cert ? "the server requires a client certificate and did not get one"
                          : "the server requires a client certificate; set tls.client_cert and "
                            "tls.client_key on the destination";
  } else if (has("alert unknown ca")) {
    why =
        "the server does not trust the client certificate (unknown CA): it is not signed by a "
        "CA the server accepts";
  } else if (has("alert bad certificate") || has("alert certificate unknown") ||
             has("alert unsupported certificate")) {
    why = "the server refused the client certificate";
  } else if (has("alert certificate expired")) {
    why = "the server refused the client certificate: it has expired";
  } else if (has("alert certificate revoked")) {
    why = "the server refused the client certificate: it is revoked";
  } else if (has("alert access denied")) {
    why = "the server denied access after checking the client certificate";
  } else if (has("alert handshake failure")) {
    why =
        "the server ended the handshake (no shared protocol version or cipher, or it wanted a "
        "client certificate)";
  } else if (code == CURLE_PEER_FAILED_VERIFICATION) {
    constexpr std::string_view kProblem = "ssl certificate problem: ";
    std::string what = detail;
    if (size_t at = lower.find(kProblem); at != std::string::npos) {
      what = detail.substr(at + kProblem.size());
    }
    return "certificate verify failed: " + what +
           " (the server's certificate is not trusted for this URL; for a private CA set "
           "tls.ca_file)";
  } else if (code == CURLE_SSL_CERTPROBLEM) {
    why = "the client certificate or key could not be used";
  } else if (MapCurlCode(code) == policy::TransportError::kTls) {
    return "handshake failed (" + detail + ")";
  } else {
    return std::nullopt;
  }
  return why + " (" + detail + ")";
}

}  // namespace hookrelay::delivery::http
