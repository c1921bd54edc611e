#pragma once

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "alerts/alert.h"

namespace hookrelay::testing {

// An AlertSink that keeps every alert raised, for tests of what raises them. Thread-safe.
class FakeAlertSink final : public alerts::AlertSink {
 public:
  void Raise(alerts::Alert a) override {
    std::lock_guard lock(mu_);
    alerts_.push_back(std::move(a));
  }
  std::vector<alerts::Alert> all() const {
    std::lock_guard lock(mu_);
    return alerts_;
  }
  int count(alerts::Alert::Kind kind) const {
    std::lock_guard lock(mu_);
    return static_cast<int>(std::count_if(alerts_.begin(), alerts_.end(),
                                          [&](const alerts::Alert& a) { return a.kind == kind; }));
  }

 private:
  mutable std::mutex mu_;
  std::vector<alerts::Alert> alerts_;
};

}  // namespace hookrelay::testing
