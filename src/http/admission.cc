#include "http/admission.h"

#include <algorithm>

namespace hookrelay::http {

namespace asio = boost::asio;

ClientKey ClientKeyOf(const asio::ip::address& address) {
  ClientKey key{};
  if (address.is_v6() && !address.to_v6().is_v4_mapped()) {
    auto bytes = address.to_v6().to_bytes();
    std::copy(bytes.begin(), bytes.begin() + 8, key.begin());
    key[16] = 6;
    return key;
  }
  auto v4 = address.is_v4() ? address.to_v4()
                            : asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  auto bytes = v4.to_bytes();
  std::copy(bytes.begin(), bytes.end(), key.begin());
  key[16] = 4;
  return key;
}

bool ClientConnections::Add(const ClientKey& client, bool uncapped) {
  MutexLock lock(mu_);
  int& count = clients_[client];
  if (!uncapped && max_per_client_ > 0 && count >= max_per_client_) {
    if (count == 0) clients_.erase(client);
    return false;
  }
  ++count;
  return true;
}

void ClientConnections::Remove(const ClientKey& client) {
  MutexLock lock(mu_);
  auto it = clients_.find(client);
  if (it != clients_.end() && --it->second <= 0) clients_.erase(it);
}

int ClientConnections::Count(const ClientKey& client) const {
  MutexLock lock(mu_);
  auto it = clients_.find(client);
  return it == clients_.end() ? 0 : it->second;
}

size_t ClientConnections::clients() const {
  MutexLock lock(mu_);
  return clients_.size();
}

}  // namespace hookrelay::http
