#include "support/sink.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace hookrelay::testing {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

constexpr size_t kMaxHead = 1024 * 1024;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string_view Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 408: return "Request Timeout";
    case 410: return "Gone";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
  }
  return "Status";
}

// The path of a request-target: query dropped; scheme and authority of an absolute-form
// target stripped.
std::string PathOf(std::string_view target) {
  if (!target.starts_with("/")) {
    size_t scheme = target.find("://");
    if (scheme != std::string_view::npos) {
      size_t slash = target.find('/', scheme + 3);
      target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    }
  }
  return std::string(target.substr(0, target.find('?')));
}

std::optional<std::string> Base64DecodeOpenSsl(std::string_view text) {
  std::string in(text);
  while (in.size() % 4 != 0) in.push_back('=');
  std::string out(in.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  if (n < 0) return std::nullopt;
  size_t pad = 0;
  for (size_t i = in.size(); i > 0 && in[i - 1] == '=' && pad < 2; --i) ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

std::string Base64EncodeOpenSsl(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace

std::optional<std::string> SinkRequest::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (EqualsIgnoreCase(n, name)) return v;
  }
  return std::nullopt;
}

SinkResponse SinkResponse::Status(int status, std::string body) {
  SinkResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

SinkResponse SinkResponse::Reset() {
  SinkResponse r;
  r.action = Action::kReset;
  return r;
}

SinkResponse SinkResponse::Close() {
  SinkResponse r;
  r.action = Action::kClose;
  return r;
}

SinkResponse SinkResponse::EndlessBody(int status) {
  SinkResponse r;
  r.action = Action::kEndlessBody;
  r.status = status;
  return r;
}

SinkResponse SinkResponse::Hang() {
  SinkResponse r;
  r.action = Action::kHang;
  return r;
}

SinkResponse SinkResponse::HeadThenHang(int status) {
  SinkResponse r;
  r.action = Action::kHeadThenHang;
  r.status = status;
  r.body = std::string(100, 'x');  // announced, never sent
  return r;
}

SinkResponse SinkResponse::TrickleBody(int status, std::string body,
                                       std::chrono::milliseconds every) {
  SinkResponse r;
  r.action = Action::kTrickleBody;
  r.status = status;
  r.body = std::move(body);
  r.trickle = every;
  return r;
}

SinkResponse&& SinkResponse::WithHeader(std::string name, std::string value) && {
  headers.emplace_back(std::move(name), std::move(value));
  return std::move(*this);
}

SinkResponse&& SinkResponse::WithDelay(std::chrono::milliseconds d) && {
  delay = d;
  return std::move(*this);
}

class SinkConnection;

struct Sink::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};

  mutable std::mutex mu;
  mutable std::condition_variable cv;
  std::deque<SinkResponse> global_queue;                   // GUARDED_BY(mu)
  std::map<std::string, std::deque<SinkResponse>> queues;  // GUARDED_BY(mu)
  SinkResponse global_default;                             // GUARDED_BY(mu)
  std::map<std::string, SinkResponse> defaults;            // GUARDED_BY(mu)
  std::vector<SinkRequest> requests;                       // GUARDED_BY(mu)
  std::vector<std::weak_ptr<SinkConnection>> connections;  // GUARDED_BY(mu)
  std::vector<std::shared_ptr<SinkConnection>> parked;     // GUARDED_BY(mu): hung ones

  void Accept();
  // Records `request` and picks its response from the script.
  SinkResponse Record(SinkRequest request);
  void Park(std::shared_ptr<SinkConnection> c) {
    std::lock_guard<std::mutex> lock(mu);
    parked.push_back(std::move(c));
  }
};

// One accepted connection. Its operations run one at a time (read → act → read), so it needs
// no strand; Stop() touches it only after the I/O threads have been joined.
class SinkConnection : public std::enable_shared_from_this<SinkConnection> {
 public:
  SinkConnection(Sink::Impl* impl, tcp::socket socket, uint64_t id)
      : impl_(impl), socket_(std::move(socket)), timer_(impl->io), id_(id) {}

  void Start() { ReadMore(); }

