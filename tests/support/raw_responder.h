#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hookrelay::testing {

// Answers every connection on 127.0.0.1 with `chunks` (one every `every`), after reading the
// request's head, then keeps it open until destroyed: responses no HTTP server library would send
// (a status line trickled a byte at a time, endless 100 Continue, garbage). With `then`
// kReset, the connection is reset (SO_LINGER 0) right after the last chunk instead.
class RawResponder {
 public:
  enum class Then { kHold, kReset };
  RawResponder(std::vector<std::string> chunks, std::chrono::milliseconds every,
               Then then = Then::kHold);
  ~RawResponder();
  RawResponder(const RawResponder&) = delete;
  RawResponder& operator=(const RawResponder&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

 private:
  void Serve(int connection);

  std::vector<std::string> chunks_;
  std::chrono::milliseconds every_;
  Then then_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread accept_;
  std::vector<std::thread> conns_;  // GUARDED_BY(mu_)
};

}  // namespace hookrelay::testing
