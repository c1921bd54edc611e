#include "http/session.h"

#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/status.hpp>
#include <charconv>
#include <utility>

#include "common/ascii.h"
#include "common/units.h"

namespace hookrelay::http {
namespace {

namespace bhttp = boost::beast::http;

// A connection's read buffer is shrunk back when a large body made it grow beyond this.
constexpr size_t kMaxIdleBufferCapacity = 32 * 1024;
// How long a closing connection keeps reading (and discarding) after its last response, so that
// unread request bytes do not turn the close into a reset that destroys the response.
constexpr Duration kMaxLinger = std::chrono::seconds(2);
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
constexpr size_t kHeadReadSize = RequestReader::kHeadReadSize;

// A handler-supplied field is sent only when it cannot break the framing of the response.
bool IsSendableField(const std::pair<std::string, std::string>& field) {
  const auto& [name, value] = field;
  if (!IsHttpToken(name)) return false;
  if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) return false;
  return !EqualsIgnoreCase(name, "content-length") &&
         !EqualsIgnoreCase(name, "transfer-encoding") && !EqualsIgnoreCase(name, "connection");
}

void AppendNumber(std::string& out, uint64_t n) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, end);
}

// Shared by all copies of one Responder: the first call wins; if none comes, a 500 goes out.
struct ResponderState {
  ResponderState(std::shared_ptr<Session> s, uint64_t q) : session(std::move(s)), seq(q) {}
  ~ResponderState() {
    if (!done.load(std::memory_order_acquire)) {
      session->Deliver(seq, JsonError(500, "internal",
                                      "the request handler dropped the request without answering"));
    }
  }
  void Complete(Response response) {
    if (done.exchange(true, std::memory_order_acq_rel)) return;
    session->Deliver(seq, std::move(response));
  }

  std::shared_ptr<Session> session;
  uint64_t seq;
  std::atomic<bool> done{false};
};

}  // namespace

Session::Session(std::shared_ptr<Worker> worker, Socket socket,
                 std::shared_ptr<asio::ssl::context> tls, const tcp::endpoint& peer, bool counted)
    : worker_(std::move(worker)),
      stream_(std::move(socket), std::move(tls)),
      remote_address_(peer.address().to_string()),
      remote_port_(peer.port()),
      client_(ClientKeyOf(peer.address())),
      peer_address_(peer.address()),
      peer_is_proxy_(worker_->options.trusted_proxies.Contains(peer.address())),
      counted_(counted),
      reader_(worker_->options.header_limit) {}

void Session::Link() {
  worker_->sessions.push_front(shared_from_this());
  self_it_ = worker_->sessions.begin();
  linked_ = true;
  reservation_.Bind(worker_->server->body_budget, client_);
}

void Session::ForwardedClient() {
  // Every Forwarded and every X-Forwarded-For field, in order, as one list each (RFC 9110: a
  // repeated field is its values joined with commas).
  std::optional<std::string> forwarded;
  std::optional<std::string> x_forwarded_for;
  for (const auto& [name, value] : request_.headers) {
    std::optional<std::string>* list = EqualsIgnoreCase(name, "forwarded") ? &forwarded
                                       : EqualsIgnoreCase(name, "x-forwarded-for")
                                           ? &x_forwarded_for
                                           : nullptr;
    if (list == nullptr) continue;
    *list = *list ? **list + "," + value : value;
  }
  const asio::ip::address client =
      ClientAddress(worker_->options.trusted_proxies, peer_address_, forwarded, x_forwarded_for);
  request_.remote_address = client.to_string();
  // The body budget's share is the client's, not the proxy's. Between requests nothing is held.
  if (reservation_.held() == 0) {
    reservation_.Bind(worker_->server->body_budget, ClientKeyOf(client));
  }
}

void Session::Start() {
  Link();
  error_code ec;
  // Responses go out in one write each; don't let Nagle hold back the tail of one.
  stream_.socket().set_option(tcp::no_delay(true), ec);
  if (stream_.tls()) {
    Handshake();
  } else {
    StartRequest(worker_->options.header_timeout);
  }
}

void Session::Refuse(Response response) {
  Link();
  keep_alive_ = false;
  response.headers.emplace_back("Retry-After", "1");
  if (stream_.tls()) {
    refusal_ = std::move(response);
    Handshake();
    return;
  }
  Respond(std::move(response), /*close=*/true);
}

// The handshake and the first request byte share header_timeout, as a plain connection's
// first byte alone does: a client gains no extra time by dawdling over the handshake. Until it
// completes the connection counts as idle (evictable, closed at drain).
void Session::Handshake() {
  phase_ = Phase::kHandshake;
  MarkIdle(true);
  SetDeadline(worker_->options.header_timeout);
  stream_.AsyncHandshake(
      [self = shared_from_this()](const error_code& ec) { self->OnHandshake(ec); });
}