  void Close() {
    error_code ec;
    timer_.cancel();
    socket_.close(ec);
  }

 private:
  void ReadMore() {
    if (impl_->stopping) return;
    socket_.async_read_some(asio::buffer(read_buf_),
                            [self = shared_from_this()](error_code ec, size_t n) {
                              if (ec) return;  // the client went away
                              self->in_.append(self->read_buf_.data(), n);
                              self->TryParse();
                            });
  }

  void TryParse() {
    if (impl_->stopping) return;
    size_t head_end = in_.find("\r\n\r\n");
    if (head_end == std::string::npos) {
      if (in_.size() > kMaxHead) return Close();
      return ReadMore();
    }
    std::string_view head(in_.data(), head_end);
    SinkRequest req;
    size_t line_end = head.find("\r\n");
    std::string_view request_line = head.substr(0, line_end);
    size_t sp1 = request_line.find(' ');
    size_t sp2 = request_line.rfind(' ');
    if (sp1 == std::string_view::npos || sp2 == sp1) return Close();
    req.method = std::string(request_line.substr(0, sp1));
    req.target = std::string(request_line.substr(sp1 + 1, sp2 - sp1 - 1));
    req.path = PathOf(req.target);
    const bool http10 = request_line.substr(sp2 + 1) == "HTTP/1.0";
    uint64_t content_length = 0;
    bool chunked = false;
    std::optional<std::string> connection_field;
    size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t end = head.find("\r\n", pos);
      if (end == std::string_view::npos) end = head.size();
      std::string_view field = head.substr(pos, end - pos);
      pos = end + 2;
      size_t colon = field.find(':');
      if (colon == std::string_view::npos) continue;
      std::string name(field.substr(0, colon));
      std::string value(Trim(field.substr(colon + 1)));
      if (EqualsIgnoreCase(name, "content-length")) {
        if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
            value.size() > 15) {
          return Close();
        }
        content_length = std::stoull(value);
      }
      if (EqualsIgnoreCase(name, "transfer-encoding")) chunked = true;
      if (EqualsIgnoreCase(name, "connection")) connection_field = value;
      req.headers.emplace_back(std::move(name), std::move(value));
    }
    if (chunked) {
      keep_alive_ = false;
      return Write(
          "HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    }
    const size_t body_start = head_end + 4;
    if (in_.size() - body_start < content_length) return ReadMore();
    req.body = in_.substr(body_start, content_length);
    in_.erase(0, body_start + content_length);
    req.connection = id_;
    req.arrived_steady = std::chrono::steady_clock::now();
    req.arrived_system = std::chrono::system_clock::now();
    if (http10) {
      keep_alive_ = connection_field && EqualsIgnoreCase(*connection_field, "keep-alive");
    } else {
      keep_alive_ = !(connection_field && EqualsIgnoreCase(*connection_field, "close"));
    }

    SinkResponse response = impl_->Record(std::move(req));
    if (response.delay.count() > 0) {
      timer_.expires_after(response.delay);
      timer_.async_wait([self = shared_from_this(), response](error_code ec) mutable {
        if (ec || self->impl_->stopping) return;
        self->Act(std::move(response));
      });
      return;
    }
    Act(std::move(response));
  }

  void Act(SinkResponse response) {
    using Action = SinkResponse::Action;
    error_code ec;
    switch (response.action) {
      case Action::kRespond: {
        std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " +
                          std::string(Reason(response.status)) + "\r\n";
        for (const auto& [n, v] : response.headers) {
          out += n + ": " + v + "\r\n";
          if (EqualsIgnoreCase(n, "connection") && EqualsIgnoreCase(v, "close")) {
            keep_alive_ = false;
          }
        }
        out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
        if (!keep_alive_) out += "Connection: close\r\n";
        out += "\r\n";
        out += response.body;
        return Write(std::move(out));
      }
      case Action::kReset:
        socket_.set_option(asio::socket_base::linger(true, 0), ec);
        socket_.close(ec);
        return;
      case Action::kClose:
        socket_.shutdown(tcp::socket::shutdown_both, ec);
        socket_.close(ec);
        return;
      case Action::kEndlessBody: {
        std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " +
                          std::string(Reason(response.status)) + "\r\n";
        for (const auto& [n, v] : response.headers) out += n + ": " + v + "\r\n";
        out += "Transfer-Encoding: chunked\r\n\r\n";
        out_ = std::move(out);
        return WriteEndless();
      }
      case Action::kHang: impl_->Park(shared_from_this()); return;
      case Action::kHeadThenHang:
      case Action::kTrickleBody: {
        std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " +
                          std::string(Reason(response.status)) + "\r\n";
        for (const auto& [n, v] : response.headers) out += n + ": " + v + "\r\n";
        out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n\r\n";
        out_ = std::move(out);
        const bool hang = response.action == Action::kHeadThenHang;
        asio::async_write(socket_, asio::buffer(out_),
                          [self = shared_from_this(), hang, response](error_code ec, size_t) {
                            if (ec) return;
                            if (hang) return self->impl_->Park(self);
                            self->Trickle(response.body, response.trickle);
                          });
        return;
      }
    }
  }

  // Writes `rest` one byte per `every`, until it is sent or a write fails.
  void Trickle(std::string rest, std::chrono::milliseconds every) {
    if (rest.empty() || impl_->stopping) return;
    timer_.expires_after(every);
    timer_.async_wait([self = shared_from_this(), rest, every](error_code ec) mutable {
      if (ec || self->impl_->stopping) return;
      self->out_ = rest.substr(0, 1);
      asio::async_write(self->socket_, asio::buffer(self->out_),
                        [self, rest = rest.substr(1), every](error_code ec, size_t) {
                          if (ec) return;
                          self->Trickle(rest, every);
                        });
    });
  }

  void Write(std::string data) {
    out_ = std::move(data);
    asio::async_write(socket_, asio::buffer(out_),
                      [self = shared_from_this()](error_code ec, size_t) {
                        if (ec) return;
                        if (!self->keep_alive_) {
                          error_code ignored;
                          self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
                          self->ReadUntilClosed();
                          return;
                        }
                        self->TryParse();  // a pipelined request may already be buffered
                      });
  }

  // After "Connection: close": drains until the client closes, so the response is not lost to
  // a reset caused by unread input.
  void ReadUntilClosed() {
    socket_.async_read_some(asio::buffer(read_buf_),
                            [self = shared_from_this()](error_code ec, size_t) {
                              if (ec || self->impl_->stopping) return;
                              self->ReadUntilClosed();
                            });
  }

  // Writes out_ (a head), then 16 KiB chunks forever, until a write fails.
  void WriteEndless() {
    if (impl_->stopping) return;
    asio::async_write(
        socket_, asio::buffer(out_), [self = shared_from_this()](error_code ec, size_t) {
          if (ec) return;
          static const std::string kChunk = "4000\r\n" + std::string(16384, 'x') + "\r\n";
          self->out_ = kChunk;
          self->WriteEndless();
        });
  }

  Sink::Impl* impl_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  uint64_t id_;
  std::array<char, 64 * 1024> read_buf_;
  std::string in_;
  std::string out_;
  bool keep_alive_ = true;
};

