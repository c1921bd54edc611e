#pragma once

// The Redis Streams destination kind's sender: each request is one
//   XADD <stream> [MAXLEN ~ <maxlen>] * body <body> webhook-id … source … type … content-type …
//        header:<name> <value> …
// on a connection to the destination's redis:// URL, and the attempt is delivered once XADD
// returned the entry's id (docs/delivery.md, "Redis Streams": the fields, and why durability is
// Redis's own). Outcomes are mapped by classify.h.
//
// Threads: hiredis's synchronous API blocks a thread per command, so a fixed pool of
// `Options::threads` workers takes requests from one queue, each request on one connection that
// no other request uses meanwhile. A blocking client on a small pool is enough here: a local
// XADD takes a fraction of a millisecond, the engine caps each destination's requests in flight
// (max_concurrency, the adaptive limit), and each attempt's connect, write and read are bounded
// by its timeout (redisConnectWithTimeout, redisSetTimeout). hiredis's async API would need an
// event loop adapter of its own (libevent, libev) for one kind; Debian's libhiredis-dev ships the
// adapters' headers but the loops are separate libraries. A pool of `threads` workers sends at
// most `threads` commands at once across all Redis destinations.
//
// Connections: one pool per destination URL (its credentials and database included), kept open
// between attempts (at most `threads` idle per URL). A connection that fails is closed, with the
// pool's other idle ones (after a server restart they are all stale). A failed connect starts a
// backoff for that URL (100 ms doubling to 2 s): until it ends, attempts fail at once with the
// last connect error (retryable), so a Redis that is down costs no connect per attempt; the first
// connect that succeeds ends it.
//
// SSRF: the host is resolved here (getaddrinfo) and each address checked by the SSRF rules
// (delivery/ssrf.h) before connecting to it by number, unless the request or the node allows
// private addresses; a host with only refused addresses is TransportError::kPrivateAddress.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "delivery/request_sender.h"

struct redisContext;

namespace hookrelay::delivery::redis {

// A stream entry's fields for `request`, in order (names owned, values viewing `request`):
//   body, webhook-id, webhook-timestamp, webhook-signature (when signed), source, type (when the
//   event has one), content-type, then "header:<name>" for every other header of the request
//   (forwarded and configured ones, names lower-cased, in the request's order).
// The webhook-* and content-type headers are looked up case-insensitively.
std::vector<std::pair<std::string, std::string_view>> StreamFields(const SendRequest& request);

class RedisSender final : public RequestSender {
 public:
  struct Options {
    bool allow_private_destinations = false;  // the node's --allow-private-destinations
    int threads = 8;                          // workers, each one command at a time (>= 1)
    Duration reconnect_min = std::chrono::milliseconds(100);  // the first backoff after a failure
    Duration reconnect_max = std::chrono::seconds(2);         // the backoff's cap
  };

  RedisSender(const Options& options, const Clock& clock);
  // Stops the workers after the commands they are sending; requests still queued fail with
  // TransportError::kOther ("the sender stopped") so that every `done` is called once.
  ~RedisSender() override;
  RedisSender(const RedisSender&) = delete;
  RedisSender& operator=(const RedisSender&) = delete;

  // REQUIRES: request.destination is set and of kind redis (else the attempt fails with
  // TransportError::kOther, saying so). `done` runs on a worker thread.
  void Send(SendRequest request, Callback done) override;
  int InFlight() const override { return in_flight_.load(std::memory_order_relaxed); }

 private:
  struct Job {
    SendRequest request;
    Callback done;
  };
  // One destination URL's connections.
  struct Pool {
    std::vector<redisContext*> idle;
    Duration retry_connect_at{0};  // on Clock::MonotonicNow; until then, no connect is tried
    Duration backoff{0};           // the next backoff after a failed connect
    policy::TransportError last_error = policy::TransportError::kNone;
    std::string last_detail;
  };

  void Work();
  SendResult Run(SendRequest& request);
  // A connection for `url` (pooled or new), or nullptr with `r`'s outcome and detail set.
  redisContext* Acquire(const std::string& url, const SendRequest& request, SendResult& r);
  // Gives `c` back to its pool (healthy) or closes it and the pool's idle ones (broken).
  void Release(const std::string& url, redisContext* c, bool healthy);

  const Options options_;
  const Clock& clock_;
  std::atomic<int> in_flight_{0};

  Mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::map<std::string, Pool> pools_ GUARDED_BY(mu_);  // by URL

  std::vector<std::thread> workers_;  // started in the constructor, joined in the destructor
};

}  // namespace hookrelay::delivery::redis
