#include "http/server.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/status.hpp>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/thread_name.h"
#include "common/units.h"
#include "http/admission.h"
#include "http/body_budget.h"
#include "http/request_parser.h"

namespace hookrelay::http {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using SteadyClock = std::chrono::steady_clock;
using SteadyTime = SteadyClock::time_point;
using Socket = asio::basic_stream_socket<tcp, asio::io_context::executor_type>;
using Timer = asio::basic_waitable_timer<SteadyClock, asio::wait_traits<SteadyClock>,
                                         asio::io_context::executor_type>;

inline constexpr SteadyTime kNoDeadline = SteadyTime::max();

class Session;

// One event loop and its thread, plus the connections that live on it. Everything except
// `closing`, `stopped` and `post_mu` is touched only by this worker's thread (or after it was
// joined), which is what serializes a connection's work without locks.
struct Worker {
  Worker(Server::Impl& server, const ServerOptions& options, Handler& handler, Duration tick)
      : server(&server), options(options), handler(handler), tick(tick) {}

  void ArmSweep();
  void Sweep();
  bool CloseOldestIdle();
  void BeginDrain();
  void ReportDrained();
  void FinalDrain();

  // Declared first so it is destroyed last: sockets and timers below belong to it.
  asio::io_context ioc{1};
  asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
  Timer sweep_timer{ioc};
  std::list<std::shared_ptr<Session>> sessions;  // open connections; owning
  std::thread thread;

  int in_flight = 0;  // requests begun and not yet answered
  // Sessions with no byte of a request yet (Phase::kIdle), and closures of one of them that the
  // acceptor asked for and that have not run yet. Read by the acceptor to pick where to make room.
  std::atomic<int> idle{0};
  std::atomic<int> evictions_pending{0};
  bool draining = false;  // BeginDrain ran: idle connections are closed, no new requests
  // Set by Shutdown before anything else, so every response written after Shutdown began
  // carries Connection: close even before BeginDrain reaches this loop.
  std::atomic<bool> closing{false};
  bool drain_reported = false;

  // Responders on other threads take post_mu to check `stopped` and post atomically, so nothing
  // is posted once Shutdown has decided to stop the loop.
  Mutex post_mu;
  std::atomic<bool> stopped{false};
  // Responses completed on other threads, waiting for this loop: the first one queued posts
  // DeliverAnswers, which takes all that are queued by the time it runs. A batch of 202s
  // completed together by the store thus wakes the loop once, not once per response.
  struct Answer {
    std::shared_ptr<Session> session;
    uint64_t seq;
    Response response;
  };
  std::vector<Answer> answers GUARDED_BY(post_mu);
  std::vector<Answer> answering;  // this worker's thread only
  void DeliverAnswers();

  // Valid while the worker's loop runs (and during Shutdown); a Worker may outlive the Server
  // when a late Responder still holds one of its sessions, and then touches neither.
  Server::Impl* server;
  const ServerOptions options;
  Handler& handler;
  const Duration tick;
};

struct Server::Impl {
  Impl(const ServerOptions& options, Handler& handler) : options(options), handler(handler) {}

  void Accept();
  void Admit(const std::shared_ptr<Worker>& worker, Socket socket, const tcp::endpoint& peer);
  void Refuse(const std::shared_ptr<Worker>& worker, Socket socket, const tcp::endpoint& peer,
              Response response);
  void StopAccepting();
  void Shutdown(Duration grace);

  const ServerOptions options;
  Handler& handler;
  std::vector<std::shared_ptr<Worker>> workers;
  // Both live on workers[0]'s loop.
  std::optional<asio::basic_socket_acceptor<tcp, asio::io_context::executor_type>> acceptor;
  std::optional<Timer> accept_backoff;
  size_t next_worker = 0;  // used by the accepting thread only
  ServerStats own_stats;
  ServerStats* stats = options.stats ? options.stats : &own_stats;
  // Connections being answered with a refusal (not counted in stats->connections); bounded so
  // that refusing cannot itself exhaust descriptors.
  std::atomic<int> refusing{0};
  BodyBudget body_budget{stats->body_memory_bytes, options.max_body_memory,
                         options.max_body_memory_per_client};
  ClientConnections clients{options.max_connections_per_client};  // open connections per client
  uint16_t port = 0;
  std::string url;

