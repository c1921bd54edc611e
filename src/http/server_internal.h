#pragma once

// The server's internals, shared by server.cc (the acceptor, the workers, drain) and session.cc
// (one connection). Not for use outside src/http.

#include <atomic>
#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "http/admission.h"
#include "http/body_budget.h"
#include "http/server.h"

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
  // The TLS context for a new connection; null without ServerOptions::tls.
  std::shared_ptr<asio::ssl::context> TlsContext() EXCLUDES(tls_mu);
  Status ReloadTls() EXCLUDES(tls_mu);

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

  // With ServerOptions::tls: the context new connections copy. ReloadTls replaces it; each
  // connection keeps a reference to the one it started with, so open connections are not
  // disturbed and an old context is freed with its last connection.
  Mutex tls_mu;
  std::shared_ptr<asio::ssl::context> tls_context GUARDED_BY(tls_mu);

  Mutex mu;
  std::condition_variable drained_cv;
  size_t drained GUARDED_BY(mu) = 0;  // workers with no request in flight while draining
  bool accepting GUARDED_BY(mu) = true;
  Mutex shutdown_mu;  // serializes Shutdown
  bool shut_down GUARDED_BY(shutdown_mu) = false;
};

}  // namespace hookrelay::http
