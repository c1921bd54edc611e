#include "retention/retention_policy.h"

#include <gtest/gtest.h>

#include "unit/retention/retention_test_util.h"

namespace hookrelay::retention {
namespace {

using std::chrono::hours;
using test::AddDestination;
using test::MakeDestination;

constexpr Duration kDay = hours(24);

TEST(RetentionPolicyTest, NoDestinationsKeepsThirtyDays) {
  model::Catalog catalog;
  EXPECT_EQ(RetentionPeriod(catalog), 30 * kDay);
  EXPECT_EQ(kDefaultRetention, 30 * kDay);
  const TimePoint now = FromUnixMillis(1'700'000'000'000);
  EXPECT_EQ(PurgeCutoff(catalog, now), now - 30 * kDay);
}

TEST(RetentionPolicyTest, OneDestinationUsesItsWindow) {
  model::Catalog catalog;
  AddDestination(catalog, MakeDestination("billing", "free"));
  EXPECT_EQ(RetentionPeriod(catalog), 3 * kDay);  // shorter than the default is honoured
}

TEST(RetentionPolicyTest, LongestWindowWins) {
  model::Catalog catalog;
  AddDestination(catalog, MakeDestination("a", "free"));   // 3d
  AddDestination(catalog, MakeDestination("b", "pro"));    // 30d
  AddDestination(catalog, MakeDestination("c", "scale"));  // 90d
  AddDestination(catalog, MakeDestination("d", "default", 45 * kDay));
  EXPECT_EQ(RetentionPeriod(catalog), 90 * kDay);
  const TimePoint now = FromUnixMillis(1'800'000'000'000);
  EXPECT_EQ(PurgeCutoff(catalog, now), now - 90 * kDay);

  model::Catalog custom;
  AddDestination(custom, MakeDestination("a", "free"));
  AddDestination(custom, MakeDestination("d", "pro", 45 * kDay + hours(1)));
  EXPECT_EQ(RetentionPeriod(custom), 45 * kDay + hours(1));
}

TEST(RetentionPolicyTest, UnroutedDestinationsCount) {
  // Routes change; an event stored while a destination was routed may still be replayed to it.
  model::Catalog catalog;
  AddDestination(catalog, MakeDestination("routed", "free"));
  AddDestination(catalog, MakeDestination("orphan", "scale"));
  model::Source s;
  s.name = "stripe";
  catalog.sources.emplace("stripe", s);
  catalog.routes.push_back({"stripe->routed", "stripe", "routed"});
  ASSERT_TRUE(catalog.Validate().ok());
  EXPECT_EQ(RetentionPeriod(catalog), 90 * kDay);
}

TEST(RetentionPolicyTest, NonPositiveWindowsAreIgnored) {
  model::Destination zero = MakeDestination("zero");
  zero.policy.replay_window = Duration::zero();
  model::Destination negative = MakeDestination("negative");
  negative.policy.replay_window = -kDay;

  model::Catalog only_zero;
  AddDestination(only_zero, zero);
  AddDestination(only_zero, negative);
  EXPECT_EQ(RetentionPeriod(only_zero), kDefaultRetention);  // never "purge everything now"

  model::Catalog mixed;
  AddDestination(mixed, zero);
  AddDestination(mixed, MakeDestination("short", "default", 2 * kDay));
  EXPECT_EQ(RetentionPeriod(mixed), 2 * kDay);
}

}  // namespace
}  // namespace hookrelay::retention
