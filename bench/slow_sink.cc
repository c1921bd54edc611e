// bench/slow_sink: an HTTP sink on 127.0.0.1 that answers every request with 200 after a fixed
// delay (a realistic remote endpoint), for the slowsink suite. Timers, not threads, hold the
// requests, so thousands of connections cost a few KiB each and the sink is never the limit.
//
//   slow_sink DELAY_MS THREADS PORT_FILE
//
// Listens on 127.0.0.1 on a free port and writes the port number to PORT_FILE once it accepts.
// Every request (any method, any path but /stats) is read whole, held DELAY_MS, then answered
// 200 `{"ok":true}` with keep-alive as the client asked.
//
// `GET /stats` is answered at once with the sink's own figures, so the harness can show that the
// sink kept up:
//   {"requests": N, "open": N, "peak_open": N, "hold_mean_ms": X, "hold_max_ms": X}
// requests: answered so far (not counting /stats); open / peak_open: connections open now / most
// at once; hold_*: time from a request read to its answer written (DELAY_MS plus what the sink
// added: a sink that keeps up stays at DELAY_MS). peak_open and hold_* restart at each /stats, so
// each read covers the phase since the previous one.
// SIGINT/SIGTERM stop it, printing the same line to stdout.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using Clock = std::chrono::steady_clock;

struct Stats {
  std::atomic<long> requests{0};
  std::atomic<long> open{0};
  std::atomic<long> peak_open{0};
  std::atomic<long> hold_count{0};
  std::atomic<long> hold_sum_us{0};
  std::atomic<long> hold_max_us{0};

  void Opened() {
    long now = ++open;
    long peak = peak_open.load();
    while (now > peak && !peak_open.compare_exchange_weak(peak, now)) {
    }
  }

  void Held(long us) {
    ++requests;
    ++hold_count;
    hold_sum_us += us;
    long max = hold_max_us.load();
    while (us > max && !hold_max_us.compare_exchange_weak(max, us)) {
    }
  }

  // The figures as JSON; the per-phase ones restart.
  std::string Take() {
    const long n = hold_count.exchange(0), sum = hold_sum_us.exchange(0);
    const long max = hold_max_us.exchange(0);
    const long peak = peak_open.exchange(open.load());
    char out[256];
    std::snprintf(out, sizeof out,
                  "{\"requests\": %ld, \"open\": %ld, \"peak_open\": %ld, \"hold_mean_ms\": %.1f, "
                  "\"hold_max_ms\": %.1f}",
                  requests.load(), open.load(), peak, n > 0 ? sum / 1000.0 / n : 0.0, max / 1000.0);
    return out;
  }
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, std::chrono::milliseconds delay, Stats& stats)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), delay_(delay), stats_(stats) {
    stats_.Opened();
  }
  ~Connection() { --stats_.open; }

  void Read() {
    request_ = {};
    http::async_read(socket_, buffer_, request_,
                     [self = shared_from_this()](error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(error_code ec) {
    if (ec) return;  // closed by the client (or a malformed request): drop the connection
    read_at_ = Clock::now();
    if (request_.method() == http::verb::get && request_.target() == "/stats") {
      Answer(stats_.Take(), false);
      return;
    }
    timer_.expires_after(delay_);
    timer_.async_wait(
        [self = shared_from_this()](error_code) { self->Answer("{\"ok\":true}", true); });
  }

  void Answer(std::string body, bool counted) {
    response_ = {};
    response_.result(http::status::ok);
    response_.version(request_.version());
    response_.set(http::field::content_type, "application/json");
    response_.keep_alive(request_.keep_alive());
    response_.body() = std::move(body);
    response_.prepare_payload();
    http::async_write(
        socket_, response_, [self = shared_from_this(), counted](error_code ec, size_t) {
          if (ec) return;
          if (counted) {
            self->stats_.Held(
                std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - self->read_at_)
                    .count());
          }
          if (self->response_.keep_alive()) self->Read();
        });
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  std::chrono::milliseconds delay_;
  Stats& stats_;
  boost::beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
  Clock::time_point read_at_;
};

class Listener {
 public:
  Listener(asio::io_context& io, std::chrono::milliseconds delay, Stats& stats)
      : acceptor_(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
        retry_(io),
        delay_(delay),
        stats_(stats) {
    acceptor_.listen(asio::socket_base::max_listen_connections);
  }

  unsigned short port() const { return acceptor_.local_endpoint().port(); }

  void Accept() {
    acceptor_.async_accept([this](error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) {
        // Out of file descriptors, most likely: say so once a second and try again.
        std::cerr << "slow_sink: accept: " << ec.message() << "\n";
        retry_.expires_after(std::chrono::seconds(1));
        retry_.async_wait([this](error_code) { Accept(); });
        return;
      }
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<Connection>(std::move(socket), delay_, stats_)->Read();
      Accept();
    });
  }

 private:
  tcp::acceptor acceptor_;
  asio::steady_timer retry_;
  std::chrono::milliseconds delay_;
  Stats& stats_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: slow_sink DELAY_MS THREADS PORT_FILE\n";
    return 2;
  }
  long delay_ms = -1;
  int threads = 0;
  try {
    delay_ms = std::stol(argv[1]);
    threads = std::stoi(argv[2]);
  } catch (const std::exception&) {
    // Left out of range: the usage below.
  }
  if (delay_ms < 0 || threads < 1 || threads > 64) {
    std::cerr << "usage: slow_sink DELAY_MS THREADS PORT_FILE (DELAY_MS >= 0, THREADS 1..64)\n";
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  asio::io_context io(threads);
  Stats stats;
  Listener listener(io, std::chrono::milliseconds(delay_ms), stats);
  listener.Accept();
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](error_code, int) { io.stop(); });
  {
    // Written whole, then renamed: whoever sees the file sees the whole port number.
    const std::string tmp = std::string(argv[3]) + ".tmp";
    std::ofstream port_file(tmp);
    port_file << listener.port() << "\n";
    port_file.close();
    if (!port_file || std::rename(tmp.c_str(), argv[3]) != 0) {
      std::cerr << "slow_sink: cannot write " << argv[3] << "\n";
      return 1;
    }
  }
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
  std::cout << stats.Take() << std::endl;
  return 0;
}