void Sink::Impl::Accept() {
  acceptor.async_accept([this](error_code ec, tcp::socket socket) {
    if (stopping) return;
    if (!ec) {
      std::shared_ptr<SinkConnection> c;
      {
        std::lock_guard<std::mutex> lock(mu);
        c = std::make_shared<SinkConnection>(this, std::move(socket), connections.size() + 1);
        connections.push_back(c);
      }
      c->Start();
    }
    Accept();
  });
}

SinkResponse Sink::Impl::Record(SinkRequest request) {
  std::lock_guard<std::mutex> lock(mu);
  SinkResponse response = global_default;
  if (auto q = queues.find(request.path); q != queues.end() && !q->second.empty()) {
    response = std::move(q->second.front());
    q->second.pop_front();
  } else if (!global_queue.empty()) {
    response = std::move(global_queue.front());
    global_queue.pop_front();
  } else if (auto d = defaults.find(request.path); d != defaults.end()) {
    response = d->second;
  }
  requests.push_back(std::move(request));
  cv.notify_all();
  return response;
}

Sink::Sink() : impl_(std::make_shared<Impl>()) {
  error_code ec;
  tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("sink: cannot listen on 127.0.0.1:0: " + ec.message());
  impl_->Accept();
  for (int i = 0; i < 2; ++i) {
    impl_->threads.emplace_back([impl = impl_.get()] { impl->io.run(); });
  }
}

