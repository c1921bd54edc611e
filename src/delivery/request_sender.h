#pragma once

#include <functional>

namespace hookrelay::delivery {

// Defined in delivery/sender.h, with the libcurl Sender.
struct SendRequest;
struct SendResult;

// Where the delivery engine sends its HTTP attempts: the engine's only way to the network. The
// libcurl `Sender` (sender.h) implements it; the engine's unit tests use a scripted one that
// answers when the test says.
//
// Contract: `done` is called exactly once per Send, with the result (a transport error, if the
// request could not be made), on a thread of the implementation's choosing (the libcurl sender:
// its own thread), possibly before Send returns. `done` must not block for long and must not
// destroy the sender. Thread-safe: Send may be called from several threads at once.
class RequestSender {
 public:
  using Callback = std::function<void(SendResult)>;

  virtual ~RequestSender() = default;

  virtual void Send(SendRequest request, Callback done) = 0;
  // Requests sent whose `done` has not yet been called.
  virtual int InFlight() const = 0;
};

}  // namespace hookrelay::delivery
