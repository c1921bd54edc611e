#include "common/time_format.h"

#include <gtest/gtest.h>

namespace hookrelay {
namespace {

// 1994-11-06T08:49:37Z, the example date of RFC 9110.
constexpr int64_t kRfcExampleMs = 784111777000;

TEST(TimeFormatTest, Rfc3339Format) {
  EXPECT_EQ(FormatRfc3339(FromUnixMillis(0)), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatRfc3339(FromUnixMillis(kRfcExampleMs + 123)), "1994-11-06T08:49:37.123Z");
  EXPECT_EQ(FormatRfc3339(FromUnixMillis(kRfcExampleMs), false), "1994-11-06T08:49:37Z");
}

TEST(TimeFormatTest, Rfc3339Parse) {
  EXPECT_EQ(ToUnixMillis(*ParseRfc3339("1994-11-06T08:49:37Z")), kRfcExampleMs);
  EXPECT_EQ(ToUnixMillis(*ParseRfc3339("1994-11-06T08:49:37.5Z")), kRfcExampleMs + 500);
  EXPECT_EQ(ToUnixMillis(*ParseRfc3339("1994-11-06T09:49:37.123+01:00")), kRfcExampleMs + 123);
  EXPECT_EQ(ToUnixMillis(*ParseRfc3339("1994-11-06T07:49:37-01:00")), kRfcExampleMs);
  for (const char* bad : {"", "1994-11-06", "1994-11-06T08:49:37", "1994-13-06T08:49:37Z",
                          "1994-11-06T08:49:37Zjunk", "2026-02-29T00:00:00Z",
                          "2026-04-31T00:00:00Z", "1994-11-06T25:00:00Z", "x994-11-06T08:49:37Z"}) {
    EXPECT_FALSE(ParseRfc3339(bad).has_value()) << bad;
  }
}

TEST(TimeFormatTest, LeapDaysOnlyInLeapYears) {
  EXPECT_TRUE(ParseRfc3339("2024-02-29T00:00:00Z").has_value());
  EXPECT_TRUE(ParseRfc3339("2000-02-29T00:00:00Z").has_value());
  EXPECT_FALSE(ParseRfc3339("2100-02-29T00:00:00Z").has_value());
  EXPECT_FALSE(ParseHttpDate("Thu, 31 Feb 2026 00:00:00 GMT").has_value());
}

TEST(TimeFormatTest, HttpDateAllThreeForms) {
  EXPECT_EQ(ToUnixMillis(*ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT")), kRfcExampleMs);
  EXPECT_EQ(ToUnixMillis(*ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT")), kRfcExampleMs);
  EXPECT_EQ(ToUnixMillis(*ParseHttpDate("Sun Nov  6 08:49:37 1994")), kRfcExampleMs);
  EXPECT_EQ(FormatHttpDate(FromUnixMillis(kRfcExampleMs)), "Sun, 06 Nov 1994 08:49:37 GMT");
}

TEST(TimeFormatTest, HttpDateRejectsMalformed) {
  for (const char* bad :
       {"", "120", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT extra", "tomorrow"}) {
    EXPECT_FALSE(ParseHttpDate(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace hookrelay