void Session::OnHandshake(const error_code& ec) {
  if (phase_ != Phase::kHandshake) return;  // closed meanwhile (timeout, eviction, drain)
  if (ec) {
    worker_->server->stats->tls_handshake_failures.fetch_add(1, std::memory_order_relaxed);
    Close();
    return;
  }
  if (refusal_) {
    Response response = std::move(*refusal_);
    refusal_.reset();
    Respond(std::move(response), /*close=*/true);
    return;
  }
  const auto left = std::chrono::duration_cast<Duration>(deadline_ - SteadyClock::now());
  StartRequest(std::max(left, Duration(0)));
}

void Session::MarkIdle(bool idle) {
  if (idle == marked_idle_ || !counted_) return;
  marked_idle_ = idle;
  worker_->idle.fetch_add(idle ? 1 : -1, std::memory_order_relaxed);
}

void Session::StartRequest(Duration first_byte_wait) {
  if (worker_->draining) {
    Close();
    return;
  }
  reader_.Begin(request_, reservation_);
  version_ = 11;
  keep_alive_ = true;
  head_only_ = false;
  if (buffer_.size() > 0) {  // pipelined
    EnterHead();
    Parse();
  } else {
    phase_ = Phase::kIdle;
    MarkIdle(true);
    SetDeadline(first_byte_wait);
    Read(kHeadReadSize);
  }
}

void Session::EnterHead() {
  phase_ = Phase::kHead;
  used_ = true;
  MarkIdle(false);
  SetDeadline(worker_->options.header_timeout);
  BeginInFlight();
}

void Session::Read(size_t size) {
  read_pending_ = true;
  stream_.AsyncReadSome(
      buffer_.prepare(size),
      [self = shared_from_this()](const error_code& ec, size_t n) { self->OnRead(ec, n); });
}

void Session::OnRead(const error_code& ec, size_t n) {
  read_pending_ = false;
  if (phase_ == Phase::kClosed) return;
  buffer_.commit(n);
  switch (phase_) {
    case Phase::kIdle:
    case Phase::kHead:
    case Phase::kBody: break;
    case Phase::kLinger:
      if (ec) {
        Close();
      } else {
        buffer_.consume(buffer_.size());
        Read(kHeadReadSize);
      }
      return;
    default: return;  // a read left pending when a timeout answered; the connection is closing
  }
  if (ec) {
    // EOF or reset: the client went away; a partial request cannot be answered.
    Close();
    return;
  }
  if (phase_ == Phase::kIdle) EnterHead();
  Parse();
}

void Session::Parse() {
  while (true) {
    RequestReader::Step step = reader_.Advance(buffer_);
    switch (step.event) {
      case RequestReader::Event::kNeedMore: Read(step.read_size); return;
      case RequestReader::Event::kHead:
        if (!OnHeadComplete()) return;
        continue;
      case RequestReader::Event::kComplete: Dispatch(); return;
      case RequestReader::Event::kError:
        Fail(step.error.status, step.error.code, std::move(step.error.message));
        return;
      case RequestReader::Event::kBodyTooLarge:
        Fail(413, "payload_too_large", "request body exceeds " + BodyLimitText(body_limit_));
        return;
      case RequestReader::Event::kOutOfBodyMemory: RefuseBody(step.refusal); return;
    }
  }
}

