#pragma once

// How the HTTP kind classifies what libcurl reports (internal to src/delivery/kinds/http): a
// CURLcode as the policy's TransportError, the header-limit errors, and a TLS failure said for
// people.

#include <curl/curl.h>

#include <optional>
#include <string>
#include <string_view>

#include "policy/outcome.h"

namespace hookrelay::delivery::http {

// The detail for a refused connection, shared by the socket guard and the proxy pre-check.
std::string RefusedDetail(const std::string& address);

policy::TransportError MapCurlCode(CURLcode code);

// libcurl refuses response headers past 300 KB in all ("Too large response headers",
// CURLE_RECV_ERROR in 7.88) or a single field past 100 KB (CURLE_OUT_OF_MEMORY, with only "Out
// of memory" to say, so it is recognized as an out-of-memory error between the status line and
// the body); newer versions say CURLE_TOO_LARGE. None of these is a reset.
bool IsHeaderLimitError(CURLcode code, std::string_view detail, long status, size_t body_bytes);

// A TLS failure said for people, for the attempt's error detail; nullopt when `detail` is not
// one. TLS 1.3 servers check the client certificate after the client's side of the handshake has
// finished, so their refusal (an alert) reaches libcurl as a receive or send error: those are TLS
// errors too. libcurl's own message follows in parentheses.
std::optional<std::string> TlsReason(CURLcode code, const std::string& detail,
                                     bool has_client_cert);

}  // namespace hookrelay::delivery::http
