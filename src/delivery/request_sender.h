#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "model/destination.h"
#include "policy/outcome.h"

namespace hookrelay::delivery {

// How much of a response body an attempt keeps (its snippet), unless the sender's options say else.
inline constexpr size_t kSnippetLimit = 4096;

// One attempt to make.
struct SendRequest {
  uint64_t tag = 0;  // the caller's, echoed in the result (e.g. the delivery id)
  // The destination's kind (kinds/registry.h: KindOf), which picks the sender that carries it
  // (KindSenders); a kind's own sender ignores it. Points into the registry's table.
  std::string_view kind;
  std::string url;
  std::string method = "POST";  // another only when a transform says so
  // Every header to send, already complete (content-type, webhook-id, webhook-timestamp,
  // webhook-signature, user-agent, the destination's own). The sender adds only Content-Length
  // and Host, and suppresses "Expect: 100-continue".
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  Duration timeout = std::chrono::seconds(30);  // the whole attempt, connect included
  bool allow_private = false;  // this destination may resolve to loopback/private addresses
  // The destination's client certificate, key and CA bundle (PEM); null or empty: none, and the
  // system's CAs. A failure of the handshake or of either side's certificate check is
  // TransportError::kTls with an error_detail saying which ("the server requires a client
  // certificate …", "certificate verify failed: …").
  std::shared_ptr<const model::DestinationTls> tls;
  // The destination, for a kind whose sender reads settings of its own (model::Destination::redis:
  // the stream, its trimming; the URL as configured). The HTTP sender reads only the fields above,
  // so tests of it may leave this null.
  std::shared_ptr<const model::Destination> destination;
  // What a broker kind carries beside the headers (a stream entry's fields, a message's
  // properties): the event's source and its type ("" when its source's scheme gives none). The
  // HTTP sender does not send them (an HTTP endpoint has the forwarded headers).
  std::string source;
  std::string event_type;
};

// What one attempt produced.
struct SendResult {
  uint64_t tag = 0;
  TimePoint started_at{};
  Duration duration{0};
  // The status code, the transport error, or a broker's answer (policy::BrokerAnswer); the
  // Retry-After header if one was sent.
  policy::AttemptOutcome outcome;
  // The first `snippet_limit` bytes of the response body; for a broker kind, its reply (the
  // stream entry's id, the error it answered).
  std::string snippet;
  bool snippet_cut = false;  // the body went on past the snippet (or may have: read cut)
  std::string error_detail;  // the transport's message when there was no response
  // The request, handed back (its body and headers are not freed on the sender's thread, the
  // busiest; the caller frees them on its own). Empty when the sender failed it before starting.
  SendRequest request;
};

// Where the delivery engine sends its attempts: the engine's only way to the network. Each
// destination kind's sender implements it (kinds/http/http_sender.h: libcurl's HTTP), and
// KindSenders (kinds/registry.h) puts them behind one; the engine's unit tests use a scripted one
// that answers when the test says.
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