// Returns true when the body should be read now; false when the request was answered or a
// 100 Continue is being written first.
bool Session::OnHeadComplete() {
  const ServerOptions& options = worker_->options;
  version_ = request_.version;
  keep_alive_ = reader_.keep_alive();
  head_only_ = request_.method == "HEAD";
  if (std::optional<ParseError> error = reader_.CompleteHead()) {
    Fail(error->status, error->code, std::move(error->message));
    return false;
  }
  request_.remote_address = remote_address_;
  request_.remote_port = remote_port_;
  if (peer_is_proxy_) ForwardedClient();
  const bool has_body = reader_.has_body();

  Handler::HeadDecision decision;
  try {
    decision = worker_->handler.OnHead(request_);
  } catch (const std::exception&) {
    decision.reject = JsonError(500, "internal", "the request handler failed");
  }
  if (decision.reject) {
    // The body was not read, so the connection cannot carry another request.
    if (has_body) keep_alive_ = false;
    Respond(std::move(*decision.reject), !keep_alive_ || Closing());
    return false;
  }
  const uint64_t limit = decision.body_limit.value_or(options.default_body_limit);
  if (request_.content_length && *request_.content_length > limit) {
    Fail(413, "payload_too_large",
         "request body of " + std::to_string(*request_.content_length) +
             " bytes exceeds the limit of " + FormatByteSize(limit));
    return false;
  }
  // A body that could not fit max_body_memory (or this client's max_body_memory_per_client)
  // even with no other body in memory: 413, as retrying cannot help (503 with Retry-After is
  // for bodies that fit an empty budget).
  body_limit_ =
      EffectiveBodyLimit(limit, options.max_body_memory, options.max_body_memory_per_client);
  if (request_.content_length && *request_.content_length > body_limit_.bytes) {
    Fail(413, "payload_too_large",
         "request body of " + std::to_string(*request_.content_length) + " bytes exceeds " +
             BodyLimitText(body_limit_));
    return false;
  }
  if (!has_body) return true;
  // Nothing is reserved yet: the body's memory is taken as its bytes arrive.
  reader_.StartBody(body_limit_.bytes);
  phase_ = Phase::kBody;
  SetDeadline(options.body_timeout);
  // Clients that sent Expect: 100-continue wait for this before sending the body (curl waits a
  // second); skip it when the body is already arriving.
  if (reader_.expect_continue() && version_ >= 11 && buffer_.size() == 0) {
    WriteContinue();
    return false;
  }
  return true;
}

void Session::WriteContinue() {
  phase_ = Phase::kContinue;
  SetDeadline(worker_->options.write_timeout);
  stream_.AsyncWrite(asio::buffer(kContinue.data(), kContinue.size()),
                     [self = shared_from_this()](const error_code& ec, size_t) {
                       if (self->phase_ != Phase::kContinue) return;
                       if (ec) {
                         self->Close();
                         return;
                       }
                       self->phase_ = Phase::kBody;
                       self->SetDeadline(self->worker_->options.body_timeout);
                       self->Parse();
                     });
}

void Session::Dispatch() {
  phase_ = Phase::kHandler;
  deadline_ = kNoDeadline;  // the handler takes as long as it takes
  auto state = std::make_shared<ResponderState>(shared_from_this(), ++seq_);
  Responder respond(
      [state = std::move(state)](Response response) { state->Complete(std::move(response)); });
  try {
    worker_->handler.OnRequest(std::move(request_), std::move(respond));
  } catch (const std::exception&) {
    // The Responder copies destroyed during unwinding answer 500 unless one was called.
  }
}

void Session::Deliver(uint64_t seq, Response response) {
  if (worker_->ioc.get_executor().running_in_this_thread()) {
    OnResponse(seq, std::move(response));
    return;
  }
  MutexLock lock(worker_->post_mu);
  if (worker_->stopped.load(std::memory_order_relaxed)) return;
  worker_->answers.push_back({shared_from_this(), seq, std::move(response)});
  if (worker_->answers.size() == 1) {
    asio::post(worker_->ioc, [worker = worker_] { worker->DeliverAnswers(); });
  }
}

void Session::OnResponse(uint64_t seq, Response response) {
  if (phase_ != Phase::kHandler || seq != seq_) return;  // closed meanwhile, or a stale call
  Respond(std::move(response), !keep_alive_ || Closing());
}

void Session::Fail(int status, std::string_view code, std::string message) {
  keep_alive_ = false;
  Respond(JsonError(status, code, message), /*close=*/true);
}

// "the limit of 5MiB", naming the setting when body_limit_ is a memory limit.
void Session::RefuseBody(BodyBudget::Refusal why) {
  const ServerOptions& options = worker_->options;
  ServerStats& stats = *worker_->server->stats;
  // Only bodies that fit an empty budget get here (larger ones are 413).
  std::string message;
  if (why == BodyBudget::Refusal::kClient) {
    stats.refused_max_body_memory_per_client.fetch_add(1, std::memory_order_relaxed);
    message = "too many request bodies in memory from " + remote_address_ +
              " (max_body_memory_per_client " + FormatByteSize(options.max_body_memory_per_client) +
              "); retry shortly";
  } else {
    stats.refused_max_body_memory.fetch_add(1, std::memory_order_relaxed);
    message = "too many request bodies in memory (max_body_memory " +
              FormatByteSize(options.max_body_memory) + "); retry shortly";
  }
  Response response = JsonError(503, "unavailable", message);
  response.headers.emplace_back("Retry-After", "1");
  keep_alive_ = false;
  Respond(std::move(response), /*close=*/true);
}

