#include "delivery/kinds/redis/redis_sender.h"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "common/ascii.h"
#include "common/thread_name.h"
#include "delivery/kinds/redis/classify.h"
#include "delivery/ssrf.h"
#include "model/destination_kind.h"

namespace hookrelay::delivery::redis {
namespace {

constexpr std::string_view kHeaderPrefix = "header:";

timeval ToTimeval(Duration d) {
  const auto us =
      std::max<int64_t>(1000, std::chrono::duration_cast<std::chrono::microseconds>(d).count());
  return timeval{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
}

// The errno behind a REDIS_ERR_IO: hiredis keeps only its text (strerror), and errno itself may
// have moved on by the time the call returns.
int ErrnoOf(const redisContext* c, int saved_errno) {
  for (int e : {ECONNREFUSED, ECONNRESET, EPIPE, EAGAIN, ETIMEDOUT, EINPROGRESS}) {
    if (saved_errno == e) return e;
  }
  for (int e : {ECONNREFUSED, ECONNRESET, EPIPE, EAGAIN, ETIMEDOUT, EINPROGRESS}) {
    if (std::strstr(c->errstr, std::strerror(e)) != nullptr) return e;
  }
  return saved_errno;
}

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

Reply Command(redisContext* c, const std::vector<std::string_view>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (std::string_view a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  return Reply(static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lens.data())));
}

// `r` after a command on `c` got no reply (c->err is set).
void SetContextError(SendResult& r, const redisContext* c, int saved_errno, std::string_view what) {
  r.outcome.error = ClassifyContextError(c->err, ErrnoOf(c, saved_errno));
  r.error_detail = std::string(what) + ": " + c->errstr;
}

// `r` for an error reply (or a reply of a type the command never gives).
void SetReply(SendResult& r, const redisReply& reply) {
  const std::string text(reply.str ? reply.str : "", reply.str ? reply.len : 0);
  if (reply.type == REDIS_REPLY_ERROR) {
    r.outcome.broker = ClassifyErrorReply(text);
  } else if (reply.type == REDIS_REPLY_STRING || reply.type == REDIS_REPLY_STATUS) {
    r.outcome.broker = policy::BrokerAnswer::kAccepted;
  } else {
    r.outcome.error = policy::TransportError::kMalformedResponse;
    r.error_detail = "Redis answered with a reply of type " + std::to_string(reply.type) +
                     " where a string or an error was expected";
    return;
  }
  r.outcome.broker_reply = text.substr(0, kSnippetLimit);
  r.snippet = r.outcome.broker_reply;
  r.snippet_cut = text.size() > kSnippetLimit;
}

}  // namespace

std::vector<std::pair<std::string, std::string_view>> StreamFields(const SendRequest& request) {
  std::vector<std::pair<std::string, std::string_view>> fields;
  fields.reserve(request.headers.size() + 7);
  fields.emplace_back("body", request.body);
  auto header = [&request](std::string_view name) -> const std::string* {
    for (const auto& [n, v] : request.headers) {
      if (AsciiEqualsIgnoreCase(n, name)) return &v;
    }
    return nullptr;
  };
  for (std::string_view name : {"webhook-id", "webhook-timestamp", "webhook-signature"}) {
    if (const std::string* v = header(name)) fields.emplace_back(std::string(name), *v);
  }
  fields.emplace_back("source", request.source);
  if (!request.event_type.empty()) fields.emplace_back("type", request.event_type);
  if (const std::string* v = header("content-type")) fields.emplace_back("content-type", *v);
  for (const auto& [name, value] : request.headers) {
    if (model::IsSignatureHeader(name) || AsciiEqualsIgnoreCase(name, "content-type")) continue;
    fields.emplace_back(std::string(kHeaderPrefix) + AsciiLower(name), value);
  }
  return fields;
}

RedisSender::RedisSender(const Options& options, const Clock& clock)
    : options_(options), clock_(clock) {
  const int n = std::max(1, options_.threads);
  workers_.reserve(n);
  for (int i = 0; i < n; ++i) workers_.emplace_back(&RedisSender::Work, this);
}

RedisSender::~RedisSender() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  std::deque<Job> left;
  std::map<std::string, Pool> pools;
  {
    MutexLock lock(mu_);
    left.swap(queue_);
    pools.swap(pools_);
  }
  for (Job& job : left) {
    SendResult r;
    r.tag = job.request.tag;
    r.started_at = clock_.Now();
    r.outcome.error = policy::TransportError::kOther;
    r.error_detail = "the Redis sender stopped before sending it";
    r.request = std::move(job.request);
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
    job.done(std::move(r));
  }
  for (auto& [url, pool] : pools) {
    for (redisContext* c : pool.idle) redisFree(c);
  }
}

