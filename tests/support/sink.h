#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// A real, scriptable HTTP/1.1 receiver on 127.0.0.1 (port 0) for delivery tests: it answers
// from a script, can misbehave on purpose (reset, close, hang, endless body), and records every
// request it receives.

namespace hookrelay::testing {

using SinkHeaders = std::vector<std::pair<std::string, std::string>>;

// One request the sink received.
struct SinkRequest {
  // When the whole request (head and body) had been read.
  std::chrono::steady_clock::time_point arrived_steady;
  std::chrono::system_clock::time_point arrived_system;
  std::string method;
  std::string target;       // as sent: "/hooks?x=1", or "http://host/hooks" through a proxy
  std::string path;         // the target's path without the query (scheme and authority stripped)
  SinkHeaders headers;      // in arrival order, names as sent
  std::string body;         // exactly as received
  uint64_t connection = 0;  // which accepted connection it came on (1, 2, …)

  // The first field named `name` (ASCII case-insensitive), or nullopt.
  std::optional<std::string> Header(std::string_view name) const;
};

// What the sink does with one request.
struct SinkResponse {
  enum class Action {
    kRespond,       // answer with status, headers and body (Content-Length)
    kReset,         // close the connection with a TCP reset (SO_LINGER 0), without answering
    kClose,         // close the connection normally (FIN), without answering
    kEndlessBody,   // answer `status` with a chunked body that never ends (until the client goes)
    kHang,          // never answer; keep the connection open until the sink stops
    kHeadThenHang,  // send the status line and headers (Content-Length of `body`), then nothing
    kTrickleBody,   // send the head, then `body` one byte every `trickle` (Content-Length)
  };
  Action action = Action::kRespond;
  int status = 200;
  SinkHeaders headers;  // extra fields (e.g. Retry-After); Content-Length is added
  std::string body;
  std::chrono::milliseconds delay{0};      // wait this long after the request arrives, then act
  std::chrono::milliseconds trickle{500};  // kTrickleBody: the pause before each byte

  static SinkResponse Status(int status, std::string body = {});
  static SinkResponse Reset();
  static SinkResponse Close();
  static SinkResponse EndlessBody(int status = 200);
  static SinkResponse Hang();
  static SinkResponse HeadThenHang(int status = 200);
  static SinkResponse TrickleBody(int status, std::string body, std::chrono::milliseconds every);
  SinkResponse&& WithHeader(std::string name, std::string value) &&;
  SinkResponse&& WithDelay(std::chrono::milliseconds d) &&;
};

// Thread-safe. Two I/O threads; connections are kept alive (HTTP/1.1) unless the client asks to
// close. Request bodies must be framed by Content-Length (chunked requests get 501 and a close).
class Sink {
 public:
  // Listens on 127.0.0.1 with a free port. Throws std::runtime_error on failure.
  Sink();
  // Stops: closes every connection (hung and endless ones included) and joins the threads.
  ~Sink();
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  uint16_t port() const;
  // "http://127.0.0.1:PORT" + path.
  std::string url(std::string_view path = "/") const;

  // The script. For each request: the next entry queued for its path, else the next entry of
  // the global queue, else the default for its path, else the global default (200, empty body).
  void Enqueue(SinkResponse response);
  void Enqueue(const std::string& path, SinkResponse response);
  void SetDefault(SinkResponse response);
  void SetDefault(const std::string& path, SinkResponse response);

  std::vector<SinkRequest> Requests() const;
  size_t RequestCount() const;
  // True once at least `n` requests have been received; false if `timeout` passes first.
  bool WaitForRequests(size_t n, std::chrono::milliseconds timeout) const;
  // TCP connections accepted so far.
  size_t ConnectionCount() const;
  // Requests per second of arrival (steady clock), counted from the first request's arrival:
  // element i counts arrivals in [first + i s, first + (i+1) s). Empty when there were none.
  // With `path`, only requests for that path count (and "first" is the first of those).
  std::vector<size_t> ArrivalsPerSecond(std::optional<std::string> path = std::nullopt) const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// Verifies a Standard Webhooks signature on `request` (webhook-id, webhook-timestamp and
// webhook-signature headers; any of the space-separated "v1,<base64>" signatures may match)
// with `secret` ("whsec_" + base64 key, or a bare base64 key). Computes the HMAC itself with
// OpenSSL. Does not check the timestamp's age. On false, `why` (if given) says what failed.
bool VerifyStandardSignature(const SinkRequest& request, std::string_view secret,
                             std::string* why = nullptr);

}  // namespace hookrelay::testing
