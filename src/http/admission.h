#pragma once

// Who a connection belongs to, and how many connections each client may hold open
// (ServerOptions::max_connections_per_client). Pure: no sockets, no clock.

#include <array>
#include <boost/asio/ip/address.hpp>
#include <map>

#include "common/mutex.h"

namespace hookrelay::http {

// Connections and body memory are counted per client: an IPv4 address, or the /64 of an IPv6
// address (one host usually has a whole /64). IPv4-mapped IPv6 addresses count as IPv4.
using ClientKey = std::array<unsigned char, 17>;

ClientKey ClientKeyOf(const boost::asio::ip::address& address);

// Open connections per client, capped at `max_per_client` each (0: no cap). Thread-safe.
class ClientConnections {
 public:
  explicit ClientConnections(int max_per_client) : max_per_client_(max_per_client) {}

  // Counts one more connection for `client`; false (and nothing counted) past the cap, unless
  // `uncapped` (a trusted proxy's connections: they are many clients').
  bool Add(const ClientKey& client, bool uncapped = false);
  // One connection of `client` closed. Unknown clients are ignored.
  void Remove(const ClientKey& client);
  // Open connections counted for `client`.
  int Count(const ClientKey& client) const;
  // Clients with at least one connection counted (the table holds no others).
  size_t clients() const;

 private:
  const int max_per_client_;  // 0: none
  mutable Mutex mu_;
  std::map<ClientKey, int> clients_ GUARDED_BY(mu_);
};

}  // namespace hookrelay::http