  Mutex mu;
  std::condition_variable drained_cv;
  size_t drained GUARDED_BY(mu) = 0;  // workers with no request in flight while draining
  bool accepting GUARDED_BY(mu) = true;
  Mutex shutdown_mu;  // serializes Shutdown
  bool shut_down GUARDED_BY(shutdown_mu) = false;
};

// Lives on one worker's loop; every method except Deliver runs there.
//
// Life cycle of each request: kIdle (no byte of it yet) → kHead → [kContinue] → kBody →
// kHandler (waiting for the Responder) → kWrite → back to kIdle, or kLinger → kClosed when the
// connection ends. `deadline_` is the end of the current phase; the worker's sweep enforces it.
class Session : public std::enable_shared_from_this<Session> {
 public:
  // `counted`: the connection is in stats->connections and the per-client count (else it is
  // being refused, and counted in Server::Impl::refusing).
  Session(std::shared_ptr<Worker> worker, Socket socket, const tcp::endpoint& peer, bool counted);

  void Start();
  // Writes `response` (a refusal) and closes.
  void Refuse(Response response);
  void Close();
  void OnDeadline();
  // Completes request `seq` with `response`. Any thread.
  void Deliver(uint64_t seq, Response response);
  // The same, on this connection's loop (Worker::DeliverAnswers).
  void OnResponse(uint64_t seq, Response response);

  // Neither reading a request nor answering one: safe to close when draining.
  bool idle() const { return phase_ == Phase::kIdle || phase_ == Phase::kLinger; }
  // May be closed to make room for a new connection: it has not sent a byte of a request.
  bool evictable() const { return phase_ == Phase::kIdle && counted_; }
  // Some request came on this connection before (it is idle between keep-alive requests).
  bool used() const { return used_; }
  SteadyTime deadline() const { return deadline_; }

 private:
  enum class Phase { kIdle, kHead, kContinue, kBody, kHandler, kWrite, kLinger, kClosed };

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
  Socket socket_;
  std::list<std::shared_ptr<Session>>::iterator self_it_;
  bool linked_ = false;
  std::string remote_address_;
  uint16_t remote_port_ = 0;
  const ClientKey client_;
  const bool counted_;
  bool marked_idle_ = false;  // counted in worker_->idle
  bool used_ = false;         // a request began on this connection
  BodyReservation reservation_;

