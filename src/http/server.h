#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/result.h"
#include "http/forwarded.h"
#include "http/request.h"

namespace hookrelay::http {

// Completes one request. Call it exactly once, from any thread, at any later time (e.g. after a
// group commit on a store thread). Copies share one completion: the first call wins, later calls
// are ignored. If every copy is destroyed without a call, the client gets a 500. Calls after the
// client went away, or after the Server shut down, are dropped quietly.
using Responder = std::function<void(Response)>;

// What the server calls for each request. Both calls run on a server I/O thread: they must not
// block (hand slow work to another thread and answer through the Responder). Calls for one
// connection never overlap; calls for different connections may run concurrently.
class Handler {
 public:
  virtual ~Handler() = default;

  struct HeadDecision {
    // Set to answer now without reading the body (404 unknown source, 405, 401). If the
    // request announced a body, the connection is closed after this response.
    std::optional<Response> reject;
    // Largest body accepted for this request (per-source max_body); nullopt means
    // ServerOptions::default_body_limit. A larger Content-Length gets 413 before the body is
    // read; a chunked body gets 413 as soon as it passes the limit.
    std::optional<uint64_t> body_limit;
  };

  // Called once the request line and header fields are read, before any of the body.
  virtual HeadDecision OnHead(const RequestHead& head) = 0;
  // Called with the complete request (unless OnHead rejected it). `respond` must be called once.
  virtual void OnRequest(Request request, Responder respond) = 0;
};

struct ServerStats;

// A listener's certificate and private key, as PEM files. `cert_file` holds the server's
// certificate first, then any intermediate certificates (a chain, as Let's Encrypt's
// fullchain.pem); `key_file` holds its unencrypted private key (a file holding both works for
// both). Relative paths are relative to the working directory.
struct TlsFiles {
  std::string cert_file;
  std::string key_file;
};

// Loads `files` as Server::Start and Server::ReloadTls would, and reports what they would:
// OK, or InvalidArgument naming the file and why (see Server::Start). Reads the files and
// nothing else; for `hookrelay check-config`.
Status CheckTlsFiles(const TlsFiles& files);

struct ServerOptions {
  // host:port to bind; port 0 picks a free port. IPv6 as "[::1]:0"; an empty host ("":8080)
  // binds all IPv4 interfaces.
  std::string listen = "127.0.0.1:8080";
  int threads = 2;                                // I/O threads, each with its own event loop
  uint64_t header_limit = 16 * 1024;              // request line + fields; larger → 431, close
  uint64_t default_body_limit = 5 * 1024 * 1024;  // see HeadDecision::body_limit
  // Timeouts are enforced with a granularity of about 1/8 of the smallest one (at most 500ms).
  // header_timeout: from a request's first byte to its last header byte → 408 and close; also
  // how long a new connection may stay silent (closed without a response).
  Duration header_timeout = std::chrono::seconds(10);
  Duration body_timeout = std::chrono::seconds(30);  // the whole body → 408 and close
  // Keep-alive wait for the next request's first byte (closed without a response). Also bounds
  // the lingering close (at most 2s) that keeps a final response from being lost to a reset.
  Duration idle_timeout = std::chrono::seconds(60);
  Duration write_timeout = std::chrono::seconds(30);  // writing one response → close
  // Open connections. A connection past the limit makes the server close its oldest idle
  // connection (one that has sent no byte of a request yet) to make room; when there is none, the
  // newcomer is answered 503 with Retry-After and closed.
  int max_connections = 10000;
  // Open connections per client address (IPv4 address, or IPv6 /64); the next one is answered
  // 429 with Retry-After and closed. 0: no per-client cap. Behind a reverse proxy every
  // connection comes from the proxy's address. (Refusals are answered with a short lingering
  // close; past 64 of them under way at once, further refused connections are closed unanswered.)
  int max_connections_per_client = 256;
  // Request body bytes held in memory by all connections together, taken as the bytes arrive
  // (in steps that double, from 16 KiB up to the Content-Length or the body limit; never from
  // an announced Content-Length alone) until the request is answered or the connection closes.
  // A request whose body stops fitting is answered 503 with Retry-After and the connection
  // closed; one that could not fit even an empty budget (larger than max_body_memory) gets 413
  // instead, so a body limit above max_body_memory is in effect max_body_memory.
  uint64_t max_body_memory = 256 * 1024 * 1024;
  // The same budget for each client address (IPv4 address, or IPv6 /64, as for
  // max_connections_per_client), so that one client cannot hold all of max_body_memory: past
  // it, 503 with Retry-After (and 413 for a body larger than it). 0: no per-client cap. Behind
  // a reverse proxy every body comes from the proxy's address.
  uint64_t max_body_memory_per_client = 64 * 1024 * 1024;
  // Reverse proxies whose forwarded fields name the client ([server] trusted_proxies): a request
  // from one of them gets RequestHead::remote_address from its Forwarded or X-Forwarded-For
  // field (http/forwarded.h), and that client's share of max_body_memory_per_client; the proxy's
  // own connections are not capped by max_connections_per_client. Empty: the peer is the client.
  TrustedProxies trusted_proxies;
  // Where the server keeps its counters (e.g. for /metrics); nullptr: its own, see Server::stats().
  // Must outlive the Server.
  ServerStats* stats = nullptr;
  // Set: every connection is TLS (HTTPS, HTTP/1.1 only) with these files; unset: plain HTTP.
  // TLS 1.2 and 1.3 only; TLS 1.2 with Mozilla's "intermediate" cipher suites (ECDHE or DHE key
  // exchange, AES-GCM or ChaCha20-Poly1305), no compression, no renegotiation. ALPN: "http/1.1"
  // when the client offers it, else none (never "h2"). The handshake counts against
  // header_timeout: a new connection must complete it and send its first request byte within
  // header_timeout of being accepted, else it is closed without a response.
  std::optional<TlsFiles> tls;
};

// Counters the server updates as it runs; read them from any thread.
struct ServerStats {
  std::atomic<int64_t> connections{0};         // open connections (gauge)
  std::atomic<uint64_t> body_memory_bytes{0};  // body bytes reserved now (gauge)
  // Connections or requests refused, by reason (counters).
  std::atomic<uint64_t> refused_max_connections{0};             // 503: full, nothing idle
  std::atomic<uint64_t> refused_max_connections_per_client{0};  // 429
  std::atomic<uint64_t> refused_max_body_memory{0};             // 503 while reading a body
  std::atomic<uint64_t> refused_max_body_memory_per_client{0};  // 503: one client's share
  std::atomic<uint64_t> idle_closed{0};  // idle connections closed to make room (counter)
  // TLS handshakes that did not complete (counter): not TLS (e.g. plain HTTP to an HTTPS port),
  // no protocol version or cipher in common, a client that refused the certificate, a client
  // that went away or stayed silent past header_timeout. Connections the server closed itself
  // (to make room, at shutdown) are not counted.
  std::atomic<uint64_t> tls_handshake_failures{0};
};

// An HTTP/1.1 server (Boost.Beast parser on Asio).
//
// Connections are spread round-robin over `threads` event loops, each run by one thread, so a
// connection's work is serialized without locks (each loop is an implicit strand). Keep-alive and
// pipelining are supported (pipelined requests are answered in order, one at a time); HTTP/1.0
// connections close after the response unless they ask for keep-alive. Protocol errors are
// answered with JSON errors (400 malformed, 408 timeout, 413 body too large, 414 request line
// too long, 431 headers too large) and the connection is closed.
//
// Parsing is strict where other HTTP implementations could read the same bytes differently
// (RFC 9112): a Transfer-Encoding other than exactly "chunked" (or any on HTTP/1.0), obsolete
// line folding, an HTTP/1.1 request without Host, a Host field holding a list (or whitespace),
// and more than one Host or Authorization field are 400. Chunk extensions, chunk-size digits past
// 16 (leading zeros) and trailer fields count against header_limit together with the head (400
// and 431 past it); trailer fields are read and dropped, never added to RequestHead::headers.
//
// The I/O threads block SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2, so those reach the
// application's own threads.
//
// Thread-safe: all methods may be called from any thread that is not one of the server's.
class Server {
 public:
  // Binds, listens and starts the I/O threads. `handler` must outlive the Server. Errors name
  // the address: "cannot listen on 127.0.0.1:8080: address already in use". With
  // ServerOptions::tls, the files are loaded first; a file that cannot be used is
  // InvalidArgument naming it, with field "cert" or "key" (for the caller to prefix, e.g.
  // "server.tls"): "tls.cert /etc/c.pem: cannot read: No such file or directory",
  // "tls.cert /etc/c.pem: no PEM certificate in it", "tls.key /etc/k.pem: the key is
  // encrypted…", "tls.key /etc/k.pem does not match tls.cert /etc/c.pem". Key contents are never
  // quoted. A key file that other users can read is logged as a warning, not refused.
  static Result<std::unique_ptr<Server>> Start(const ServerOptions& options, Handler& handler);

  // Shuts down with no grace (in-flight requests are cut off).
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The server's counters (ServerOptions::stats when one was given).
  const ServerStats& stats() const;

  // The bound port (useful with port 0).
  uint16_t port() const;
  // "http://127.0.0.1:PORT" ("http://[::1]:PORT"), "https://…" with TLS; a wildcard bind shows
  // the loopback address.
  std::string url() const;

  // Reads the certificate and key files again; new connections use them, open ones keep theirs
  // (until they close). On any error (unreadable, not PEM, key not matching the certificate) the
  // old ones stay and the Status says which file and why, as Start's does.
  // kFailedPrecondition when the server has no TLS. Blocks for the reading and parsing of the
  // files only; connections are served meanwhile.
  Status ReloadTls();

  // Closes the listening socket; existing connections keep being served. Idempotent.
  void StopAccepting();

  // Stops accepting, closes idle connections, and waits up to `grace` for requests already
  // begun to get their responses written (with Connection: close); then closes every
  // connection and joins the threads. Responders called later are ignored. Idempotent.
  // REQUIRES: not called from a Handler (it joins the threads that call handlers).
  void Shutdown(Duration grace);

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hookrelay::http
