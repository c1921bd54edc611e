#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "delivery/request_sender.h"
#include "model/destination.h"
#include "policy/outcome.h"

namespace hookrelay::delivery {

// Sends POSTs over libcurl's multi interface: many concurrent requests on one thread,
// keep-alive connection reuse per host, TLS verification on, redirects NOT followed, only
// http:// and https:// URLs, response bodies read up to snippet_limit and the rest discarded
// without buffering, proxies taken from the environment (HTTPS_PROXY, …) as libcurl does.
//
// Response bodies: a body whose Content-Length is at most 1 MiB is read to its end (all but the
// snippet discarded; the connection stays reusable); any other (longer, chunked, endless) is cut
// off as soon as snippet_limit bytes are read (the connection is closed, not reused) and the
// attempt counts with the status already received. A transport failure after the status line (a
// timeout or reset mid-body) reports the transport error together with the status_code received.
// Response headers past libcurl's limits (300 KB in all, 100 KB for one field) give
// kResponseTooLarge.
//
// Headers: fields whose name or value contains CR, LF or NUL (or whose name is not a token) are
// dropped; Content-Length, Transfer-Encoding and Expect from the request are ignored. libcurl's
// defaults "Accept: */*" and a form Content-Type are not sent; an empty value is sent empty.
//
// SSRF guard (the rules: ssrf.h): the resolved address of every connection (not the name) is
// checked just before connecting, and a kept-alive connection's again before each request it
// carries (one opened for a request with allow_private is not reused for a request without);
// loopback, private (RFC 1918, fc00::/7), link-local, CGNAT, multicast, broadcast and unspecified
// addresses are refused unless allow_private (per request) or Options::allow_private_destinations
// is set; such an attempt fails with TransportError::kPrivateAddress and an error_detail naming the
// address. (If a name resolves to both refused and public addresses, the public ones are still
// tried; if none connects, the attempt reports kPrivateAddress.)
//
// Proxies: read from the environment once, when the HttpSender is built, with libcurl's rules
// (http_proxy; https_proxy or HTTPS_PROXY; all_proxy or ALL_PROXY; no_proxy or NO_PROXY with
// names, suffixes, addresses, CIDRs and "*"). Through a proxy, hookrelay never connects to the
// destination: the proxy resolves the name and connects. So the proxy's own address (the
// operator's choice) is not checked, a URL whose host is a private address literal or
// "localhost" is refused before anything is sent, and a name is left to the proxy's egress
// policy (run one that enforces its own, e.g. Smokescreen, if proxied destinations are
// untrusted). The same holds for SOCKS proxies.
//
// Thread-safe. `done` runs on the sender's thread: it must not block for long, and must not
// destroy the HttpSender.
class HttpSender : public RequestSender {
 public:
  struct Options {
    bool allow_private_destinations = false;
    size_t snippet_limit = kSnippetLimit;
    // Open connections in all, a guard for the process's descriptors, not a pacing tool (each
    // destination's max_concurrency paces it): above one destination's largest max_concurrency
    // (1,024), so that one is never held to fewer connections than requests. 0: no limit.
    int max_connections = 4096;
    std::string user_agent;  // default "hookrelay/<version>" (when the request has none)
    // Sending threads, each with its own libcurl multi handle, connections and share of
    // max_connections; requests go to them in turn. At least 1.
    int threads = 1;
  };
  using Callback = std::function<void(SendResult)>;

  HttpSender(Options options, const Clock& clock);
  ~HttpSender() override;  // stops; requests still in flight complete with kOther "shutting down"
  HttpSender(const HttpSender&) = delete;
  HttpSender& operator=(const HttpSender&) = delete;

  void Send(SendRequest request, Callback done) override;
  int InFlight() const override;

 private:
  struct Impl;
  std::vector<std::unique_ptr<Impl>> impls_;
  std::atomic<uint64_t> next_{0};  // the thread the next request goes to, modulo impls_.size()
};

}  // namespace hookrelay::delivery
