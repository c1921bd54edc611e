#pragma once

#include <boost/asio/ip/address.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hookrelay::http {

// The reverse proxies whose word on the client's address is taken ([server] trusted_proxies):
// IPv4 and IPv6 networks in CIDR notation ("10.0.0.0/8", "fd00::/8") or single addresses
// ("127.0.0.1"). Immutable after Parse; thread-safe.
class TrustedProxies {
 public:
  TrustedProxies() = default;  // none: every peer is the client

  // InvalidArgument naming the entry ("trusted_proxies[1]") and what is wrong with it.
  static Result<TrustedProxies> Parse(const std::vector<std::string>& entries);

  bool empty() const { return networks_.empty(); }
  bool Contains(const boost::asio::ip::address& address) const;

  bool operator==(const TrustedProxies&) const = default;

 private:
  struct Network {
    boost::asio::ip::address base;  // masked to `prefix` bits; IPv4-mapped IPv6 as IPv4
    unsigned prefix = 0;
    bool operator==(const Network&) const = default;
  };
  std::vector<Network> networks_;
};

// The address of the client a request comes from, when it reached hookrelay through `peer`:
// `peer` itself unless it is a trusted proxy; then the address that proxy says it got the request
// from — the right-most address in the Forwarded `for=` list (RFC 7239), or when there is no
// Forwarded field in X-Forwarded-For, that is not itself a trusted proxy (each proxy appends the
// address it got the request from, so what lies left of the last untrusted one was written by the
// client and may be forged). A list that is all trusted proxies gives its left-most address. A
// field that cannot be read where it matters (an obfuscated or "unknown" node, a name, garbage)
// gives `peer`, so a broken proxy never lets a client pick its own address. Pure.
boost::asio::ip::address ClientAddress(const TrustedProxies& trusted,
                                       const boost::asio::ip::address& peer,
                                       std::optional<std::string_view> forwarded,
                                       std::optional<std::string_view> x_forwarded_for);

}  // namespace hookrelay::http
