#include "http/forwarded.h"

#include <algorithm>
#include <boost/asio/ip/address_v6.hpp>
#include <charconv>

#include "common/ascii.h"

namespace hookrelay::http {

namespace {

namespace ip = boost::asio::ip;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// IPv4-mapped IPv6 addresses (::ffff:10.0.0.1, a dual-stack socket's view) as IPv4.
ip::address Unmapped(const ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    return ip::make_address_v4(ip::v4_mapped, a.to_v6());
  }
  return a;
}

// `a` with every bit past the first `prefix` cleared.
ip::address Masked(const ip::address& a, unsigned prefix) {
  if (a.is_v4()) {
    const uint32_t bits = a.to_v4().to_uint();
    const uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
    return ip::address_v4(bits & mask);
  }
  ip::address_v6::bytes_type bytes = a.to_v6().to_bytes();
  for (unsigned i = 0; i < bytes.size(); ++i) {
    const unsigned keep = prefix > i * 8 ? std::min(8u, prefix - i * 8) : 0;
    bytes[i] &= static_cast<unsigned char>(keep == 0 ? 0 : 0xFF << (8 - keep));
  }
  return ip::address_v6(bytes);
}

std::optional<ip::address> ParseAddress(std::string_view text) {
  boost::system::error_code ec;
  ip::address a = ip::make_address(std::string(text), ec);
  if (ec) return std::nullopt;
  return Unmapped(a);
}

// One node of a forwarded list: an address, optionally with a port ("192.0.2.1:4711",
// "[2001:db8::1]:4711", "[2001:db8::1]", or a bare IPv6 address as X-Forwarded-For writes it).
// Quotes (Forwarded's quoted-string) are removed first. nullopt for anything else.
std::optional<ip::address> ParseNode(std::string_view node) {
  node = Trim(node);
  if (node.size() >= 2 && node.front() == '"' && node.back() == '"') {
    node = node.substr(1, node.size() - 2);
  }
  if (!node.empty() && node.front() == '[') {
    const size_t close = node.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view rest = node.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return std::nullopt;
    return ParseAddress(node.substr(1, close - 1));
  }
  if (auto a = ParseAddress(node)) return a;  // IPv4, or IPv6 without brackets
  const size_t colon = node.rfind(':');
  if (colon == std::string_view::npos || node.find(':') != colon) return std::nullopt;
  auto a = ParseAddress(node.substr(0, colon));  // IPv4 with a port
  return a && a->is_v4() ? a : std::nullopt;
}

// Splits on commas outside quoted strings.
std::vector<std::string_view> SplitList(std::string_view s) {
  std::vector<std::string_view> parts;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"') quoted = !quoted;
    if (s[i] == ',' && !quoted) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(s.substr(start));
  return parts;
}

// The `for=` value of each Forwarded element, in order; an element without one is "" (which
// reads as no address).
std::vector<std::string_view> ForwardedFor(std::string_view field) {
  std::vector<std::string_view> out;
  for (std::string_view element : SplitList(field)) {
    std::string_view value;
    size_t start = 0;
    while (start <= element.size()) {
      size_t end = element.find(';', start);
      if (end == std::string_view::npos) end = element.size();
      const std::string_view pair = Trim(element.substr(start, end - start));
      const size_t eq = pair.find('=');
      if (eq != std::string_view::npos && AsciiEqualsIgnoreCase(Trim(pair.substr(0, eq)), "for")) {
        value = Trim(pair.substr(eq + 1));
      }
      start = end + 1;
    }
    out.push_back(value);
  }
  return out;
}

}  // namespace

Result<TrustedProxies> TrustedProxies::Parse(const std::vector<std::string>& entries) {
  TrustedProxies t;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string field = "trusted_proxies[" + std::to_string(i) + "]";
    std::string_view entry = entries[i];
    const size_t slash = entry.find('/');
    auto address = ParseAddress(entry.substr(0, slash));
    if (!address) {
      return Status::InvalidArgument(
          "\"" + std::string(entry.substr(0, slash)) +
              "\" is not an IP address (give an address or a network such as 10.0.0.0/8)",
          field);
    }
    const unsigned max = address->is_v4() ? 32 : 128;
    unsigned prefix = max;
    if (slash != std::string_view::npos) {
      const std::string_view digits = entry.substr(slash + 1);
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
      if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty() ||
          prefix > max) {
        return Status::InvalidArgument("the prefix length after / must be 0 to " +
                                           std::to_string(max) + " (got \"" + std::string(digits) +
                                           "\")",
                                       field);
      }
    }
    if (Masked(*address, prefix) != *address) {
      return Status::InvalidArgument(
          "\"" + std::string(entry) + "\" has bits set past its prefix length (the network is " +
              Masked(*address, prefix).to_string() + "/" + std::to_string(prefix) + ")",
          field);
    }
    t.networks_.push_back(Network{*address, prefix});
  }
  return t;
}

bool TrustedProxies::Contains(const ip::address& address) const {
  const ip::address a = Unmapped(address);
  for (const Network& n : networks_) {
    if (n.base.is_v4() == a.is_v4() && Masked(a, n.prefix) == n.base) return true;
  }
  return false;
}

ip::address ClientAddress(const TrustedProxies& trusted, const ip::address& peer,
                          std::optional<std::string_view> forwarded,
                          std::optional<std::string_view> x_forwarded_for) {
  if (!trusted.Contains(peer)) return peer;
  std::vector<std::string_view> nodes;
  if (forwarded) {
    nodes = ForwardedFor(*forwarded);
  } else if (x_forwarded_for) {
    nodes = SplitList(*x_forwarded_for);
  } else {
    return peer;  // the proxy's own request (a health check), or one that says nothing
  }
  std::optional<ip::address> leftmost;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    std::optional<ip::address> node = ParseNode(*it);
    if (!node) return peer;
    if (!trusted.Contains(*node)) return *node;
    leftmost = node;
  }
  return leftmost.value_or(peer);
}

}  // namespace hookrelay::http
