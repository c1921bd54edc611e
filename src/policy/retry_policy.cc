#include "policy/retry_policy.h"

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <utility>

#include "common/units.h"

namespace hookrelay::policy {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr std::array<Strategy, 2> kStrategies = {Strategy::kLadder, Strategy::kExponential};
constexpr std::array<Jitter, 4> kJitters = {Jitter::kNone, Jitter::kFull, Jitter::kEqual,
                                            Jitter::kDecorrelated};

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

template <typename Range, typename NameFn>
std::string JoinNames(const Range& values, NameFn name) {
  std::string out;
  for (const auto& v : values) {
    if (!out.empty()) out += ", ";
    out += name(v);
  }
  return out;
}

// The paid tiers share one ladder and differ in how far along it they go.
RetryPolicy TierPreset(std::string name, int attempts, Duration timeout, Duration replay_window,
                       Duration max_duration) {
  RetryPolicy p;
  p.preset = std::move(name);
  p.strategy = Strategy::kLadder;
  p.jitter = Jitter::kNone;
  p.ladder = {minutes(5), minutes(30), hours(3), hours(18), hours(24)};
  p.cap = hours(24);
  p.max_attempts = attempts;
  p.timeout = timeout;
  p.replay_window = replay_window;
  p.max_duration = max_duration;
  return p;
}

Result<std::string_view> ReadString(const boost::json::value& v, std::string_view field) {
  if (!v.is_string()) return Status::InvalidArgument("must be a string", std::string(field));
  const boost::json::string& s = v.get_string();
  return std::string_view(s.data(), s.size());
}

Result<Duration> ReadDuration(const boost::json::value& v, const std::string& field) {
  if (!v.is_string()) {
    return Status::InvalidArgument("must be a duration string such as \"30s\"", field);
  }
  const boost::json::string& s = v.get_string();
  Result<Duration> d = ParseDuration(std::string_view(s.data(), s.size()));
  if (!d.ok()) return Status::InvalidArgument(d.status().message(), field);
  return d;
}

Result<int> ReadMaxAttempts(const boost::json::value& v) {
  const std::string field = "max_attempts";
  const std::string range = "must be between 1 and " + std::to_string(kMaxAttemptsLimit);
  if (v.is_uint64()) return Status::InvalidArgument(range, field);  // beyond int64: too large
  if (!v.is_int64()) return Status::InvalidArgument("must be an integer", field);
  const int64_t n = v.get_int64();
  if (n < 1 || n > kMaxAttemptsLimit) return Status::InvalidArgument(range, field);
  return static_cast<int>(n);
}

Result<std::vector<Duration>> ReadDelays(const boost::json::value& v) {
  if (!v.is_array()) {
    return Status::InvalidArgument("must be an array of durations such as [\"5m\", \"30m\"]",
                                   "delays");
  }
  std::vector<Duration> out;
  const boost::json::array& a = v.get_array();
  for (size_t i = 0; i < a.size(); ++i) {
    Result<Duration> d = ReadDuration(a[i], "delays[" + std::to_string(i) + "]");
    if (!d.ok()) return d.status();
    out.push_back(*d);
  }
  return out;
}

}  // namespace

std::string_view StrategyName(Strategy s) {
  switch (s) {
    case Strategy::kLadder: return "ladder";
    case Strategy::kExponential: return "exponential";
  }
  return "unknown";
}

std::string_view JitterName(Jitter j) {
  switch (j) {
    case Jitter::kNone: return "none";
    case Jitter::kFull: return "full";
    case Jitter::kEqual: return "equal";
    case Jitter::kDecorrelated: return "decorrelated";
  }
  return "unknown";
}

Status RetryPolicy::Validate() const {
  if (strategy == Strategy::kLadder) {
    if (ladder.empty()) {
      return Status::InvalidArgument("must not be empty for the ladder strategy", "delays");
    }
    for (size_t i = 0; i < ladder.size(); ++i) {
      if (ladder[i] <= Duration::zero()) {
        return Status::InvalidArgument("must be greater than 0",
                                       "delays[" + std::to_string(i) + "]");
      }
    }
    if (jitter == Jitter::kDecorrelated) {
      // Decorrelated jitter derives each delay from the previous one and ignores the steps.
      return Status::InvalidArgument(
          "decorrelated jitter needs the exponential strategy; use none, full or equal with a "
          "ladder",
          "jitter");
    }
  } else if (!ladder.empty()) {
    // Silently ignored steps would make a policy look different from what it does.
    return Status::InvalidArgument(
        "delays are only used by the ladder strategy; remove them or set strategy to ladder",
        "delays");
  }
  if (base <= Duration::zero()) return Status::InvalidArgument("must be greater than 0", "base");
  if (cap <= Duration::zero()) return Status::InvalidArgument("must be greater than 0", "cap");
  // A ladder does not use base, so its cap is not held to it.
  if (strategy == Strategy::kExponential && cap < base) {
    return Status::InvalidArgument(
        "must be greater than or equal to base (" + FormatDuration(base) + ")", "cap");
  }
  if (max_attempts < 1 || max_attempts > kMaxAttemptsLimit) {
    return Status::InvalidArgument("must be between 1 and " + std::to_string(kMaxAttemptsLimit),
                                   "max_attempts");
  }
  if (max_duration < Duration::zero()) {
    return Status::InvalidArgument("must not be negative (0 means no deadline)", "max_duration");
  }
  if (timeout <= Duration::zero()) {
    return Status::InvalidArgument("must be greater than 0", "timeout");
  }
  if (replay_window < Duration::zero()) {
    return Status::InvalidArgument("must not be negative", "replay_window");
  }
  return Status::Ok();
}

