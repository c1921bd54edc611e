#pragma once

// One connection: reads its requests (RequestReader), asks the Handler, writes the responses,
// and enforces its timeouts (through the worker's sweep). Runs on one worker's loop.

#include <boost/beast/core/flat_buffer.hpp>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "http/body_budget.h"
#include "http/request_parser.h"
#include "http/server_internal.h"
#include "http/stream.h"

namespace hookrelay::http {

// Lives on one worker's loop; every method except Deliver runs there.
//
// A TLS connection begins in kHandshake. Life cycle of each request: kIdle (no byte of it yet) →
// kHead → [kContinue] → kBody → kHandler (waiting for the Responder) → kWrite → back to kIdle, or
// kLinger → kClosed when the connection ends. `deadline_` is the end of the current phase; the
// worker's sweep enforces it.
class Session : public std::enable_shared_from_this<Session> {
 public:
  // `counted`: the connection is in stats->connections and the per-client count (else it is
  // being refused, and counted in Server::Impl::refusing). `tls`: the connection is TLS with
  // this context; null: plain TCP.
  Session(std::shared_ptr<Worker> worker, Socket socket, std::shared_ptr<asio::ssl::context> tls,
          const tcp::endpoint& peer, bool counted);

  void Start();
  // Writes `response` (a refusal; after the TLS handshake, over TLS) and closes.
  void Refuse(Response response);
  void Close();
  void OnDeadline();
  // Completes request `seq` with `response`. Any thread.
  void Deliver(uint64_t seq, Response response);
  // The same, on this connection's loop (Worker::DeliverAnswers).
  void OnResponse(uint64_t seq, Response response);

  // Neither reading a request nor answering one: safe to close when draining.
  bool idle() const {
    return phase_ == Phase::kIdle || phase_ == Phase::kHandshake || phase_ == Phase::kLinger;
  }
  // May be closed to make room for a new connection: it has not sent a byte of a request (a TLS
  // handshake under way counts as no byte).
  bool evictable() const {
    return (phase_ == Phase::kIdle || phase_ == Phase::kHandshake) && counted_;
  }
  // Some request came on this connection before (it is idle between keep-alive requests).
  bool used() const { return used_; }
  SteadyTime deadline() const { return deadline_; }

 private:
  enum class Phase {
    kHandshake,
    kIdle,
    kHead,
    kContinue,
    kBody,
    kHandler,
    kWrite,
    kLinger,
    kClosed
  };

  void Handshake();
  void OnHandshake(const error_code& ec);
  void StartRequest(Duration first_byte_wait);
  void EnterHead();
  void Read(size_t size);
  void OnRead(const error_code& ec, size_t n);
  void Parse();
  bool OnHeadComplete();
  void WriteContinue();
  void Dispatch();
  void Fail(int status, std::string_view code, std::string message);
  void RefuseBody(BodyBudget::Refusal why);
  void MarkIdle(bool idle);
  void Link();
  // A trusted proxy's request: its client's address (remote_address, the body budget's share).
  void ForwardedClient();
  void Respond(Response response, bool close);
  void SerializeHead(const Response& response, int status, bool close);
  void OnWritten(const error_code& ec);
  void Linger();
  void BeginInFlight();
  void EndInFlight();
  void SetDeadline(Duration d) { deadline_ = SteadyClock::now() + d; }
  bool Closing() const {
    return worker_->draining || worker_->closing.load(std::memory_order_relaxed);
  }

  std::shared_ptr<Worker> worker_;
  Stream stream_;
  std::list<std::shared_ptr<Session>>::iterator self_it_;
  bool linked_ = false;
  std::string remote_address_;
  uint16_t remote_port_ = 0;
  const ClientKey client_;
  const boost::asio::ip::address peer_address_;
  const bool peer_is_proxy_;  // a trusted proxy: its requests name their client
  const bool counted_;
  bool marked_idle_ = false;  // counted in worker_->idle
  bool used_ = false;         // a request began on this connection
  BodyReservation reservation_;

  Phase phase_ = Phase::kIdle;
  // A refusal waiting for the TLS handshake to complete.
  std::optional<Response> refusal_;
  SteadyTime deadline_ = kNoDeadline;
  bool read_pending_ = false;
  bool in_flight_ = false;

  // Per request. The buffer persists across requests: it holds pipelined bytes.
  boost::beast::flat_buffer buffer_;
  Request request_;
  RequestReader reader_;
  uint64_t seq_ = 0;
  int version_ = 11;
  bool keep_alive_ = true;
  bool head_only_ = false;  // a HEAD request: send the head of the response only
  BodyLimit body_limit_;

  // The response being written; the head's buffer is reused across responses.
  std::string out_head_;
  std::string out_body_;
  bool close_after_write_ = false;
};

}  // namespace hookrelay::http
