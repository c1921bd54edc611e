#include "app/allowed_hosts.h"

#include <charconv>

namespace hookrelay::app {
namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

bool IsV6Char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.';
}

struct HostPort {
  std::string host;
  std::optional<uint16_t> port;
};

// Splits "host[:port]" ("[v6][:port]"), lower-casing the host and dropping one trailing dot.
// Returns why it is malformed, or "" and `out`.
std::string Split(std::string_view text, HostPort& out) {
  std::string_view host = text;
  std::string_view port;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return "an IPv6 address needs its closing ']'";
    host = text.substr(0, close + 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return "expected ':' and a port after ']'";
      port = rest.substr(1);
      has_port = true;
    }
  } else if (const size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    has_port = true;
    if (host.find(':') != std::string_view::npos) {
      return "an IPv6 address must be in brackets, as in \"[::1]:8080\"";
    }
  }
  out.host.clear();
  for (char c : host) out.host.push_back(Lower(c));
  if (out.host.size() > 1 && out.host.back() == '.') out.host.pop_back();
  if (out.host.empty() || out.host == "[]") return "the host is empty";
  if (out.host.front() == '[') {
    for (size_t i = 1; i + 1 < out.host.size(); ++i) {
      if (!IsV6Char(out.host[i])) return "not an IPv6 address in brackets";
    }
  } else {
    for (char c : out.host) {
      if (!IsNameChar(c)) {
        return std::string("a host name cannot hold '") + c +
               "' (letters, digits, '-', '.' and '_' only)";
      }
    }
  }
  out.port.reset();
  if (has_port) {
    unsigned n = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || n < 1 ||
        n > 65535) {
      return "the port must be a number from 1 to 65535";
    }
    out.port = static_cast<uint16_t>(n);
  }
  return "";
}

}  // namespace

Result<AllowedHosts> AllowedHosts::Parse(const std::vector<std::string>& entries) {
  AllowedHosts hosts;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string field = "allowed_hosts[" + std::to_string(i) + "]";
    const std::string& text = entries[i];
    const std::string shown = "\"" + text + "\"";
    if (text.empty()) return Status::InvalidArgument("must not be empty", field);
    if (text.find("://") != std::string::npos) {
      return Status::InvalidArgument(
          shown +
              " is a URL: write the host (and port) only, as in \"relay.example.com\" or "
              "\"127.0.0.1:8080\"",
          field);
    }
    if (text.find('/') != std::string::npos) {
      return Status::InvalidArgument(shown + " holds a path: write the host (and port) only",
                                     field);
    }
    HostPort parsed;
    if (std::string why = Split(text, parsed); !why.empty()) {
      return Status::InvalidArgument(shown + " is not a host or host:port: " + why, field);
    }
    hosts.entries_.push_back({std::move(parsed.host), parsed.port});
  }
  return hosts;
}

bool AllowedHosts::Allows(std::optional<std::string_view> host) const {
  if (entries_.empty()) return true;
  if (!host) return false;
  HostPort sent;
  if (!Split(*host, sent).empty()) return false;
  for (const Entry& e : entries_) {
    if (e.host == sent.host && (!e.port || e.port == sent.port)) return true;
  }
  return false;
}

}  // namespace hookrelay::app
