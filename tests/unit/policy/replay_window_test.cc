#include "policy/replay_window.h"

#include <gtest/gtest.h>

namespace hookrelay::policy {
namespace {

TEST(ReplayWindowTest, NamesTheWindow) {
  EXPECT_EQ(ReplayWindowName(std::chrono::hours(24 * 30)), "30-day");
  EXPECT_EQ(ReplayWindowName(std::chrono::hours(24)), "1-day");
  EXPECT_EQ(ReplayWindowName(std::chrono::seconds(1)), "1s");
  EXPECT_EQ(ReplayWindowName(std::chrono::hours(36)), "1d12h");
}

TEST(ReplayWindowTest, TheWindowsLastMillisecondStillReplays) {
  const TimePoint t0(Duration(1'700'000'000'000));
  EXPECT_FALSE(PastReplayWindow(t0, std::chrono::seconds(1), t0));
  EXPECT_FALSE(PastReplayWindow(t0, std::chrono::seconds(1), t0 + std::chrono::seconds(1)));
  EXPECT_TRUE(PastReplayWindow(t0, std::chrono::seconds(1), t0 + std::chrono::milliseconds(1001)));
  // A window of zero: only the instant of receipt.
  EXPECT_FALSE(PastReplayWindow(t0, Duration(0), t0));
  EXPECT_TRUE(PastReplayWindow(t0, Duration(0), t0 + std::chrono::milliseconds(1)));
}

}  // namespace
}  // namespace hookrelay::policy
