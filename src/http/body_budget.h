#pragma once

// The memory for request bodies (ServerOptions::max_body_memory and max_body_memory_per_client):
// a shared budget, each connection's reservation against it, and the body limit a request gets
// once both memory limits are applied. Pure: no sockets, no clock.

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "common/mutex.h"
#include "http/admission.h"

namespace hookrelay::http {

// ServerOptions::max_body_memory for all connections together (one atomic, which is also the
// stats gauge) and max_body_memory_per_client for each client. Thread-safe.
class BodyBudget {
 public:
  enum class Refusal { kNone, kServer, kClient };

  // `total` is the gauge of bytes held by everyone; max_per_client 0: no per-client cap.
  BodyBudget(std::atomic<uint64_t>& total, uint64_t max_total, uint64_t max_per_client)
      : total_(total), max_total_(max_total), max_per_client_(max_per_client) {}

  // Adds `n` bytes for `client`; when that would pass a limit, takes nothing and says which
  // (the client's share is checked first).
  Refusal Take(const ClientKey& client, uint64_t n);
  // Gives back `n` bytes `client` took.
  void Give(const ClientKey& client, uint64_t n);

  // Bytes `client` holds now (0 without a per-client cap: only the total is kept then).
  uint64_t HeldBy(const ClientKey& client) const;
  // Clients holding bytes (the table holds no others).
  size_t clients() const;

 private:
  bool TakeTotal(uint64_t n);

  std::atomic<uint64_t>& total_;
  const uint64_t max_total_;
  const uint64_t max_per_client_;  // 0: none
  mutable Mutex mu_;
  std::map<ClientKey, uint64_t> per_client_ GUARDED_BY(mu_);  // only clients holding bytes
};

// Body bytes one connection holds against its BodyBudget. Taken as bytes arrive (never from a
// Content-Length alone, which costs a client nothing to announce), given back when the request
// is answered or the connection closes. One connection's: not thread-safe.
class BodyReservation {
 public:
  BodyReservation() = default;
  BodyReservation(BodyBudget& budget, const ClientKey& client) { Bind(budget, client); }
  ~BodyReservation() { Release(); }
  BodyReservation(const BodyReservation&) = delete;
  BodyReservation& operator=(const BodyReservation&) = delete;

  void Bind(BodyBudget& budget, const ClientKey& client) {
    budget_ = &budget;
    client_ = client;
  }
  // Adds `n` bytes; on a refusal nothing is taken.
  BodyBudget::Refusal Take(uint64_t n);
  // Makes the reservation at least `needed` bytes: it grows geometrically (doubling, by at least
  // 16 KiB) but never past max(cap, needed); when that step does not fit, by just what is needed.
  // On a refusal nothing more is taken.
  BodyBudget::Refusal Cover(uint64_t needed, uint64_t cap);
  void Release();
  uint64_t held() const { return held_; }

 private:
  BodyBudget* budget_ = nullptr;
  ClientKey client_{};
  uint64_t held_ = 0;
};

// The body limit a request gets: the handler's, lowered to max_body_memory and to
// max_body_memory_per_client (when set) since a body larger than those could never fit.
struct BodyLimit {
  enum class Kind { kHandler, kMemory, kClientMemory };  // which limit `bytes` is
  uint64_t bytes = 0;
  Kind kind = Kind::kHandler;
};
BodyLimit EffectiveBodyLimit(uint64_t handler_limit, uint64_t max_body_memory,
                             uint64_t max_body_memory_per_client);
// "the limit of 5MiB", naming the setting when the limit is a memory limit.
std::string BodyLimitText(const BodyLimit& limit);

}  // namespace hookrelay::http
