#pragma once

// Destination kinds, registered as extensions: each kind is a folder under src/delivery/kinds/
// (http/ is libcurl's HTTP transport) with a factory that makes its sender, and one table
// (registry.cc) maps a kind's name to that factory. The engine, scheduler, claimer and recorder
// never name a kind: they send through one RequestSender (KindSenders), which hands each request
// to the sender of its destination's kind. How to add a kind: docs/architecture.md.

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "delivery/request_sender.h"
#include "model/destination.h"

namespace hookrelay::delivery {

// What every kind's sender is built from (the node's settings; a kind reads what applies to it).
struct SenderSettings {
  // Loopback and private addresses may be destinations (server.allow_private_destinations).
  bool allow_private_destinations = false;
  // Open connections in all, a guard for the process's descriptors (see HttpSender::Options).
  // 0: no limit.
  int max_connections = 4096;
  // Sending threads (at least 1).
  int threads = 1;
};

// Makes a kind's sender. Starts what it needs (threads, connections) and stops it when destroyed.
using SenderFactory = std::unique_ptr<RequestSender> (*)(const SenderSettings& settings,
                                                         const Clock& clock);

struct DestinationKind {
  std::string_view name;  // the key, e.g. "http"
  SenderFactory make;
};

// Every registered kind, in registry.cc's order.
std::span<const DestinationKind> DestinationKinds();
// The registered kind named `name`; null when there is none.
const DestinationKind* FindDestinationKind(std::string_view name);

// The kind whose sender carries `d`'s attempts (model::Destination::kind): the one place that
// decides it. The string_view points into the table; for a kind that is not registered (which
// kind_registry_test rules out), into `d.kind`.
std::string_view KindOf(const model::Destination& d);

// One sender per registered kind behind one RequestSender: Send hands the request to the sender of
// SendRequest::kind (a kind not registered fails the attempt with TransportError::kOther, naming
// it). InFlight is the sum of theirs. Thread-safe as RequestSender says.
class KindSenders : public RequestSender {
 public:
  KindSenders(const SenderSettings& settings, const Clock& clock);
  ~KindSenders() override;  // destroys the kinds' senders, in the table's reverse order
  KindSenders(const KindSenders&) = delete;
  KindSenders& operator=(const KindSenders&) = delete;

  void Send(SendRequest request, Callback done) override;
  int InFlight() const override;

 private:
  struct Entry {
    std::string_view kind;
    std::unique_ptr<RequestSender> sender;
  };
  std::vector<Entry> senders_;  // made in the constructor, never changed after
  const Clock& clock_;
};

}  // namespace hookrelay::delivery
