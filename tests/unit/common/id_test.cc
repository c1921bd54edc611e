#include "common/id.h"

#include <gtest/gtest.h>

#include <set>

namespace hookrelay {
namespace {

TEST(UlidTest, ShapeAndUniqueness) {
  FakeClock clock;
  SeededRandom random(9);
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) {
    std::string id = NewUlid(clock, random);
    EXPECT_TRUE(IsUlid(id)) << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 1000u);
}

TEST(UlidTest, SortsByTime) {
  FakeClock clock;
  SeededRandom random(9);
  std::string prev = NewUlid(clock, random);
  for (int i = 0; i < 100; ++i) {
    clock.Advance(std::chrono::milliseconds(1));
    std::string next = NewUlid(clock, random);
    EXPECT_LT(prev, next);
    prev = next;
  }
}

TEST(UlidTest, EncodesKnownTime) {
  // The ULID spec's example timestamp 1469918176385 encodes as "01ARYZ6S41".
  FakeClock clock(FromUnixMillis(1469918176385));
  SeededRandom random(1);
  EXPECT_EQ(NewUlid(clock, random).substr(0, 10), "01ARYZ6S41");
  EXPECT_FALSE(IsUlid("01ARYZ6S41"));
  EXPECT_FALSE(IsUlid("81ARYZ6S41TSV4RRFFQ69G5FAV"));
  EXPECT_FALSE(IsUlid("01ARYZ6S41TSV4RRFFQ69G5FAU"));  // U is not in the alphabet
  EXPECT_TRUE(IsUlid("01ARYZ6S41TSV4RRFFQ69G5FAV"));
}

}  // namespace
}  // namespace hookrelay
