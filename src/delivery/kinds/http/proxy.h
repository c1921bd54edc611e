#pragma once

// The HTTP kind's proxy rules (internal to src/delivery/kinds/http): which transfers go through a
// proxy, as libcurl decides it from the environment.

#include <string>
#include <string_view>

namespace hookrelay::delivery::http {

// The proxy settings libcurl would read from the environment, read once so the sender knows
// which transfers go through a proxy (it then sets CURLOPT_PROXY itself, so libcurl and the SSRF
// guard agree). Same variables as libcurl: http_proxy (lower case only), https_proxy or
// HTTPS_PROXY, all_proxy or ALL_PROXY, no_proxy or NO_PROXY.
struct ProxySettings {
  std::string http;
  std::string https;
  std::string no_proxy;

  static ProxySettings FromEnvironment();
};

// libcurl's no_proxy rules: "*" matches everything; a name matches itself and its subdomains
// (a leading '.' is ignored); numeric addresses match exactly or by CIDR prefix.
bool NoProxyMatches(std::string_view no_proxy, std::string_view host);

struct UrlParts {
  std::string scheme;  // lower case
  std::string host;    // without IPv6 brackets; numeric IPv4 forms normalized by libcurl
};

// Splits `url` with libcurl's URL parser; false when it does not parse.
bool ParseUrl(const std::string& url, UrlParts& out);

}  // namespace hookrelay::delivery::http