  Phase phase_ = Phase::kIdle;
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

namespace {

namespace bhttp = boost::beast::http;

// A connection's read buffer is shrunk back when a large body made it grow beyond this.
constexpr size_t kMaxIdleBufferCapacity = 32 * 1024;
// How long a closing connection keeps reading (and discarding) after its last response, so that
// unread request bytes do not turn the close into a reset that destroys the response.
constexpr Duration kMaxLinger = std::chrono::seconds(2);
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
constexpr size_t kHeadReadSize = RequestReader::kHeadReadSize;

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// A handler-supplied field is sent only when it cannot break the framing of the response.
bool IsSendableField(const std::pair<std::string, std::string>& field) {
  const auto& [name, value] = field;
  if (name.empty() || !std::all_of(name.begin(), name.end(), IsTokenChar)) return false;
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

Session::Session(std::shared_ptr<Worker> worker, Socket socket, const tcp::endpoint& peer,
                 bool counted)
    : worker_(std::move(worker)),
      socket_(std::move(socket)),
      remote_address_(peer.address().to_string()),
      remote_port_(peer.port()),
      client_(ClientKeyOf(peer.address())),
      counted_(counted),
      reader_(worker_->options.header_limit) {}

void Session::Link() {
  worker_->sessions.push_front(shared_from_this());
  self_it_ = worker_->sessions.begin();
  linked_ = true;
  reservation_.Bind(worker_->server->body_budget, client_);
}

void Session::Start() {
  Link();
  error_code ec;
  // Responses go out in one write each; don't let Nagle hold back the tail of one.
  socket_.set_option(tcp::no_delay(true), ec);
  StartRequest(worker_->options.header_timeout);
}

void Session::Refuse(Response response) {
  Link();
  keep_alive_ = false;
  response.headers.emplace_back("Retry-After", "1");
  Respond(std::move(response), /*close=*/true);
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
  socket_.async_read_some(
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
  asio::async_write(socket_, asio::buffer(kContinue.data(), kContinue.size()),
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
  asio::async_write(socket_, buffers, [self = shared_from_this()](const error_code& ec, size_t) {
    self->OnWritten(ec);
  });
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
  socket_.shutdown(tcp::socket::shutdown_send, ec);
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
  socket_.close(ec);  // completes pending operations with operation_aborted
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

namespace {

// Connections being answered with a refusal at the same time (each writes an error and
// lingers briefly); past this, further ones are closed without an answer.
constexpr int kMaxRefusing = 64;

Result<tcp::endpoint> ParseListen(const std::string& listen) {
  auto invalid = [&] {
    return Status::InvalidArgument("invalid listen address \"" + listen +
                                       "\": expected host:port, e.g. 127.0.0.1:8080 or [::1]:8080",
                                   "listen");
  };
  std::string_view s = listen;
  std::string host;
  std::string_view port_text;
  if (!s.empty() && s.front() == '[') {
    size_t close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':') {
      return invalid();
    }
    host = s.substr(1, close - 1);
    port_text = s.substr(close + 2);
  } else {
    size_t colon = s.rfind(':');
    if (colon == std::string_view::npos) return invalid();
    host = s.substr(0, colon);
    port_text = s.substr(colon + 1);
    if (host.find(':') != std::string::npos) return invalid();  // IPv6 needs brackets
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port > 65535) {
    return invalid();
  }
  if (host.empty()) host = "0.0.0.0";
  error_code addr_ec;
  asio::ip::address address = asio::ip::make_address(host, addr_ec);
  if (!addr_ec) return tcp::endpoint(address, static_cast<uint16_t>(port));
  // A host name ("localhost"): resolve once at start-up.
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  auto results = resolver.resolve(host, std::string(port_text), addr_ec);
  if (addr_ec || results.empty()) {
    return Status::InvalidArgument("cannot resolve listen host \"" + host + "\"", "listen");
  }
  return results.begin()->endpoint();
}

std::string LowerFirst(std::string s) {
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] + 32);
  return s;
}

Duration SweepTick(const ServerOptions& o) {
  Duration smallest = std::min({o.header_timeout, o.body_timeout, o.idle_timeout, o.write_timeout});
  return std::clamp(smallest / 8, Duration(5), Duration(500));
}

}  // namespace

void Worker::DeliverAnswers() {
  {
    MutexLock lock(post_mu);
    answering.swap(answers);
  }
  for (Answer& a : answering) a.session->OnResponse(a.seq, std::move(a.response));
  answering.clear();
}

void Worker::ArmSweep() {
  sweep_timer.expires_after(tick);
  sweep_timer.async_wait([this](const error_code& ec) {
    if (ec || stopped.load(std::memory_order_relaxed)) return;
    Sweep();
    ArmSweep();
  });
}

// Enforces deadlines. One timer per loop instead of one per connection keeps per-request work
// down to storing a time point.
void Worker::Sweep() {
  const SteadyTime now = SteadyClock::now();
  for (auto it = sessions.begin(); it != sessions.end();) {
    Session* s = it->get();
    ++it;  // s may unlink itself
    if (s->deadline() <= now) {
      auto keep = s->shared_from_this();
      s->OnDeadline();
    }
  }
}

// Closes one idle connection (no byte of a request yet) to make room for a new one: the oldest
// that never carried a request (what a client holding connections open leaves), else the oldest
// idle keep-alive connection. False when there is none.
bool Worker::CloseOldestIdle() {
  Session* victim = nullptr;
  for (auto it = sessions.rbegin(); it != sessions.rend(); ++it) {  // oldest first
    Session* s = it->get();
    if (!s->evictable()) continue;
    if (!s->used()) {
      victim = s;
      break;
    }
    if (victim == nullptr) victim = s;
  }
  if (victim == nullptr) return false;
  auto keep = victim->shared_from_this();
  // Counted before the close, so whoever sees the connection closed also sees it counted.
  server->stats->idle_closed.fetch_add(1, std::memory_order_relaxed);
  victim->Close();
  return true;
}

void Worker::BeginDrain() {
  draining = true;
  for (auto it = sessions.begin(); it != sessions.end();) {
    Session* s = it->get();
    ++it;
    if (s->idle()) {
      auto keep = s->shared_from_this();
      s->Close();
    }
  }
  if (in_flight == 0) ReportDrained();
}

void Worker::ReportDrained() {
  if (drain_reported) return;
  drain_reported = true;
  {
    MutexLock lock(server->mu);
    ++server->drained;
  }
  server->drained_cv.notify_all();
}

// REQUIRES: the thread was joined. Closes every connection and runs the loop until the aborted
// operations have completed, so no handler (and no session) is left queued in it.
void Worker::FinalDrain() {
  while (!sessions.empty()) sessions.front()->Close();
  sweep_timer.cancel();
  work.reset();
  ioc.restart();
  ioc.run();
  MutexLock lock(post_mu);  // (DeliverAnswers ran above; nothing is queued)
  answers.clear();
}

void Server::Impl::Accept() {
  if (!acceptor->is_open()) return;
  std::shared_ptr<Worker> worker = workers[next_worker];
  next_worker = (next_worker + 1) % workers.size();
  acceptor->async_accept(worker->ioc, [this, worker](const error_code& ec, Socket socket) mutable {
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
    if (ec) {
      // Out of descriptors or buffers: pause instead of spinning on the error.
      accept_backoff->expires_after(std::chrono::milliseconds(50));
      accept_backoff->async_wait([this](const error_code& wait_ec) {
        if (!wait_ec) Accept();
      });
      return;
    }
    error_code peer_ec;
    const tcp::endpoint peer = socket.remote_endpoint(peer_ec);
    if (peer_ec) {  // already gone
      socket.close(peer_ec);
    } else {
      Admit(worker, std::move(socket), peer);
    }
    Accept();
  });
}

// Runs on the accepting thread. Applies the per-client cap, then the global one: past
// max_connections the worker with the most idle connections closes its oldest one (the count
// may pass the limit by the few accepts that happen before those closes run).
void Server::Impl::Admit(const std::shared_ptr<Worker>& worker, Socket socket,
                         const tcp::endpoint& peer) {
  const ClientKey key = ClientKeyOf(peer.address());
  if (!clients.Add(key)) {
    stats->refused_max_connections_per_client.fetch_add(1, std::memory_order_relaxed);
    Refuse(worker, std::move(socket), peer,
           JsonError(429, "too_many_connections",
                     "too many connections from " + peer.address().to_string() +
                         " (max_connections_per_client " +
                         std::to_string(options.max_connections_per_client) + ")"));
    return;
  }
  const int64_t open = stats->connections.fetch_add(1, std::memory_order_relaxed) + 1;
  if (open > options.max_connections) {
    std::shared_ptr<Worker> victim;
    int most = 0;
    for (const auto& w : workers) {
      int room = w->idle.load(std::memory_order_relaxed) -
                 w->evictions_pending.load(std::memory_order_relaxed);
      if (room > most) {
        most = room;
        victim = w;
      }
    }
    if (!victim) {
      stats->connections.fetch_sub(1, std::memory_order_relaxed);
      clients.Remove(key);
      stats->refused_max_connections.fetch_add(1, std::memory_order_relaxed);
      Refuse(worker, std::move(socket), peer,
             JsonError(503, "unavailable",
                       "too many open connections (max_connections " +
                           std::to_string(options.max_connections) + "); retry shortly"));
      return;
    }
    victim->evictions_pending.fetch_add(1, std::memory_order_relaxed);
    asio::post(victim->ioc, [victim] {
      victim->evictions_pending.fetch_sub(1, std::memory_order_relaxed);
      victim->CloseOldestIdle();
    });
  }
  asio::post(worker->ioc, [worker, socket = std::move(socket), peer]() mutable {
    if (worker->stopped.load(std::memory_order_relaxed)) {
      worker->server->stats->connections.fetch_sub(1, std::memory_order_relaxed);
      worker->server->clients.Remove(ClientKeyOf(peer.address()));
      return;
    }
    std::make_shared<Session>(worker, std::move(socket), peer, /*counted=*/true)->Start();
  });
}

// Answers a refused connection (on `worker`, with a short lingering close so the answer is not
// lost to a reset), unless too many refusals are already under way.
void Server::Impl::Refuse(const std::shared_ptr<Worker>& worker, Socket socket,
                          const tcp::endpoint& peer, Response response) {
  if (refusing.fetch_add(1, std::memory_order_relaxed) >= kMaxRefusing) {
    refusing.fetch_sub(1, std::memory_order_relaxed);
    error_code ignored;
    socket.close(ignored);
    return;
  }
  asio::post(worker->ioc,
             [worker, socket = std::move(socket), peer, response = std::move(response)]() mutable {
               if (worker->stopped.load(std::memory_order_relaxed)) {
                 worker->server->refusing.fetch_sub(1, std::memory_order_relaxed);
                 return;
               }
               std::make_shared<Session>(worker, std::move(socket), peer, /*counted=*/false)
                   ->Refuse(std::move(response));
             });
}

void Server::Impl::StopAccepting() {
  {
    MutexLock lock(mu);
    if (!accepting) return;
    accepting = false;
  }
  auto close = [this] {
    error_code ec;
    acceptor->close(ec);
    accept_backoff->cancel();
  };
  Worker& w0 = *workers[0];
  if (w0.ioc.get_executor().running_in_this_thread() || w0.stopped.load()) {
    close();
    return;
  }
  std::promise<void> done;
  asio::post(w0.ioc, [&] {
    close();
    done.set_value();
  });
  done.get_future().wait();
}

void Server::Impl::Shutdown(Duration grace) {
  MutexLock shutdown_lock(shutdown_mu);
  if (shut_down) return;
  shut_down = true;
  const auto deadline = SteadyClock::now() + grace;
  for (auto& w : workers) w->closing.store(true, std::memory_order_relaxed);
  StopAccepting();
  for (auto& w : workers) asio::post(w->ioc, [w = w.get()] { w->BeginDrain(); });
  {
    // A gate (workers drained, counted under mu), on real time, not a Clock: the grace bounds how
    // long a shutdown takes, whatever time the application's clock says it is.
    MutexLock lock(mu);
    drained_cv.wait_until(lock, deadline, [&]() REQUIRES(mu) { return drained == workers.size(); });
  }
  for (auto& w : workers) {
    {
      MutexLock lock(w->post_mu);
      w->stopped = true;
    }
    w->ioc.stop();
  }
  for (auto& w : workers) {
    if (w->thread.joinable()) w->thread.join();
  }
  for (auto& w : workers) w->FinalDrain();
  acceptor.reset();
  accept_backoff.reset();
}

Result<std::unique_ptr<Server>> Server::Start(const ServerOptions& options, Handler& handler) {
  if (options.threads < 1) return Status::InvalidArgument("threads must be at least 1", "threads");
  if (options.max_connections < 1) {
    return Status::InvalidArgument("max_connections must be at least 1", "max_connections");
  }
  if (options.max_connections_per_client < 0) {
    return Status::InvalidArgument("max_connections_per_client must not be negative",
                                   "max_connections_per_client");
  }
  if (options.max_body_memory < 1) {
    return Status::InvalidArgument("max_body_memory must be at least 1 byte", "max_body_memory");
  }
  for (auto [d, name] : {std::pair{options.header_timeout, "header_timeout"},
                         std::pair{options.body_timeout, "body_timeout"},
                         std::pair{options.idle_timeout, "idle_timeout"},
                         std::pair{options.write_timeout, "write_timeout"}}) {
    if (d <= Duration(0))
      return Status::InvalidArgument(std::string(name) + " must be positive", name);
  }
  Result<tcp::endpoint> endpoint = ParseListen(options.listen);
  if (!endpoint.ok()) return endpoint.status();

  auto impl = std::make_unique<Impl>(options, handler);
  const Duration tick = SweepTick(options);
  for (int i = 0; i < options.threads; ++i) {
    impl->workers.push_back(std::make_shared<Worker>(*impl, options, handler, tick));
  }
  asio::io_context& ioc0 = impl->workers[0]->ioc;
  impl->acceptor.emplace(ioc0);
  impl->accept_backoff.emplace(ioc0);
  error_code ec;
  impl->acceptor->open(endpoint->protocol(), ec);
  if (!ec) impl->acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl->acceptor->bind(*endpoint, ec);
  if (!ec) impl->acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::Unavailable("cannot listen on " + options.listen + ": " +
                               LowerFirst(ec.message()));
  }
  tcp::endpoint bound = impl->acceptor->local_endpoint(ec);
  if (ec) return Status::Internal("cannot read the listening address: " + ec.message());
  impl->port = bound.port();
  asio::ip::address shown = bound.address();
  if (shown.is_unspecified()) {
    shown = shown.is_v6() ? asio::ip::address(asio::ip::address_v6::loopback())
                          : asio::ip::address(asio::ip::address_v4::loopback());
  }
  impl->url = shown.is_v6() ? "http://[" + shown.to_string() + "]:" + std::to_string(impl->port)
                            : "http://" + shown.to_string() + ":" + std::to_string(impl->port);

  impl->Accept();
  for (auto& w : impl->workers) {
    w->ArmSweep();
    w->thread = std::thread([w = w.get()] {
      // Process-control signals go to the application's threads, not to an I/O loop.
      sigset_t signals;
      sigemptyset(&signals);
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaddset(&signals, sig);
      pthread_sigmask(SIG_BLOCK, &signals, nullptr);
      NameThisThread("hr-http");
      w->ioc.run();
    });
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { impl_->Shutdown(Duration(0)); }

uint16_t Server::port() const { return impl_->port; }

const ServerStats& Server::stats() const { return *impl_->stats; }

std::string Server::url() const { return impl_->url; }

void Server::StopAccepting() { impl_->StopAccepting(); }

void Server::Shutdown(Duration grace) { impl_->Shutdown(grace); }

}  // namespace hookrelay::http
