#include "common/random.h"

#include <gtest/gtest.h>

namespace hookrelay {
namespace {

TEST(RandomTest, SameSeedSameSequence) {
  SeededRandom a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    EXPECT_NE(x, c.Next());
  }
}

TEST(RandomTest, UniformIntStaysInRangeAndCoversIt) {
  SeededRandom r(7);
  int seen[5] = {0};
  for (int i = 0; i < 10'000; ++i) {
    int64_t v = r.UniformInt(10, 14);
    ASSERT_GE(v, 10);
    ASSERT_LE(v, 14);
    ++seen[v - 10];
  }
  for (int count : seen) EXPECT_GT(count, 1800);  // ~2000 each
  EXPECT_EQ(r.UniformInt(3, 3), 3);
}

TEST(RandomTest, Uniform01MeanIsHalf) {
  SeededRandom r(1);
  double sum = 0;
  for (int i = 0; i < 100'000; ++i) {
    double u = r.Uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100'000, 0.5, 0.01);
}

}  // namespace
}  // namespace hookrelay
