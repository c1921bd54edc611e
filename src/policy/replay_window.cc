#include "policy/replay_window.h"

#include "common/units.h"

namespace hookrelay::policy {

std::string ReplayWindowName(Duration window) {
  constexpr Duration kDay = std::chrono::hours(24);
  if (window >= kDay && window % kDay == Duration(0)) {
    return std::to_string(window / kDay) + "-day";
  }
  return FormatDuration(window);
}

bool PastReplayWindow(TimePoint received_at, Duration window, TimePoint now) {
  return now > received_at + window;
}

}  // namespace hookrelay::policy
