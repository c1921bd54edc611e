#include "app/auth_throttle.h"

#include <gtest/gtest.h>

namespace hookrelay::app {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

class AuthThrottleTest : public ::testing::Test {
 protected:
  AuthThrottleOptions Options() {
    AuthThrottleOptions o;
    o.max_failures = 3;
    o.window = minutes(1);
    o.block = minutes(1);
    o.max_block = minutes(8);
    o.max_addresses = 4;
    return o;
  }
  FakeClock clock_;
};

TEST_F(AuthThrottleTest, AFewFailuresAreAllowedThenTheAddressIsBlocked) {
  AuthThrottle t(clock_, Options());
  EXPECT_EQ(t.RetryAfter("10.0.0.1"), Duration(0));
  EXPECT_EQ(t.RecordFailure("10.0.0.1").failures, 1);
  EXPECT_EQ(t.RecordFailure("10.0.0.1").blocked_for, Duration(0));
  AuthThrottle::Failure third = t.RecordFailure("10.0.0.1");
  EXPECT_EQ(third.blocked_for, minutes(1));
  EXPECT_EQ(t.RetryAfter("10.0.0.1"), seconds(60));
  clock_.Advance(seconds(59) + Duration(1));
  EXPECT_EQ(t.RetryAfter("10.0.0.1"), seconds(1));  // rounded up
  // Other addresses are not affected.
  EXPECT_EQ(t.RetryAfter("10.0.0.2"), Duration(0));
  AuthThrottle::Stats s = t.stats();
  EXPECT_EQ(s.failures, 3);
  EXPECT_EQ(s.throttled, 2);
  EXPECT_EQ(s.blocks, 1);
}

TEST_F(AuthThrottleTest, TheRightTokenWorksAgainAfterTheBlockAndClearsTheCount) {
  AuthThrottle t(clock_, Options());
  for (int i = 0; i < 3; ++i) t.RecordFailure("10.0.0.1");
  ASSERT_GT(t.RetryAfter("10.0.0.1"), Duration(0));
  clock_.Advance(minutes(1));
  EXPECT_EQ(t.RetryAfter("10.0.0.1"), Duration(0));
  t.RecordSuccess("10.0.0.1");
  EXPECT_EQ(t.stats().tracked, 0u);
  // Counting starts from zero again, and the next block is the first one.
  EXPECT_EQ(t.RecordFailure("10.0.0.1").failures, 1);
  t.RecordFailure("10.0.0.1");
  EXPECT_EQ(t.RecordFailure("10.0.0.1").blocked_for, minutes(1));
}

TEST_F(AuthThrottleTest, FailuresOutsideTheWindowDoNotAddUp) {
  AuthThrottle t(clock_, Options());
  t.RecordFailure("a");
  t.RecordFailure("a");
  clock_.Advance(minutes(1));
  EXPECT_EQ(t.RecordFailure("a").failures, 1);
  EXPECT_EQ(t.RetryAfter("a"), Duration(0));
}

TEST_F(AuthThrottleTest, AnAddressThatKeepsGuessingIsBlockedLongerEachTimeUpToTheCap) {
  AuthThrottle t(clock_, Options());
  std::vector<Duration> blocks;
  for (int round = 0; round < 6; ++round) {
    AuthThrottle::Failure f;
    for (int i = 0; i < 3; ++i) f = t.RecordFailure("a");
    blocks.push_back(f.blocked_for);
    clock_.Advance(f.blocked_for);
  }
  EXPECT_EQ(blocks, (std::vector<Duration>{minutes(1), minutes(2), minutes(4), minutes(8),
                                           minutes(8), minutes(8)}));
  // So in 31 minutes it had 18 guesses, not millions.
}

TEST_F(AuthThrottleTest, AQuietAddressIsForgottenAfterMaxBlock) {
  AuthThrottle t(clock_, Options());
  for (int i = 0; i < 3; ++i) t.RecordFailure("a");
  clock_.Advance(minutes(1) + minutes(8));
  AuthThrottle::Failure f;
  for (int i = 0; i < 3; ++i) f = t.RecordFailure("a");
  EXPECT_EQ(f.blocked_for, minutes(1));  // the first block again, not the second
}

TEST_F(AuthThrottleTest, MemoryIsBoundedAndAFloodOfAddressesSharesOneBudget) {
  AuthThrottle t(clock_, Options());  // 4 addresses at most
  for (int i = 0; i < 3; ++i) t.RecordFailure("attacker");
  ASSERT_GT(t.RetryAfter("attacker"), Duration(0));
  for (int n = 0; n < 1000; ++n) t.RecordFailure("flood-" + std::to_string(n));
  EXPECT_LE(t.stats().tracked, 4u);
  // The tracked attacker was not pushed out by the flood.
  EXPECT_GT(t.RetryAfter("attacker"), Duration(0));
  // Untracked addresses share the overflow budget, which the flood exhausted.
  EXPECT_GT(t.RetryAfter("flood-999"), Duration(0));
  EXPECT_GT(t.RetryAfter("someone-new"), Duration(0));
}

TEST_F(AuthThrottleTest, ForgottenEntriesMakeRoomForNewAddresses) {
  AuthThrottle t(clock_, Options());
  for (int n = 0; n < 4; ++n) t.RecordFailure("old-" + std::to_string(n));
  clock_.Advance(hours(1));
  t.RecordFailure("new");
  AuthThrottle::Stats s = t.stats();
  EXPECT_EQ(s.tracked, 1u);
  EXPECT_EQ(t.RecordFailure("new").failures, 2);
}

}  // namespace
}  // namespace hookrelay::app

namespace hookrelay::app {
namespace {

// Issue 32.4: IPv6 peers are counted per /64 (as the server's connection cap counts them), so
// an attacker cannot get a fresh budget for each of the 2^64 addresses of its network.
TEST(AuthThrottleKeyTest, Ipv6IsKeyedByItsSlash64AndIpv4ByAddress) {
  EXPECT_EQ(AuthThrottle::KeyOf("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
  EXPECT_EQ(AuthThrottle::KeyOf("2001:db8:1:2::1"), AuthThrottle::KeyOf("2001:db8:1:2:ff::9"));
  EXPECT_NE(AuthThrottle::KeyOf("2001:db8:1:2::1"), AuthThrottle::KeyOf("2001:db8:1:3::1"));
  EXPECT_EQ(AuthThrottle::KeyOf("::ffff:10.0.0.7"), "10.0.0.7");
  EXPECT_EQ(AuthThrottle::KeyOf("10.0.0.7"), "10.0.0.7");
  EXPECT_EQ(AuthThrottle::KeyOf("not an address"), "not an address");
}

TEST(AuthThrottleKeyTest, GuessesFromOneSlash64ShareOneBudget) {
  FakeClock clock;
  AuthThrottleOptions o;
  o.max_failures = 3;
  AuthThrottle t(clock, o);
  t.RecordFailure("2001:db8::1");
  t.RecordFailure("2001:db8::2");
  EXPECT_EQ(t.RecordFailure("2001:db8::3").blocked_for, std::chrono::minutes(1));
  // A wrong token from the blocked /64 is refused with the wait, and counted as throttled.
  AuthThrottle::Failure f = t.RecordFailure("2001:db8::4");
  EXPECT_EQ(f.retry_after, std::chrono::seconds(60));
  EXPECT_EQ(t.stats().throttled, 1);
  EXPECT_EQ(t.RecordFailure("2001:db9::1").retry_after, Duration(0));
}

}  // namespace
}  // namespace hookrelay::app
