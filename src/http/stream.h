#pragma once

// A connection's byte stream: a TCP socket, or TLS over one. Not for use outside src/http.

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <memory>
#include <utility>

#include "http/server_internal.h"

namespace hookrelay::http {

// Either plain TCP or TLS over TCP, chosen at construction. The plain path costs one branch per
// operation (no virtual call, no allocation). Operations follow Asio's rules for the underlying
// stream: at most one read and one write pending at a time, all on the socket's loop.
//
// Not movable: the TLS layer refers to the socket beside it.
class Stream {
 public:
  // TLS with `context` when it is set (kept alive as long as this stream, so a reload cannot
  // pull it away; the handshake is still to be done: AsyncHandshake), else plain TCP.
  Stream(Socket socket, std::shared_ptr<asio::ssl::context> context)
      : socket_(std::move(socket)), context_(std::move(context)) {
    if (context_) tls_ = std::make_unique<TlsLayer>(socket_, *context_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  bool tls() const { return tls_ != nullptr; }
  Socket& socket() { return socket_; }

  // The server side of the TLS handshake. REQUIRES: tls().
  template <typename Handler>
  void AsyncHandshake(Handler&& handler) {
    tls_->async_handshake(asio::ssl::stream_base::server, std::forward<Handler>(handler));
  }

  // Reads some bytes (decrypted, over TLS). Handler: void(const error_code&, size_t).
  template <typename MutableBuffers, typename Handler>
  void AsyncReadSome(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      socket_.async_read_some(buffers, std::forward<Handler>(handler));
    }
  }

  // Writes all of `buffers`. Handler: void(const error_code&, size_t).
  template <typename ConstBuffers, typename Handler>
  void AsyncWrite(const ConstBuffers& buffers, Handler&& handler) {
    if (tls_) {
      asio::async_write(*tls_, buffers, std::forward<Handler>(handler));
    } else {
      asio::async_write(socket_, buffers, std::forward<Handler>(handler));
    }
  }

  // Ends the sending direction of the TCP connection. Over TLS no close_notify is sent: waiting
  // for the peer's would let a client hold the connection, and every response is framed by its
  // Content-Length, so a truncation cannot pass for a complete response.
  void ShutdownSend(error_code& ec) { socket_.shutdown(tcp::socket::shutdown_send, ec); }

  // Closes the socket; pending operations complete with operation_aborted.
  void Close(error_code& ec) { socket_.close(ec); }

 private:
  using TlsLayer = asio::ssl::stream<Socket&>;

  // Declared in this order so that the TLS layer goes first, then its context, then the socket.
  Socket socket_;
  std::shared_ptr<asio::ssl::context> context_;
  std::unique_ptr<TlsLayer> tls_;
};

}  // namespace hookrelay::http
