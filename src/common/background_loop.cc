#include "common/background_loop.h"

#include <utility>

#include "common/thread_name.h"

namespace hookrelay {

BackgroundLoop::BackgroundLoop(std::string thread_name, const Clock& clock)
    : thread_name_(std::move(thread_name)), clock_(clock) {}

BackgroundLoop::~BackgroundLoop() { Stop(); }

void BackgroundLoop::Start(Pass pass) {
  pass_ = std::move(pass);
  thread_ = std::thread(&BackgroundLoop::Run, this);
}

void BackgroundLoop::RunNow() {
  {
    MutexLock lock(mu_);
    run_now_ = true;
  }
  cv_.notify_all();
}

void BackgroundLoop::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool BackgroundLoop::stopping() const {
  MutexLock lock(mu_);
  return stopping_;
}

bool BackgroundLoop::Sleep(Duration d) {
  MutexLock lock(mu_);
  clock_.WaitFor(lock, cv_, d, [this]() REQUIRES(mu_) { return stopping_ || run_now_; });
  return !stopping_;
}

bool BackgroundLoop::Pause(Duration d) {
  MutexLock lock(mu_);
  return !cv_.wait_for(lock, d, [this]() REQUIRES(mu_) { return stopping_; });
}

void BackgroundLoop::Run() {
  NameThisThread(thread_name_.c_str());
  for (;;) {
    {
      MutexLock lock(mu_);
      if (stopping_) return;
      run_now_ = false;  // this pass answers every RunNow so far
    }
    const Duration wait = pass_();
    if (!Sleep(wait)) return;
  }
}

}  // namespace hookrelay
