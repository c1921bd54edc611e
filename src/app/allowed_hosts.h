#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace hookrelay::app {

// The Host header values requests may carry ([server] allowed_hosts): a defence against DNS
// rebinding, where a page on another site points its own name at this server's address so that
// the victim's browser reaches /metrics, /in/* or the dashboard with that name in Host.
//
// Matching: the host is compared ASCII case-insensitively, a trailing dot ignored
// ("Relay.Example.COM." is "relay.example.com"); an entry with a port matches only a Host with
// that port, an entry without one matches the host with any port or none. IPv6 addresses are
// written in brackets, as in Host: "[::1]:8080".
//
// Immutable after Parse; thread-safe.
class AllowedHosts {
 public:
  AllowedHosts() = default;  // no entries: every Host is allowed

  // Entries "name", "name:port", "192.0.2.1:8080", "[::1]" or "[::1]:8080". Errors are
  // InvalidArgument naming the entry's field, "allowed_hosts[1]", and what is wrong with it
  // (a URL's scheme or path, a port outside 1-65535, a character no host name has).
  static Result<AllowedHosts> Parse(const std::vector<std::string>& entries);

  bool empty() const { return entries_.empty(); }

  // True when there are no entries, or `host` (a Host field's value; nullopt when the request
  // has none) matches one of them. A request without Host matches nothing.
  bool Allows(std::optional<std::string_view> host) const;

  bool operator==(const AllowedHosts&) const = default;

 private:
  struct Entry {
    std::string host;  // lower case, no trailing dot; IPv6 in brackets
    std::optional<uint16_t> port;
    bool operator==(const Entry&) const = default;
  };
  std::vector<Entry> entries_;
};

}  // namespace hookrelay::app
