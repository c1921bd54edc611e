#include "delivery/kinds/registry.h"

#include <utility>

#include "delivery/kinds/http/http_kind.h"
#include "delivery/kinds/redis/redis_kind.h"

namespace hookrelay::delivery {
namespace {

// The registry: one row per destination kind. A new kind is its folder and its row here.
constexpr DestinationKind kKinds[] = {
    {http::kKindName, &http::MakeSender},
    {redis::kKindName, &redis::MakeSender},
};

}  // namespace

std::span<const DestinationKind> DestinationKinds() { return kKinds; }

const DestinationKind* FindDestinationKind(std::string_view name) {
  for (const DestinationKind& k : kKinds) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string_view KindOf(const model::Destination& d) {
  if (const DestinationKind* k = FindDestinationKind(d.kind)) return k->name;
  // A kind the model knows and no sender carries (kind_registry_test keeps the lists equal):
  // KindSenders fails its attempts, naming it.
  return d.kind;
}

KindSenders::KindSenders(const SenderSettings& settings, const Clock& clock) : clock_(clock) {
  senders_.reserve(std::size(kKinds));
  for (const DestinationKind& k : kKinds) senders_.push_back({k.name, k.make(settings, clock)});
}

KindSenders::~KindSenders() {
  while (!senders_.empty()) senders_.pop_back();
}

void KindSenders::Send(SendRequest request, Callback done) {
  for (Entry& e : senders_) {
    if (e.kind == request.kind) {
      e.sender->Send(std::move(request), std::move(done));
      return;
    }
  }
  SendResult r;
  r.tag = request.tag;
  r.started_at = clock_.Now();
  r.outcome.error = policy::TransportError::kOther;
  r.error_detail = "no sender for destination kind \"" + std::string(request.kind) + "\"";
  r.request = std::move(request);
  done(std::move(r));
}

int KindSenders::InFlight() const {
  int n = 0;
  for (const Entry& e : senders_) n += e.sender->InFlight();
  return n;
}

}  // namespace hookrelay::delivery
