// Fuzzes retry policies end to end: JSON -> ParsePolicy -> Validate -> PlanSchedule, then Decide()
// over a scripted sequence of attempt outcomes.
//
// Input: a policy as JSON ("pro" or {"strategy": …}), optionally followed by a line "--" and one
// outcome per line: an HTTP status with an optional Retry-After value ("503 120",
// "429 Sun, 06 Nov 1994 08:49:37 GMT") or a transport error name ("timeout").
//
// Invariants (abort() on violation):
//   - a policy that parses validates, and PolicyToJson → ParsePolicy gives it back unchanged;
//   - PlanSchedule: 1 <= attempts <= max_attempts, numbered 1, 2, …; each delay within [0, cap];
//     at_s non-decreasing and the sum of the delays; nothing after max_duration (when set);
//   - Decide: a retry is scheduled only below max_attempts, at now + delay, never past the
//     deadline; its delay is within [0, cap] unless Retry-After applied (then within 365 days).

#include <boost/json.hpp>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "policy/decision.h"
#include "policy/outcome.h"
#include "policy/retry_policy.h"

namespace {

namespace json = boost::json;
using hookrelay::Duration;
using hookrelay::TimePoint;
using namespace hookrelay::policy;

[[noreturn]] void Fail(const std::string& what, const RetryPolicy& p) {
  std::fprintf(stderr, "policy_fuzzer: %s\npolicy: %s\n", what.c_str(),
               json::serialize(PolicyToJson(p)).c_str());
  std::abort();
}

// FNV-1a, so the jitter is a function of the input and a crash reproduces.
uint64_t Hash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

void CheckSchedule(const RetryPolicy& p, uint64_t seed) {
  hookrelay::SeededRandom random(seed);
  const Schedule s = PlanSchedule(p, random);
  const auto& a = s.attempts;
  if (a.empty() || a.size() > static_cast<size_t>(p.max_attempts)) {
    Fail("PlanSchedule made " + std::to_string(a.size()) + " attempts, max_attempts " +
             std::to_string(p.max_attempts),
         p);
  }
  if (a[0].n != 1 || a[0].delay != Duration::zero() || a[0].at != Duration::zero()) {
    Fail("attempt 1 is not at 0", p);
  }
  for (size_t i = 1; i < a.size(); ++i) {
    const std::string which = "attempt " + std::to_string(a[i].n) + ": ";
    if (a[i].n != static_cast<int>(i) + 1) Fail(which + "numbered out of order", p);
    if (a[i].delay < Duration::zero() || a[i].delay > p.cap) {
      Fail(which + "delay " + std::to_string(a[i].delay.count()) + "ms outside [0, cap]", p);
    }
    if (a[i].at < a[i - 1].at) Fail(which + "at_s decreases", p);
    if (a[i].at != a[i - 1].at + a[i].delay) Fail(which + "at_s is not the sum of delays", p);
    if (p.max_duration > Duration::zero() && a[i].at > p.max_duration) {
      Fail(which + "scheduled after max_duration", p);
    }
  }
  if (s.gives_up_after != a.back().at) Fail("gives_up_after is not the last attempt's time", p);
  if (s.gives_up_kind != DecisionKind::kGiveUpAttempts &&
      s.gives_up_kind != DecisionKind::kGiveUpDeadline) {
    Fail("PlanSchedule gives up for an unexpected reason", p);
  }
  if (s.gives_up_kind == DecisionKind::kGiveUpAttempts &&
      a.size() != static_cast<size_t>(p.max_attempts)) {
    Fail("gives up on attempts before max_attempts", p);
  }
}

std::optional<AttemptOutcome> ParseOutcome(std::string_view line) {
  static constexpr std::pair<std::string_view, TransportError> kErrors[] = {
      {"timeout", TransportError::kTimeout},
      {"refused", TransportError::kConnectionRefused},
      {"reset", TransportError::kConnectionReset},
      {"dns", TransportError::kDns},
      {"tls", TransportError::kTls},
      {"private", TransportError::kPrivateAddress},
      {"other", TransportError::kOther}};
  for (const auto& [name, error] : kErrors) {
    if (line == name) return AttemptOutcome{.error = error};
  }
  AttemptOutcome o;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), o.status_code);
  if (ec != std::errc()) return std::nullopt;
  std::string_view rest = line.substr(end - line.data());
  if (!rest.empty() && rest.front() == ' ') o.retry_after = std::string(rest.substr(1));
  return o;
}

