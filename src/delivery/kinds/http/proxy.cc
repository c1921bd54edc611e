#include "delivery/kinds/http/proxy.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "common/ascii.h"

namespace hookrelay::delivery::http {
namespace {

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Parses a numeric address with an optional "/bits" suffix; false when not numeric.
bool ParseCidr(std::string_view text, int& family, unsigned char (&bytes)[16], int& bits) {
  std::string addr(text.substr(0, text.find('/')));
  int max_bits;
  if (inet_pton(AF_INET, addr.c_str(), bytes) == 1) {
    family = AF_INET;
    max_bits = 32;
  } else if (inet_pton(AF_INET6, addr.c_str(), bytes) == 1) {
    family = AF_INET6;
    max_bits = 128;
  } else {
    return false;
  }
  bits = max_bits;
  if (size_t slash = text.find('/'); slash != std::string_view::npos) {
    std::string b(text.substr(slash + 1));
    if (b.empty() || b.size() > 3 || !std::all_of(b.begin(), b.end(), ::isdigit)) return false;
    bits = std::min(std::stoi(b), max_bits);
  }
  return true;
}

}  // namespace

ProxySettings ProxySettings::FromEnvironment() {
  ProxySettings p;
  std::string all = Getenv("all_proxy");
  if (all.empty()) all = Getenv("ALL_PROXY");
  p.http = Getenv("http_proxy");
  if (p.http.empty()) p.http = all;
  p.https = Getenv("https_proxy");
  if (p.https.empty()) p.https = Getenv("HTTPS_PROXY");
  if (p.https.empty()) p.https = all;
  p.no_proxy = Getenv("no_proxy");
  if (p.no_proxy.empty()) p.no_proxy = Getenv("NO_PROXY");
  return p;
}

bool NoProxyMatches(std::string_view no_proxy, std::string_view host) {
  std::string h = AsciiLower(host);
  while (!h.empty() && h.back() == '.') h.pop_back();
  int host_family;
  unsigned char host_bytes[16];
  int host_bits;
  const bool host_numeric = ParseCidr(h, host_family, host_bytes, host_bits);
  size_t i = 0;
  while (i < no_proxy.size()) {
    size_t end = no_proxy.find_first_of(", \t", i);
    if (end == std::string_view::npos) end = no_proxy.size();
    std::string token = AsciiLower(no_proxy.substr(i, end - i));
    i = end + 1;
    if (token.empty()) continue;
    if (token == "*") return true;
    if (host_numeric) {
      if (token.front() == '[') token.erase(0, 1);
      if (size_t close = token.find(']'); close != std::string::npos) token.erase(close, 1);
      int family, bits;
      unsigned char bytes[16];
      if (!ParseCidr(token, family, bytes, bits) || family != host_family) continue;
      bool match = true;
      for (int b = 0; b < bits && match; ++b) {
        int mask = 0x80 >> (b % 8);
        match = (bytes[b / 8] & mask) == (host_bytes[b / 8] & mask);
      }
      if (match) return true;
      continue;
    }
    while (!token.empty() && token.front() == '.') token.erase(0, 1);
    while (!token.empty() && token.back() == '.') token.pop_back();
    if (token.empty()) continue;
    if (h == token) return true;
    if (h.size() > token.size() && h.compare(h.size() - token.size(), token.size(), token) == 0 &&
        h[h.size() - token.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

bool ParseUrl(const std::string& url, UrlParts& out) {
  CURLU* u = curl_url();
  if (u == nullptr) return false;
  bool ok = curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK;
  char* part = nullptr;
  if (ok && curl_url_get(u, CURLUPART_SCHEME, &part, 0) == CURLUE_OK) {
    out.scheme = AsciiLower(part);
    curl_free(part);
  }
  part = nullptr;
  if (ok && curl_url_get(u, CURLUPART_HOST, &part, 0) == CURLUE_OK) {
    out.host = part;
    curl_free(part);
  }
  curl_url_cleanup(u);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  if (size_t zone = out.host.find('%'); zone != std::string::npos) out.host.resize(zone);
  return ok;
}

}  // namespace hookrelay::delivery::http
