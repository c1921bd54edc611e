#include "policy/retry_after.h"

#include <gtest/gtest.h>

#include <string>

#include "common/time_format.h"

namespace hookrelay::policy {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

constexpr Duration kYear = hours(24 * 365);

// Sun, 06 Nov 1994 08:49:37 GMT
const TimePoint kNow = FromUnixMillis(784111777000);

TEST(ParseRetryAfterTest, DeltaSeconds) {
  EXPECT_EQ(ParseRetryAfter("120", kNow), seconds(120));
  EXPECT_EQ(ParseRetryAfter("0", kNow), Duration::zero());
  EXPECT_EQ(ParseRetryAfter("007", kNow), seconds(7));
  EXPECT_EQ(ParseRetryAfter("  30\t", kNow), seconds(30));  // optional whitespace around
}

TEST(ParseRetryAfterTest, HttpDateInEveryFormRecipientsMustAccept) {
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:51:37 GMT", kNow), seconds(120));
  EXPECT_EQ(ParseRetryAfter("Sunday, 06-Nov-94 08:50:37 GMT", kNow), seconds(60));
  EXPECT_EQ(ParseRetryAfter("Sun Nov  6 09:49:37 1994", kNow), hours(1));
}

TEST(ParseRetryAfterTest, DateInThePastMeansNow) {
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", kNow), Duration::zero());
  EXPECT_EQ(ParseRetryAfter("Thu, 01 Jan 1970 00:00:00 GMT", kNow), Duration::zero());
}

TEST(ParseRetryAfterTest, SubSecondNowIsMeasuredExactly) {
  const TimePoint now = kNow + std::chrono::milliseconds(250);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:38 GMT", now), std::chrono::milliseconds(750));
}

TEST(ParseRetryAfterTest, MalformedIsIgnored) {
  for (const char* v : {"", "  ", "soon", "-5", "+5", "1.5", "12s", "1e3", "0x10", "12 34",
                        "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 25:49:37 GMT",
                        "Sun, 06 Foo 1994 08:49:37 GMT", "2026-11-30T06:00:00Z"}) {
    EXPECT_EQ(ParseRetryAfter(v, kNow), std::nullopt) << "\"" << v << "\"";
  }
}

TEST(ParseRetryAfterTest, AbsurdValuesAreClampedToAYear) {
  EXPECT_EQ(ParseRetryAfter("31535999", kNow), seconds(31535999));
  EXPECT_EQ(ParseRetryAfter("31536000", kNow), kYear);
  EXPECT_EQ(ParseRetryAfter("31536001", kNow), kYear);
  EXPECT_EQ(ParseRetryAfter("9223372036854775807", kNow), kYear);
  EXPECT_EQ(ParseRetryAfter(std::string(400, '9'), kNow), kYear);
  EXPECT_EQ(ParseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", kNow), kYear);
}

TEST(ParseRetryAfterTest, ExtremeNowDoesNotOverflow) {
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:51:37 GMT", TimePoint::max()), Duration::zero());
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:51:37 GMT", TimePoint::min()), kYear);
  EXPECT_EQ(ParseRetryAfter("60", TimePoint::max()), seconds(60));
}

TEST(ParseRetryAfterTest, RoundTripsWithFormatHttpDate) {
  const TimePoint later = kNow + hours(36);
  EXPECT_EQ(ParseRetryAfter(FormatHttpDate(later), kNow), hours(36));
}

}  // namespace
}  // namespace hookrelay::policy