void RedisSender::Send(SendRequest request, Callback done) {
  in_flight_.fetch_add(1, std::memory_order_relaxed);
  {
    MutexLock lock(mu_);
    queue_.push_back(Job{std::move(request), std::move(done)});
  }
  cv_.notify_one();
}

void RedisSender::Work() {
  NameThisThread("hr-redis");
  for (;;) {
    Job job;
    {
      MutexLock lock(mu_);
      cv_.wait(lock, [this]() REQUIRES(mu_) { return stopping_ || !queue_.empty(); });
      if (stopping_) return;  // what is queued fails in the destructor
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    SendResult r = Run(job.request);
    r.request = std::move(job.request);
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
    job.done(std::move(r));
  }
}

SendResult RedisSender::Run(SendRequest& request) {
  SendResult r;
  r.tag = request.tag;
  r.started_at = clock_.Now();
  const Duration start = clock_.MonotonicNow();
  const model::Destination* d = request.destination.get();
  if (d == nullptr || !d->redis) {
    r.outcome.error = policy::TransportError::kOther;
    r.error_detail = "not a Redis destination (no stream configured)";
    return r;
  }
  const std::string& url = d->url;
  redisContext* c = Acquire(url, request, r);
  if (c != nullptr) {
    std::string maxlen;
    std::vector<std::string_view> args{"XADD", d->redis->stream};
    if (d->redis->maxlen) {
      maxlen = std::to_string(*d->redis->maxlen);
      args.insert(args.end(), {"MAXLEN", "~", maxlen});
    }
    args.push_back("*");
    const auto fields = StreamFields(request);
    args.reserve(args.size() + 2 * fields.size());
    for (const auto& [name, value] : fields) {
      args.push_back(name);
      args.push_back(value);
    }
    errno = 0;
    Reply reply = Command(c, args);
    const int saved_errno = errno;
    if (!reply) {
      SetContextError(r, c, saved_errno, "XADD");
      Release(url, c, false);
    } else {
      SetReply(r, *reply);
      Release(url, c, r.outcome.error == policy::TransportError::kNone);
    }
  }
  r.duration = clock_.MonotonicNow() - start;
  return r;
}

redisContext* RedisSender::Acquire(const std::string& url, const SendRequest& request,
                                   SendResult& r) {
  {
    MutexLock lock(mu_);
    Pool& pool = pools_[url];
    if (!pool.idle.empty()) {
      redisContext* c = pool.idle.back();
      pool.idle.pop_back();
      return c;
    }
    const Duration now = clock_.MonotonicNow();
    if (now < pool.retry_connect_at) {
      r.outcome.error = pool.last_error;
      r.error_detail = pool.last_detail + " (not connecting again for " +
                       std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          pool.retry_connect_at - now)
                                          .count()) +
                       " ms after that failure)";
      return nullptr;
    }
  }
  Result<model::RedisEndpoint> endpoint = model::ParseRedisUrl(url);
  if (!endpoint.ok()) {
    r.outcome.error = policy::TransportError::kOther;
    r.error_detail = "the destination's URL: " + endpoint.status().message();
    return nullptr;
  }
  // Resolved here, so that each address is checked before anything connects to it.
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(endpoint->host.c_str(), nullptr, &hints, &found); rc != 0) {
    r.outcome.error = policy::TransportError::kDns;
    r.error_detail = "cannot resolve " + endpoint->host + ": " + gai_strerror(rc);
    return nullptr;
  }
  const bool allow_private = request.allow_private || options_.allow_private_destinations;
  std::string address, refused;
  for (addrinfo* a = found; a != nullptr && address.empty(); a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw =
        a->ai_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
    if (inet_ntop(a->ai_family, raw, text, sizeof text) == nullptr) continue;
    if (!allow_private && IsPrivateAddress(text)) {
      refused = text;
      continue;
    }
    address = text;
  }
  freeaddrinfo(found);
  if (address.empty()) {
    r.outcome.error =
        refused.empty() ? policy::TransportError::kDns : policy::TransportError::kPrivateAddress;
    r.error_detail = refused.empty() ? "no address for " + endpoint->host
                                     : endpoint->host + " is " + refused + ": " +
                                           std::string(kPrivateAddressRule);
    return nullptr;
  }

  const timeval tv = ToTimeval(request.timeout);
  const std::string where = endpoint->host + ":" + std::to_string(endpoint->port);
  errno = 0;
  redisContext* c = redisConnectWithTimeout(address.c_str(), endpoint->port, tv);
  int saved_errno = errno;
  auto fail_connect = [&](const std::string& detail) {
    MutexLock lock(mu_);
    Pool& pool = pools_[url];
    pool.backoff = pool.backoff.count() == 0 ? options_.reconnect_min
                                             : std::min(pool.backoff * 2, options_.reconnect_max);
    pool.retry_connect_at = clock_.MonotonicNow() + pool.backoff;
    pool.last_error = r.outcome.error;
    pool.last_detail = detail;
    r.error_detail = detail;
  };
  if (c == nullptr) {
    r.outcome.error = policy::TransportError::kOther;
    r.error_detail = "cannot allocate a Redis connection";
    return nullptr;
  }
  if (c->err != 0) {
    r.outcome.error = ClassifyContextError(c->err, ErrnoOf(c, saved_errno));
    fail_connect("connect to " + where + ": " + c->errstr);
    redisFree(c);
    return nullptr;
  }
  redisSetTimeout(c, tv);
  // AUTH and SELECT: an error reply is Redis's word on the destination (WRONGPASS: final; LOADING:
  // busy), not a failed connect, so it starts no backoff.
  auto setup = [&](std::vector<std::string_view> args, std::string_view what) {
    errno = 0;
    Reply reply = Command(c, args);
    saved_errno = errno;
    if (!reply) {
      SetContextError(r, c, saved_errno, what);
      fail_connect(r.error_detail);
      return false;
    }
    if (reply->type == REDIS_REPLY_ERROR) {
      SetReply(r, *reply);
      return false;
    }
    return true;
  };
  bool ok = true;
  if (!endpoint->password.empty()) {
    std::vector<std::string_view> auth{"AUTH"};
    if (!endpoint->username.empty()) auth.push_back(endpoint->username);
    auth.push_back(endpoint->password);
    ok = setup(std::move(auth), "AUTH");
  } else {
    // Without credentials, a server that needs them says NOAUTH to a PING; to the XADD itself
    // Redis 7 says "Protocol error: unauthenticated multibulk length" (it caps what an
    // unauthenticated client may send), which would not tell anyone what is wrong.
    ok = setup({"PING"}, "PING");
  }
  const std::string db = std::to_string(endpoint->db);
  if (ok && endpoint->db != 0) ok = setup({"SELECT", db}, "SELECT");
  if (!ok) {
    redisFree(c);
    return nullptr;
  }
  MutexLock lock(mu_);
  Pool& pool = pools_[url];
  pool.backoff = Duration(0);
  pool.retry_connect_at = Duration(0);
  return c;
}

void RedisSender::Release(const std::string& url, redisContext* c, bool healthy) {
  std::vector<redisContext*> close;
  {
    MutexLock lock(mu_);
    Pool& pool = pools_[url];
    if (healthy && static_cast<int>(pool.idle.size()) < std::max(1, options_.threads)) {
      pool.idle.push_back(c);
    } else {
      close.push_back(c);
      // One connection broke: the others were opened to the same server, and after a restart
      // (the usual cause) they are all stale. Closing them costs a reconnect; keeping them costs
      // a failed attempt each.
      if (!healthy) {
        close.insert(close.end(), pool.idle.begin(), pool.idle.end());
        pool.idle.clear();
      }
    }
  }
  for (redisContext* dead : close) redisFree(dead);
}

}  // namespace hookrelay::delivery::redis