std::vector<std::string> PresetNames() { return {"default", "free", "pro", "scale"}; }

Result<RetryPolicy> PresetPolicy(std::string_view name) {
  if (name == "default") {
    RetryPolicy p;  // the struct's defaults are the default preset
    p.preset = "default";
    return p;
  }
  if (name == "free") return TierPreset("free", 3, seconds(60), hours(24 * 3), hours(24));
  if (name == "pro") return TierPreset("pro", 5, seconds(120), hours(24 * 30), hours(48));
  if (name == "scale") return TierPreset("scale", 10, seconds(300), hours(24 * 90), hours(24 * 7));
  return Status::InvalidArgument(
      "unknown preset " + Quote(name) +
          "; valid presets: " + JoinNames(PresetNames(), [](const std::string& s) { return s; }),
      "preset");
}

Result<RetryPolicy> ParsePolicy(const boost::json::value& v) {
  if (v.is_string()) {
    const boost::json::string& s = v.get_string();
    return PresetPolicy(std::string_view(s.data(), s.size()));
  }
  if (!v.is_object()) {
    return Status::InvalidArgument("must be a preset name or an object");
  }
  const boost::json::object& obj = v.get_object();

  bool named_preset = false;
  RetryPolicy start;
  if (const boost::json::value* preset = obj.if_contains("preset")) {
    Result<std::string_view> name = ReadString(*preset, "preset");
    if (!name.ok()) return name.status();
    Result<RetryPolicy> p = PresetPolicy(*name);
    if (!p.ok()) return p.status();
    start = *p;
    named_preset = true;
  } else {
    start = *PresetPolicy("default");
  }

  RetryPolicy p = start;
  bool strategy_set = false;
  bool delays_set = false;
  bool jitter_set = false;
  bool cap_set = false;
  for (const auto& [key_sv, value] : obj) {
    const std::string key(key_sv);
    if (key == "preset") continue;
    if (key == "strategy") {
      Result<std::string_view> s = ReadString(value, key);
      if (!s.ok()) return s.status();
      bool found = false;
      for (Strategy c : kStrategies) {
        if (StrategyName(c) == *s) p.strategy = c, found = true;
      }
      if (!found) {
        return Status::InvalidArgument("unknown strategy " + Quote(*s) + "; valid values: " +
                                           JoinNames(kStrategies, StrategyName),
                                       key);
      }
      strategy_set = true;
    } else if (key == "jitter") {
      Result<std::string_view> s = ReadString(value, key);
      if (!s.ok()) return s.status();
      bool found = false;
      for (Jitter c : kJitters) {
        if (JitterName(c) == *s) p.jitter = c, found = true;
      }
      if (!found) {
        return Status::InvalidArgument(
            "unknown jitter " + Quote(*s) + "; valid values: " + JoinNames(kJitters, JitterName),
            key);
      }
      jitter_set = true;
    } else if (key == "delays") {
      HR_ASSIGN_OR_RETURN(p.ladder, ReadDelays(value));
      delays_set = true;
    } else if (key == "max_attempts") {
      HR_ASSIGN_OR_RETURN(p.max_attempts, ReadMaxAttempts(value));
    } else if (key == "base" || key == "cap" || key == "max_duration" || key == "timeout" ||
               key == "replay_window") {
      Result<Duration> d = ReadDuration(value, key);
      if (!d.ok()) return d.status();
      Duration& target = key == "base"           ? p.base
                         : key == "cap"          ? p.cap
                         : key == "max_duration" ? p.max_duration
                         : key == "timeout"      ? p.timeout
                                                 : p.replay_window;
      target = *d;
      cap_set |= key == "cap";
    } else {
      return Status::InvalidArgument(
          "unknown field " + Quote(key) +
              " (known fields: preset, strategy, jitter, delays, max_attempts, base, cap, "
              "max_duration, timeout, replay_window)",
          key);
    }
  }
  // {"preset": "pro", "strategy": "exponential"} means "pro, but exponential": the inherited
  // ladder would otherwise be rejected as unused.
  if (strategy_set && !delays_set && p.strategy == Strategy::kExponential) p.ladder.clear();
  // A ladder without a preset states its delays exactly: what it leaves out does not come from
  // the default preset, whose equal jitter and 30m cap are made for exponential backoff (a
  // {"strategy": "ladder", "delays": ["2s"]} would otherwise retry after 1-2 s).
  if (!named_preset && p.strategy == Strategy::kLadder) {
    if (!jitter_set) p.jitter = Jitter::kNone;
    if (!cap_set) {
      p.cap = hours(24);
      for (Duration d : p.ladder) p.cap = std::max(p.cap, d);
    }
  }

  HR_RETURN_IF_ERROR(p.Validate());
  // The label says which preset a policy *is*, so any override makes it custom.
  if (!named_preset || p != start) p.preset.clear();
  return p;
}

boost::json::object PolicyToJson(const RetryPolicy& p) {
  boost::json::object o;
  if (!p.preset.empty()) o["preset"] = p.preset;
  o["strategy"] = StrategyName(p.strategy);
  o["jitter"] = JitterName(p.jitter);
  boost::json::array delays;
  for (Duration d : p.ladder) delays.emplace_back(FormatDuration(d));
  o["delays"] = std::move(delays);
  o["base"] = FormatDuration(p.base);
  o["cap"] = FormatDuration(p.cap);
  o["max_attempts"] = p.max_attempts;
  o["max_duration"] = FormatDuration(p.max_duration);
  o["timeout"] = FormatDuration(p.timeout);
  o["replay_window"] = FormatDuration(p.replay_window);
  return o;
}

}  // namespace hookrelay::policy
