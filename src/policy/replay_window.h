#pragma once

#include <string>

#include "common/clock.h"

// Whether an event may still be replayed to a destination: its policy's replay window
// (RetryPolicy::replay_window) counts from when the event was received. Pure.

namespace hookrelay::policy {

// True when `now` is past received_at + window: the event can no longer be replayed there.
bool PastReplayWindow(TimePoint received_at, Duration window, TimePoint now);

// "30-day" for whole days, else the duration as configured ("90m", "1s"), for the message that
// refuses a replay.
std::string ReplayWindowName(Duration window);

}  // namespace hookrelay::policy