void Session::Respond(Response response, bool close) {
  reservation_.Release();  // answered: the body's share of max_body_memory goes back
  int status = response.status;
  if (status < 200 || status > 599) status = 500;
  const bool no_body = status == 204 || status == 304;
  SerializeHead(response, status, close);
  if (no_body || head_only_) {
    out_body_.clear();
  } else {
    out_body_ = std::move(response.body);
  }
  phase_ = Phase::kWrite;
  SetDeadline(worker_->options.write_timeout);
  close_after_write_ = close;
  std::array<asio::const_buffer, 2> buffers{asio::buffer(out_head_), asio::buffer(out_body_)};
  stream_.AsyncWrite(
      buffers, [self = shared_from_this()](const error_code& ec, size_t) { self->OnWritten(ec); });
}

void Session::SerializeHead(const Response& response, int status, bool close) {
  std::string& h = out_head_;
  h.clear();
  h.append("HTTP/1.1 ");
  AppendNumber(h, static_cast<uint64_t>(status));
  h.push_back(' ');
  const auto known = bhttp::int_to_status(static_cast<unsigned>(status));
  if (known != bhttp::status::unknown) {
    boost::beast::string_view reason = bhttp::obsolete_reason(known);
    h.append(reason.data(), reason.size());
  }
  h.append("\r\n");
  bool has_content_type = false;
  for (const auto& field : response.headers) {
    if (!IsSendableField(field)) continue;
    if (EqualsIgnoreCase(field.first, "content-type")) has_content_type = true;
    h.append(field.first).append(": ").append(field.second).append("\r\n");
  }
  if (!has_content_type && !response.content_type.empty() &&
      response.content_type.find_first_of("\r\n") == std::string::npos) {
    h.append("Content-Type: ").append(response.content_type).append("\r\n");
  }
  if (status != 204 && status != 304) {
    h.append("Content-Length: ");
    AppendNumber(h, response.body.size());
    h.append("\r\n");
  }
  if (close) {
    h.append("Connection: close\r\n");
  } else if (version_ < 11) {
    h.append("Connection: keep-alive\r\n");
  }
  h.append("\r\n");
}

void Session::OnWritten(const error_code& ec) {
  if (phase_ != Phase::kWrite) return;
  EndInFlight();
  out_body_ = std::string();  // release a large body now, not at the next response
  if (ec) {
    Close();
    return;
  }
  if (close_after_write_) {
    Linger();
    return;
  }
  if (buffer_.size() == 0 && buffer_.capacity() > kMaxIdleBufferCapacity) buffer_.shrink_to_fit();
  StartRequest(worker_->options.idle_timeout);
}

void Session::Linger() {
  phase_ = Phase::kLinger;
  SetDeadline(std::min(kMaxLinger, worker_->options.idle_timeout));
  error_code ec;
  stream_.ShutdownSend(ec);
  if (ec) {
    Close();
    return;
  }
  buffer_.consume(buffer_.size());
  if (!read_pending_) Read(kHeadReadSize);
}

void Session::OnDeadline() {
  const ServerOptions& options = worker_->options;
  switch (phase_) {
    case Phase::kHead:
      Fail(408, "request_timeout",
           "request headers not received within " + FormatDuration(options.header_timeout));
      break;
    case Phase::kBody:
      Fail(408, "request_timeout",
           "request body not received within " + FormatDuration(options.body_timeout));
      break;
    case Phase::kHandshake:
      worker_->server->stats->tls_handshake_failures.fetch_add(1, std::memory_order_relaxed);
      Close();
      break;
    case Phase::kIdle:
    case Phase::kContinue:
    case Phase::kWrite:
    case Phase::kLinger: Close(); break;
    case Phase::kHandler:
    case Phase::kClosed: break;
  }
}

void Session::Close() {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  deadline_ = kNoDeadline;
  EndInFlight();
  MarkIdle(false);
  reservation_.Release();
  error_code ec;
  stream_.Close(ec);  // completes pending operations with operation_aborted
  Server::Impl& server = *worker_->server;
  if (counted_) {
    server.stats->connections.fetch_sub(1, std::memory_order_relaxed);
    server.clients.Remove(client_);
  } else {
    server.refusing.fetch_sub(1, std::memory_order_relaxed);
  }
  if (linked_) {
    linked_ = false;
    // May be the last reference; it is released when this function returns.
    std::shared_ptr<Session> keep = std::move(*self_it_);
    worker_->sessions.erase(self_it_);
  }
}

void Session::BeginInFlight() {
  if (in_flight_) return;
  in_flight_ = true;
  ++worker_->in_flight;
}

void Session::EndInFlight() {
  if (!in_flight_) return;
  in_flight_ = false;
  if (--worker_->in_flight == 0 && worker_->draining) worker_->ReportDrained();
}

}  // namespace hookrelay::http
