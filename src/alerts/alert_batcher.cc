#include "alerts/alert_batcher.h"

#include <algorithm>

namespace hookrelay::alerts {

namespace {

constexpr size_t kMaxSamples = 3;

std::optional<Alert::Kind> Opposite(Alert::Kind k) {
  switch (k) {
    case Alert::Kind::kBreakerOpened: return Alert::Kind::kBreakerClosed;
    case Alert::Kind::kBreakerClosed: return Alert::Kind::kBreakerOpened;
    case Alert::Kind::kDestinationPaused: return Alert::Kind::kDestinationResumed;
    case Alert::Kind::kDestinationResumed: return Alert::Kind::kDestinationPaused;
    case Alert::Kind::kDeliveriesFailed:
    case Alert::Kind::kStalled: return std::nullopt;
  }
  return std::nullopt;
}

void SortByTime(std::vector<Alert>& alerts) {
  std::stable_sort(alerts.begin(), alerts.end(),
                   [](const Alert& a, const Alert& b) { return a.at < b.at; });
}

}  // namespace

AlertBatcher::AlertBatcher(Duration window) : window_(std::max(window, Duration(1))) {}

std::vector<Alert> AlertBatcher::Add(Alert a, TimePoint now) {
  std::vector<Alert> out = Due(now);
  a.count = std::max<int64_t>(1, a.count);

  if (a.kind == Alert::Kind::kDeliveriesFailed) {
    auto it = batches_.find(a.destination);
    if (it == batches_.end()) {
      a.sample_reasons.clear();
      if (!a.reason.empty()) a.sample_reasons.push_back(a.reason);
      std::string destination = a.destination;
      batches_.emplace(std::move(destination), Batch{std::move(a), now + window_});
      return out;
    }
    Alert& b = it->second.alert;
    b.count += a.count;
    folded_ += a.count;
    if (!a.reason.empty()) {
      auto& s = b.sample_reasons;
      if (s.size() < kMaxSamples && std::find(s.begin(), s.end(), a.reason) == s.end()) {
        s.push_back(a.reason);
      }
      b.reason = std::move(a.reason);
    }
    return out;
  }

  Key key{a.destination, a.kind};
  auto it = repeats_.find(key);
  if (it != repeats_.end() && now < it->second.last_sent + window_) {
    folded_ += a.count;
    std::optional<Alert>& held = it->second.held;
    if (held) a.count += held->count;
    held = std::move(a);
    return out;
  }
  size_t first_new = out.size();
  if (auto opposite = Opposite(a.kind)) Release({a.destination, *opposite}, now, out);
  repeats_[key] = Repeats{now, std::nullopt};
  out.push_back(std::move(a));
  // Everything due before `now` keeps its place; the pair just released goes out in order.
  std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(first_new), out.end(),
                   [](const Alert& x, const Alert& y) { return x.at < y.at; });
  return out;
}

void AlertBatcher::Release(const Key& key, TimePoint now, std::vector<Alert>& out) {
  auto it = repeats_.find(key);
  if (it == repeats_.end() || !it->second.held) return;
  out.push_back(std::move(*it->second.held));
  it->second.held.reset();
  it->second.last_sent = now;
}

std::vector<Alert> AlertBatcher::Due(TimePoint now) {
  std::vector<Alert> out;
  for (auto it = batches_.begin(); it != batches_.end();) {
    if (it->second.due <= now) {
      out.push_back(std::move(it->second.alert));
      it = batches_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [key, r] : repeats_) {
    if (!r.held || now < r.last_sent + window_) continue;
    Release(key, now, out);
    if (auto opposite = Opposite(key.second)) Release({key.first, *opposite}, now, out);
  }
  // Forget destinations whose windows are over with nothing held.
  std::erase_if(repeats_, [&](const auto& kv) {
    return !kv.second.held && kv.second.last_sent + window_ <= now;
  });
  SortByTime(out);
  return out;
}

std::optional<TimePoint> AlertBatcher::NextDue() const {
  std::optional<TimePoint> next;
  auto consider = [&](TimePoint t) {
    if (!next || t < *next) next = t;
  };
  for (const auto& [destination, b] : batches_) consider(b.due);
  for (const auto& [key, r] : repeats_) {
    if (r.held) consider(r.last_sent + window_);
  }
  return next;
}

std::vector<Alert> AlertBatcher::Flush() {
  std::vector<Alert> out;
  for (auto& [destination, b] : batches_) out.push_back(std::move(b.alert));
  for (auto& [key, r] : repeats_) {
    if (r.held) out.push_back(std::move(*r.held));
  }
  batches_.clear();
  repeats_.clear();
  SortByTime(out);
  return out;
}

}  // namespace hookrelay::alerts
