#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Small blocking HTTP clients for tests. Failures (connect, I/O, timeout) throw
// std::runtime_error with a message saying what failed, which gtest reports as a test failure.

namespace hookrelay::testing {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpResponse {
  int status = 0;
  HeaderList headers;  // in arrival order
  std::string body;
  bool keep_alive = true;  // false when the server said it will close the connection

  // The first field named `name` (ASCII case-insensitive); "" when absent.
  std::string Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
};

// One keep-alive HTTP/1.1 connection. Not thread-safe; use one per thread.
class HttpConnection {
 public:
  // Connects to host:port (host is an IP literal: "127.0.0.1", "::1"). `timeout` bounds each
  // connect, send and receive.
  explicit HttpConnection(uint16_t port, std::string host = "127.0.0.1",
                          std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Sends one request and reads its response. Adds Host (unless given) and Content-Length
  // (unless a Content-Length or Transfer-Encoding is given, and only when there is a body or the
  // method is POST, PUT or PATCH). A response to HEAD is read without a body.
  HttpResponse Send(std::string_view method, std::string_view target,
                    const HeaderList& headers = {}, std::string_view body = {});

  // True when the server closes the connection within `wait` (bytes it sends meanwhile are
  // discarded); false when it is still open.
  bool WaitForClose(std::chrono::milliseconds wait);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A TCP connection for sending arbitrary bytes (malformed requests, slow clients).
class RawConnection {
 public:
  // Connects to 127.0.0.1:port; throws on failure. `from` (e.g. "127.0.0.2") binds the client
  // end to that loopback address first, so one test can act as several clients.
  explicit RawConnection(uint16_t port, const std::string& from = "");
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // Sends all of `bytes`; false when the peer closed or reset the connection.
  bool Write(std::string_view bytes);
  // Closes the sending direction (the server sees EOF).
  void ShutdownWrite();
  // Reads until `needle` has been received, the peer closes, or `timeout` passes. Returns the
  // bytes up to and including the needle (everything read, if it never came); later bytes are
  // kept for the next call.
  std::string ReadUntil(std::string_view needle, std::chrono::milliseconds timeout);
  // Reads until the peer closes or `timeout` passes; returns everything not yet returned.
  std::string ReadUntilClose(std::chrono::milliseconds timeout);
  // True once EOF or a reset was seen.
  bool closed() const { return closed_; }

 private:
  // Reads once (waiting up to `timeout`); false on timeout, EOF or error.
  bool ReadSome(std::chrono::milliseconds timeout);

  int fd_ = -1;
  bool closed_ = false;
  std::string pending_;
};

// Connects, sends `bytes`, and returns whatever comes back until the server closes or `timeout`.
std::string SendRaw(uint16_t port, std::string_view bytes,
                    std::chrono::milliseconds timeout = std::chrono::seconds(5));

// The status code of the first response in raw bytes; 0 when they do not start with one.
int StatusOf(std::string_view raw);
// How many responses ("HTTP/1.1 " status lines) a raw byte stream holds.
int CountResponses(std::string_view raw);

}  // namespace hookrelay::testing
