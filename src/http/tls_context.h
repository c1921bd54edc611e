#pragma once

// Server-side TLS settings: loading a listener's certificate chain and key from PEM files into an
// OpenSSL context configured as ServerOptions::tls describes. Not for use outside src/http.

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string_view>

#include "common/result.h"
#include "http/server.h"

namespace hookrelay::http {

// Mozilla's "intermediate" TLS 1.2 cipher suites (server side); TLS 1.3 keeps
// OpenSSL's default suites, which are the same list's.
inline constexpr std::string_view kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
    "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305";

// A new server context holding `files`' certificate chain and key. Errors are InvalidArgument
// with field "cert" or "key" and a message naming the file (see Server::Start); the context is
// only returned when the key matches the certificate. Reads the files on the calling thread.
// The key's bytes are wiped from memory once parsed.
Result<std::shared_ptr<boost::asio::ssl::context>> LoadTlsContext(const TlsFiles& files);

}  // namespace hookrelay::http
