// Fuzzes the HTTP server's request parsing and framing (src/http/server.cc: request line, header
// fields, Content-Length, chunked bodies with extensions and trailers, pipelining, 100-continue)
// end to end: one in-process http::Server on 127.0.0.1, each input written as the bytes of one
// connection, then EOF. What the server sends back must be a sequence of well-formed responses,
// none a 5xx (every error here is the client's), and it must close the connection promptly; the
// handler checks what the parser handed it (the body's length agrees with its framing, header
// names are tokens, values hold no CR, LF or NUL, the complete request has exactly the fields
// seen when its head ended: no trailer field became a header).

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "http/server.h"

namespace {

using namespace hookrelay;

constexpr uint64_t kBodyLimit = 2048;

[[noreturn]] void Fail(const char* why, std::string_view detail) {
  std::fprintf(stderr, "http_request_fuzzer: %s: %.*s\n", why, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

class CheckingHandler final : public http::Handler {
 public:
  HeadDecision OnHead(const http::RequestHead& head) override {
    CheckHead(head);
    // One server thread and one connection at a time: the next OnRequest is this request's.
    head_fields_ = head.headers;
    HeadDecision d;
    // Some paths are refused before the body, as the ingest and API handlers do.
    if (head.path == "/reject") d.reject = http::JsonError(404, "not_found", "rejected");
    d.body_limit = kBodyLimit;
    return d;
  }
  void OnRequest(http::Request request, http::Responder respond) override {
    CheckHead(request);
    if (request.headers != head_fields_) {
      Fail("the fields changed after the head (a trailer became a header)", request.target);
    }
    if (request.content_length && request.body.size() != *request.content_length) {
      Fail("body length differs from Content-Length", request.body);
    }
    if (request.body.size() > kBodyLimit) Fail("body past the limit", request.target);
    if (request.chunked && request.content_length) {
      Fail("both chunked and Content-Length", request.target);
    }
    http::Response r;
    r.content_type = "text/plain";
    r.body = std::to_string(request.body.size());
    respond(std::move(r));
  }

 private:
  static void CheckHead(const http::RequestHead& head) {
    if (!IsToken(head.method)) Fail("method is not a token", head.method);
    if (head.target.empty()) Fail("empty target", head.target);
    if (head.target == "*" && head.method != "OPTIONS") Fail("\"*\" target", head.method);
    for (const auto& [name, value] : head.headers) {
      if (!IsToken(name)) Fail("header name is not a token", name);
      if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
        Fail("CR, LF or NUL in a header value", value);
      }
    }
  }

  decltype(http::RequestHead::headers) head_fields_;
};

struct Fixture {
  CheckingHandler handler;
  std::unique_ptr<http::Server> server;

  Fixture() {
    http::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.threads = 1;
    options.header_limit = 1024;
    options.header_timeout = std::chrono::seconds(2);
    options.body_timeout = std::chrono::seconds(2);
    options.idle_timeout = std::chrono::seconds(2);
    options.max_connections_per_client = 0;
    auto started = http::Server::Start(options, handler);
    if (!started.ok()) Fail("cannot start the server", started.status().message());
    server = std::move(*started);
  }
};

// The responses in `out`: each a status line "HTTP/1.1 NNN ..." with a Content-Length framed
// body (or none for 1xx and HEAD); returns false on anything else.
void CheckResponses(std::string_view out, std::string_view input) {
  size_t at = 0;
  while (at < out.size()) {
    const size_t end = out.find("\r\n\r\n", at);
    if (out.compare(at, 9, "HTTP/1.1 ") != 0 || end == std::string_view::npos) {
      Fail("malformed response", out.substr(at));
    }
    const std::string_view head = out.substr(at, end + 4 - at);
    const int status = std::atoi(std::string(head.substr(9, 3)).c_str());
    if (status < 100 || status > 599) Fail("bad status", head);
    if (status >= 500) {
      std::fprintf(stderr, "input: %zu bytes\n", input.size());
      Fail("5xx for client input", head);
    }
    at = end + 4;
    if (status == 100) continue;
    const size_t cl = head.find("\r\nContent-Length: ");
    if (cl == std::string_view::npos) {
      if (head.find("\r\nConnection: close") == std::string_view::npos &&
          input.find("HEAD") == std::string_view::npos) {
        Fail("response without Content-Length", head);
      }
      continue;
    }
    const size_t n = std::strtoul(std::string(head.substr(cl + 18, 20)).c_str(), nullptr, 10);
    // A response to HEAD has a Content-Length but no body; the next response follows at once.
    if (at + n <= out.size() && (at + n == out.size() || out.compare(at + n, 5, "HTTP/") == 0)) {
      at += n;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fixture = new Fixture();  // lives for the whole run
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) Fail("socket", std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(fixture->server->port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // libFuzzer's timer signal (SIGALRM, every second) interrupts system calls: an interrupted
  // connect() goes on in the background, so wait for it to finish and take its outcome.
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINTR) Fail("connect", std::strerror(errno));
    pollfd p{fd, POLLOUT, 0};
    while (poll(&p, 1, 5000) < 0 && errno == EINTR) {
    }
    int error = 0;
    socklen_t len = sizeof error;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) {
      Fail("connect", std::strerror(error != 0 ? error : errno));
    }
  }
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // Write everything (the server reads while we write, so no deadlock on a full buffer as long
  // as we also read: the inputs are at most a few KiB, well under the socket buffers).
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server closed after an error response: fine
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  char buf[16384];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) Fail("the server did not close the connection within 5s", out);
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF or reset
    out.append(buf, static_cast<size_t>(n));
  }
  // Close with a reset: no TIME_WAIT, so a long run does not use up the ephemeral ports.
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
  CheckResponses(out, input);
  return 0;
}