void CheckDecisions(const RetryPolicy& p, std::string_view script, uint64_t seed) {
  hookrelay::SeededRandom random(seed);
  TimePoint now = hookrelay::FromUnixMillis(1'700'000'000'000);
  DeliveryProgress progress;
  while (!script.empty()) {
    const size_t cut = script.find('\n');
    const std::string_view line = script.substr(0, cut);
    script = cut == std::string_view::npos ? std::string_view() : script.substr(cut + 1);
    std::optional<AttemptOutcome> outcome = ParseOutcome(line);
    if (!outcome) continue;

    const RetryDecision d = Decide(p, progress, *outcome, now, random);
    const std::string which =
        "attempt " + std::to_string(progress.attempt) + " (" + std::string(line) + "): ";
    const TimePoint first = progress.first_failure_at.value_or(now);
    if (d.kind != DecisionKind::kDelivered) {
      if (d.first_failure_at != first) Fail(which + "first_failure_at not carried", p);
      if (p.max_duration > Duration::zero() && d.deadline != first + p.max_duration) {
        Fail(which + "deadline is not first failure + max_duration", p);
      }
    }
    if (d.kind != DecisionKind::kRetry) {
      if (d.reason.empty()) Fail(which + "decision without a reason", p);
      return;
    }
    if (progress.attempt >= p.max_attempts) Fail(which + "retry past max_attempts", p);
    if (d.delay < Duration::zero()) Fail(which + "negative delay", p);
    if (d.retry_after_applied ? d.delay > std::chrono::hours(24 * 365) : d.delay > p.cap) {
      Fail(which + "delay " + std::to_string(d.delay.count()) + "ms too long", p);
    }
    if (d.next_attempt_at != now + d.delay) Fail(which + "next_attempt_at != now + delay", p);
    if (d.deadline && d.next_attempt_at > *d.deadline) Fail(which + "retry past deadline", p);

    now = d.next_attempt_at;
    progress.attempt++;
    progress.first_failure_at = d.first_failure_at;
    progress.previous_delay = d.delay;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t sep = input.find("\n--\n");
  const std::string_view policy_text = input.substr(0, sep);
  const std::string_view script =
      sep == std::string_view::npos ? std::string_view() : input.substr(sep + 4);

  json::error_code ec;
  json::value v = json::parse(policy_text, ec);
  if (ec) return 0;
  hookrelay::Result<RetryPolicy> parsed = ParsePolicy(v);
  if (!parsed.ok()) {
    if (parsed.status().code() != hookrelay::Status::Code::kInvalidArgument) {
      std::fprintf(stderr, "policy_fuzzer: ParsePolicy failed with %s\n",
                   parsed.status().ToString().c_str());
      std::abort();
    }
    return 0;
  }
  const RetryPolicy& p = *parsed;
  if (hookrelay::Status st = p.Validate(); !st.ok()) {
    Fail("a parsed policy does not validate: " + st.ToString(), p);
  }
  hookrelay::Result<RetryPolicy> again = ParsePolicy(json::value(PolicyToJson(p)));
  if (!again.ok()) Fail("PolicyToJson output does not parse: " + again.status().ToString(), p);
  if (*again != p) Fail("PolicyToJson → ParsePolicy changes the policy", p);

  const uint64_t seed = Hash(input);
  CheckSchedule(p, seed);
  CheckDecisions(p, script, seed);
  return 0;
}