Sink::~Sink() {
  impl_->stopping = true;
  impl_->io.stop();
  for (auto& t : impl_->threads) t.join();
  // No I/O thread runs now: close everything, then let the aborted handlers drain so the
  // connections they hold are released before the io_context goes.
  error_code ec;
  impl_->acceptor.close(ec);
  std::vector<std::weak_ptr<SinkConnection>> connections;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    connections = impl_->connections;
    impl_->parked.clear();
  }
  for (auto& weak : connections) {
    if (auto c = weak.lock()) c->Close();
  }
  impl_->io.restart();
  impl_->io.run();
}

uint16_t Sink::port() const { return impl_->acceptor.local_endpoint().port(); }

std::string Sink::url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(port()) + std::string(path);
}

void Sink::Enqueue(SinkResponse response) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->global_queue.push_back(std::move(response));
}

void Sink::Enqueue(const std::string& path, SinkResponse response) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->queues[path].push_back(std::move(response));
}

void Sink::SetDefault(SinkResponse response) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->global_default = std::move(response);
}

void Sink::SetDefault(const std::string& path, SinkResponse response) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->defaults[path] = std::move(response);
}

std::vector<SinkRequest> Sink::Requests() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->requests;
}

size_t Sink::RequestCount() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->requests.size();
}

bool Sink::WaitForRequests(size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(impl_->mu);
  return impl_->cv.wait_for(lock, timeout, [&] { return impl_->requests.size() >= n; });
}

size_t Sink::ConnectionCount() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->connections.size();
}

std::vector<size_t> Sink::ArrivalsPerSecond(std::optional<std::string> path) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<size_t> histogram;
  std::optional<std::chrono::steady_clock::time_point> first;
  for (const SinkRequest& r : impl_->requests) {
    if (path && r.path != *path) continue;
    if (!first || r.arrived_steady < *first) first = r.arrived_steady;
  }
  if (!first) return histogram;
  for (const SinkRequest& r : impl_->requests) {
    if (path && r.path != *path) continue;
    auto second = static_cast<size_t>(
        std::chrono::duration_cast<std::chrono::seconds>(r.arrived_steady - *first).count());
    if (histogram.size() <= second) histogram.resize(second + 1);
    ++histogram[second];
  }
  return histogram;
}

bool VerifyStandardSignature(const SinkRequest& request, std::string_view secret,
                             std::string* why) {
  auto fail = [why](std::string message) {
    if (why != nullptr) *why = std::move(message);
    return false;
  };
  auto id = request.Header("webhook-id");
  auto timestamp = request.Header("webhook-timestamp");
  auto signatures = request.Header("webhook-signature");
  if (!id || !timestamp || !signatures) return fail("missing webhook-id/timestamp/signature");
  if (secret.starts_with("whsec_")) secret.remove_prefix(6);
  std::optional<std::string> key = Base64DecodeOpenSsl(secret);
  if (!key) return fail("the secret is not base64");
  const std::string content = *id + "." + *timestamp + "." + request.body;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  if (HMAC(EVP_sha256(), key->data(), static_cast<int>(key->size()),
           reinterpret_cast<const unsigned char*>(content.data()), content.size(), mac,
           &mac_len) == nullptr) {
    return fail("HMAC failed");
  }
  const std::string expected =
      "v1," + Base64EncodeOpenSsl(std::string_view(reinterpret_cast<char*>(mac), mac_len));
  std::string_view list = *signatures;
  while (!list.empty()) {
    size_t space = list.find(' ');
    std::string_view candidate = list.substr(0, space);
    if (candidate == expected) return true;
    if (space == std::string_view::npos) break;
    list.remove_prefix(space + 1);
  }
  return fail("no signature matches: expected " + expected + ", got " + *signatures);
}

}  // namespace hookrelay::testing
