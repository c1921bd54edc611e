#include "delivery/destination_control.h"

#include <gtest/gtest.h>

#include <string>

#include "model/destination.h"
#include "store/store.h"

namespace hookrelay::delivery {
namespace {

store::DestinationControl Stored(std::optional<std::string> pause_reason) {
  store::DestinationControl c;
  if (pause_reason) c.pause = store::DestinationPause{*pause_reason, TimePoint{}};
  return c;
}

TEST(DestinationControlTest, TheViewSaysWhoPausedIt) {
  model::Destination d;
  d.name = "orders";

  DestinationControl active(d.breaker, Stored(std::nullopt));
  ControlView v = active.View(&d);
  EXPECT_FALSE(v.paused);
  EXPECT_EQ(v.paused_by, PausedBy::kNone);
  EXPECT_EQ(v.paused_reason, "");

  DestinationControl by_operator(d.breaker, Stored("maintenance"));
  v = by_operator.View(&d);
  EXPECT_TRUE(v.paused);
  EXPECT_EQ(v.paused_by, PausedBy::kOperator);
  EXPECT_EQ(v.paused_reason, "maintenance");

  DestinationControl gone(d.breaker, Stored(std::string(store::kGonePauseReason)));
  EXPECT_EQ(gone.View(&d).paused_by, PausedBy::kGone);

  // The catalog's pause is part of the one view (the metrics merged it by hand before).
  d.paused = true;
  v = active.View(&d);
  EXPECT_TRUE(v.paused);
  EXPECT_EQ(v.paused_by, PausedBy::kConfig);
  EXPECT_EQ(v.paused_reason, kConfigPauseReason);
  // Both: the catalog's pause wins, the stored reason is kept (as the API showed it).
  v = by_operator.View(&d);
  EXPECT_EQ(v.paused_by, PausedBy::kConfig);
  EXPECT_EQ(v.paused_reason, "maintenance");
  // A destination the catalog no longer has: only the stored pause.
  EXPECT_EQ(by_operator.View(nullptr).paused_by, PausedBy::kOperator);
}

TEST(DestinationControlTest, AReadOlderThanAChangeHereIsNotAdopted) {
  model::Destination d;
  DestinationControl c(d.breaker, Stored(std::nullopt));
  const uint64_t read_gen = c.control_gen;
  c.PausedHere("maintenance", TimePoint{});
  // The read began before the pause: it says "not paused", which must not undo the pause.
  EXPECT_FALSE(c.Adopt(Stored(std::nullopt), read_gen));
  EXPECT_TRUE(c.paused);
  // A read begun after it is taken; the resume (by another node) asks for slow start.
  EXPECT_TRUE(c.Adopt(Stored(std::nullopt), c.control_gen));
  EXPECT_FALSE(c.paused);
  EXPECT_EQ(c.paused_reason, "");
}

TEST(DestinationControlTest, PendingInputsKeepTheLocalBreaker) {
  model::Destination d;
  DestinationControl c(d.breaker, Stored(std::nullopt));
  store::DestinationControl stored = Stored(std::nullopt);
  stored.breaker.state = policy::BreakerState::kOpen;
  stored.breaker.trips = 1;
  stored.breaker.open_until = TimePoint{} + std::chrono::seconds(30);
  c.breaker_pending = 1;
  EXPECT_FALSE(c.Adopt(stored, c.control_gen));
  EXPECT_EQ(c.breaker.state(), policy::BreakerState::kClosed);  // this node's outcomes first
  c.breaker_pending = 0;
  c.Adopt(stored, c.control_gen);
  EXPECT_EQ(c.breaker.state(), policy::BreakerState::kOpen);
}

TEST(DestinationControlTest, AResetMakesEarlierTransitionsStale) {
  model::Destination d;
  DestinationControl c(d.breaker, Stored(std::nullopt));
  const uint64_t epoch = c.breaker_epoch;
  const uint64_t gen = c.control_gen;
  c.BreakerResetHere(d.breaker, policy::BreakerSnapshot{});
  EXPECT_NE(c.breaker_epoch, epoch);
  EXPECT_NE(c.control_gen, gen);
  EXPECT_EQ(c.breaker.state(), policy::BreakerState::kClosed);
}

}  // namespace
}  // namespace hookrelay::delivery
