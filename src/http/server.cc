#include "http/server.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <charconv>
#include <future>

#include "common/thread_name.h"
#include "http/server_internal.h"
#include "http/session.h"
#include "http/tls_context.h"

namespace hookrelay::http {
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
  // A trusted reverse proxy carries many clients' connections: its own are not capped (each
  // request's client, from its forwarded fields, is what the per-client body budget counts).
  if (!clients.Add(key, options.trusted_proxies.Contains(peer.address()))) {
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
  asio::post(worker->ioc, [worker, socket = std::move(socket), peer, tls = TlsContext()]() mutable {
    if (worker->stopped.load(std::memory_order_relaxed)) {
      worker->server->stats->connections.fetch_sub(1, std::memory_order_relaxed);
      worker->server->clients.Remove(ClientKeyOf(peer.address()));
      return;
    }
    std::make_shared<Session>(worker, std::move(socket), std::move(tls), peer,
                              /*counted=*/true)
        ->Start();
  });
}

// Answers a refused connection (on `worker`, with a short lingering close so the answer is not
// lost to a reset), unless too many refusals are already under way. Over TLS the handshake comes
// first (bounded by header_timeout), so that the client can read the answer.
void Server::Impl::Refuse(const std::shared_ptr<Worker>& worker, Socket socket,
                          const tcp::endpoint& peer, Response response) {
  if (refusing.fetch_add(1, std::memory_order_relaxed) >= kMaxRefusing) {
    refusing.fetch_sub(1, std::memory_order_relaxed);
    error_code ignored;
    socket.close(ignored);
    return;
  }
  asio::post(worker->ioc, [worker, socket = std::move(socket), peer, tls = TlsContext(),
                           response = std::move(response)]() mutable {
    if (worker->stopped.load(std::memory_order_relaxed)) {
      worker->server->refusing.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
    std::make_shared<Session>(worker, std::move(socket), std::move(tls), peer,
                              /*counted=*/false)
        ->Refuse(std::move(response));
  });
}

std::shared_ptr<asio::ssl::context> Server::Impl::TlsContext() {
  if (!options.tls) return nullptr;  // plain HTTP: no lock on the accept path
  MutexLock lock(tls_mu);
  return tls_context;
}

Status Server::Impl::ReloadTls() {
  if (!options.tls) return Status::FailedPrecondition("the server has no TLS to reload");
  // Loaded without the lock: new connections keep getting the current context meanwhile.
  Result<std::shared_ptr<asio::ssl::context>> loaded = LoadTlsContext(*options.tls);
  if (!loaded.ok()) return loaded.status();
  std::shared_ptr<asio::ssl::context> old;
  {
    MutexLock lock(tls_mu);
    old = std::exchange(tls_context, std::move(loaded).value());
  }
  return Status::Ok();  // `old` goes now unless a connection still holds it
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
  // Before binding: a listener whose files are unusable never takes its port.
  std::shared_ptr<asio::ssl::context> tls_context;
  if (options.tls) {
    Result<std::shared_ptr<asio::ssl::context>> loaded = LoadTlsContext(*options.tls);
    if (!loaded.ok()) return loaded.status();
    tls_context = std::move(loaded).value();
  }

  auto impl = std::make_unique<Impl>(options, handler);
  {
    MutexLock lock(impl->tls_mu);
    impl->tls_context = std::move(tls_context);
  }
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
  const std::string scheme = options.tls ? "https://" : "http://";
  impl->url = shown.is_v6() ? scheme + "[" + shown.to_string() + "]:" + std::to_string(impl->port)
                            : scheme + shown.to_string() + ":" + std::to_string(impl->port);

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

Status Server::ReloadTls() { return impl_->ReloadTls(); }

}  // namespace hookrelay::http
