#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "policy/breaker.h"

namespace hookrelay::store {

// The reason of the pause the engine stores when an endpoint answers 410 Gone (pause_on_gone):
// the API tells it from the operator's pause by it (paused_by "gone").
inline constexpr std::string_view kGonePauseReason =
    "paused: the endpoint answered 410 Gone; fix it, then resume";

// A destination paused by the operator (or by a 410 Gone): shared by every node using the store.
struct DestinationPause {
  std::string reason;
  TimePoint since{};
  bool operator==(const DestinationPause&) const = default;
};

// What every node must obey for one destination: its breaker and its pause.
struct DestinationControl {
  policy::BreakerSnapshot breaker;        // a closed breaker when none was stored
  std::optional<DestinationPause> pause;  // nullopt: not paused
  bool operator==(const DestinationControl&) const = default;
};

// One input for Store::UpdateBreaker, at the time it happened.
using BreakerInputAt = policy::TimedBreakerInput;

// Destination control: the shared breaker and the pauses of destinations and of their
// deliveries. A role of Store (store.h); the embedded store implements it in
// sqlite/destination_control.cc.
class DestinationControlStore {
 public:
  virtual ~DestinationControlStore() = default;

  // Breaker state per destination, shared by all nodes using the store.
  virtual Result<std::optional<policy::BreakerSnapshot>> GetBreaker(
      const std::string& destination) = 0;
  virtual Status PutBreaker(const std::string& destination,
                            const policy::BreakerSnapshot& snapshot) = 0;

  // The shared breaker, changed atomically (docs/postgres.md, "Shared breaker and pause"): in one
  // transaction holding the destination's row (a closed breaker when there is none yet), applies
  // `inputs` in order with policy::ApplyBreakerInput under `config`, writes the row only when it
  // changed, and returns one step per input (its transition, kProbe's answer, the snapshot after
  // it). Failures counted by several nodes thus add up, and a transition (the trip, the half-open
  // probe, the close) is returned to exactly one caller. kInvalidArgument for no inputs.
  virtual Result<std::vector<policy::BreakerStep>> UpdateBreaker(
      const std::string& destination, const policy::BreakerConfig& config,
      const std::vector<BreakerInputAt>& inputs) = 0;
  // The destination's breaker and pause (a closed breaker, no pause, when nothing is stored).
  virtual Result<DestinationControl> GetDestinationControl(const std::string& destination) = 0;
  // Every destination with stored control state (a breaker or a pause), by name.
  virtual Result<std::map<std::string, DestinationControl>> ListDestinationControls() = 0;
  // Pauses the destination durably for every node (reason, since = now; a destination already
  // paused keeps its `since` and takes the new reason) and, in the same transaction, moves its
  // kScheduled deliveries to kPaused as PauseDeliveries does. Returns how many deliveries changed.
  virtual Result<int64_t> PauseDestination(const std::string& destination,
                                           const std::string& reason, TimePoint now) = 0;
  // Clears the pause and, in the same transaction, makes the kPaused deliveries due at `now` (as
  // ResumeDeliveries). Returns how many deliveries changed.
  virtual Result<int64_t> ResumeDestination(const std::string& destination, TimePoint now) = 0;

  // Moves every kScheduled delivery of `destination` to kPaused (with `reason`), or every kPaused
  // one back to kScheduled due at `now`. Returns how many changed.
  virtual Result<int64_t> PauseDeliveries(const std::string& destination,
                                          const std::string& reason) = 0;
  virtual Result<int64_t> ResumeDeliveries(const std::string& destination, TimePoint now) = 0;
  // Undoes PauseDeliveries: every kPaused delivery of `destination` back to kScheduled at its own
  // due time (a retry an hour away stays an hour away). For a pause decided on a stale copy of the
  // destination's state. Returns how many changed.
  virtual Result<int64_t> UnpauseDeliveries(const std::string& destination, TimePoint now) = 0;
};

}  // namespace hookrelay::store
