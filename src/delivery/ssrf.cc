#include "delivery/ssrf.h"

#include <arpa/inet.h>
#include <curl/curl.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>

namespace hookrelay::delivery {
namespace {

// `a` (host byte order) lies in prefix/len.
bool InV4(uint32_t a, uint32_t prefix, int len) {
  uint32_t mask = len == 0 ? 0 : ~uint32_t{0} << (32 - len);
  return (a & mask) == (prefix & mask);
}

constexpr uint32_t V4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return a << 24 | b << 16 | c << 8 | d;
}

bool IsPrivateV4(uint32_t a) {
  return InV4(a, V4(0, 0, 0, 0), 8) ||       // "this network", incl. unspecified 0.0.0.0
         InV4(a, V4(10, 0, 0, 0), 8) ||      // RFC 1918
         InV4(a, V4(100, 64, 0, 0), 10) ||   // CGNAT (RFC 6598)
         InV4(a, V4(127, 0, 0, 0), 8) ||     // loopback
         InV4(a, V4(169, 254, 0, 0), 16) ||  // link-local (cloud metadata lives here)
         InV4(a, V4(172, 16, 0, 0), 12) ||   // RFC 1918
         InV4(a, V4(192, 168, 0, 0), 16) ||  // RFC 1918
         InV4(a, V4(192, 0, 0, 0), 24) ||    // IETF protocol assignments (RFC 6890)
         InV4(a, V4(198, 18, 0, 0), 15) ||   // benchmarking (RFC 2544), often lab networks
         InV4(a, V4(224, 0, 0, 0), 4) ||     // multicast
         InV4(a, V4(240, 0, 0, 0), 4);       // reserved, incl. broadcast 255.255.255.255
}

uint32_t V4At(const unsigned char* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

bool IsPrivateV6(const unsigned char* b) {
  static constexpr unsigned char kZero[10] = {};
  // ::/96 (unspecified, loopback and the deprecated IPv4-compatible form) and ::ffff:0:0/96
  // (IPv4-mapped): the kernel may route these to the embedded IPv4 address, so judge that.
  if (std::memcmp(b, kZero, 10) == 0 &&
      ((b[10] == 0 && b[11] == 0) || (b[10] == 0xff && b[11] == 0xff))) {
    return IsPrivateV4(V4At(b + 12));
  }
  // ::ffff:0:0:0/96 (IPv4-translated, RFC 2765): a translator forwards to the embedded address.
  if (std::memcmp(b, kZero, 8) == 0 && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0) {
    return IsPrivateV4(V4At(b + 12));
  }
  // 64:ff9b::/96, the well-known NAT64 prefix: a NAT64 gateway forwards to the embedded
  // address.
  static constexpr unsigned char kNat64[12] = {0x00, 0x64, 0xff, 0x9b};
  if (std::memcmp(b, kNat64, 12) == 0) return IsPrivateV4(V4At(b + 12));
  // 64:ff9b:1::/48, NAT64 prefixes for local use (RFC 8215): they lead into a private network.
  static constexpr unsigned char kLocalNat64[6] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01};
  if (std::memcmp(b, kLocalNat64, 6) == 0) return true;
  if ((b[0] & 0xfe) == 0xfc) return true;                  // fc00::/7 unique local
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return true;  // fe80::/10 link-local
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return true;  // fec0::/10 site-local (old)
  if (b[0] == 0xff) return true;                           // ff00::/8 multicast
  return false;
}

}  // namespace

bool IsPrivateAddress(const std::string& address) {
  if (address.find('\0') != std::string::npos) return true;
  unsigned char buf[16];
  if (inet_pton(AF_INET, address.c_str(), buf) == 1) return IsPrivateV4(V4At(buf));
  if (inet_pton(AF_INET6, address.c_str(), buf) == 1) return IsPrivateV6(buf);
  return true;  // not a numeric address: refuse
}

bool IsRefusedLiteralHost(std::string_view host) {
  // A fully qualified name ends in a dot ("localhost.", "127.0.0.1."): the resolver treats it
  // as the name without it.
  while (host.size() > 1 && host.back() == '.') host.remove_suffix(1);
  std::string lower(host);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "localhost" || (lower.size() > 10 && lower.ends_with(".localhost"))) return true;
  unsigned char ignored[16];
  const bool numeric = inet_pton(AF_INET, lower.c_str(), ignored) == 1 ||
                       inet_pton(AF_INET6, lower.c_str(), ignored) == 1;
  return numeric && IsPrivateAddress(lower);
}

Status CheckDestinationAddress(const model::Destination& destination,
                               bool allow_private_destinations) {
  if (destination.allow_private || allow_private_destinations) return Status::Ok();
  // libcurl's parser, as the sender's: it normalizes the other spellings of a numeric address
  // ("127.1", "0x7f000001", "2130706433") to the address the request would go to.
  std::string host;
  if (CURLU* u = curl_url()) {
    char* part = nullptr;
    // CURLU_NON_SUPPORT_SCHEME: a broker kind's URL (redis://) is parsed as an HTTP one's.
    if (curl_url_set(u, CURLUPART_URL, destination.url.c_str(), CURLU_NON_SUPPORT_SCHEME) ==
            CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &part, 0) == CURLUE_OK) {
      host = part;
      curl_free(part);
    }
    curl_url_cleanup(u);
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (size_t zone = host.find('%'); zone != std::string::npos) host.resize(zone);
  if (!IsRefusedLiteralHost(host)) return Status::Ok();
  return Status::InvalidArgument("points at " + host + ": " + std::string(kPrivateAddressRefusal),
                                 "url");
}

}  // namespace hookrelay::delivery
