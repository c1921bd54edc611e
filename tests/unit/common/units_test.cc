#include "common/units.h"

#include <gtest/gtest.h>

namespace hookrelay {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(DurationTest, ParsesEachUnit) {
  EXPECT_EQ(*ParseDuration("250ms"), milliseconds(250));
  EXPECT_EQ(*ParseDuration("5s"), seconds(5));
  EXPECT_EQ(*ParseDuration("5m"), minutes(5));
  EXPECT_EQ(*ParseDuration("3h"), hours(3));
  EXPECT_EQ(*ParseDuration("1d"), hours(24));
  EXPECT_EQ(*ParseDuration("0s"), milliseconds(0));
}

TEST(DurationTest, ParsesCompound) {
  EXPECT_EQ(*ParseDuration("1h30m"), minutes(90));
  EXPECT_EQ(*ParseDuration("1d2h3m4s5ms"), hours(26) + minutes(3) + seconds(4) + milliseconds(5));
}

TEST(DurationTest, RejectsMalformedWithReason) {
  for (const char* bad : {"", "5", "-5s", "5x", "s", "5 s", "1.5s", "5m1h", "5s5s", "ms", "5sec"}) {
    auto r = ParseDuration(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_FALSE(r.status().message().empty()) << bad;
  }
  EXPECT_NE(ParseDuration("5").status().message().find("no unit"), std::string::npos);
  EXPECT_NE(ParseDuration("5x").status().message().find("unknown unit"), std::string::npos);
  // "5 sec": the message names the unit that was meant and lists the valid ones.
  const std::string spaced = ParseDuration("5 sec").status().message();
  EXPECT_NE(spaced.find("unknown unit \"sec\""), std::string::npos) << spaced;
  EXPECT_NE(spaced.find("ms, s, m, h, d"), std::string::npos) << spaced;
  EXPECT_EQ(spaced.find("no unit"), std::string::npos) << spaced;
  // Issue 12.8: "1.5s" has its unit; the decimal is what is refused, with what to write.
  const std::string decimal = ParseDuration("1.5s").status().message();
  EXPECT_EQ(decimal.find("no unit"), std::string::npos) << decimal;
  EXPECT_NE(decimal.find("whole numbers only: use \"1500ms\""), std::string::npos) << decimal;
  EXPECT_NE(ParseDuration("2.25m").status().message().find("use \"135s\""), std::string::npos);
  EXPECT_NE(ParseDuration("0.5h").status().message().find("use \"30m\""), std::string::npos);
  EXPECT_NE(ParseDuration("1m0.5s").status().message().find("use \"1m500ms\""), std::string::npos);
  EXPECT_NE(ParseDuration("1.5").status().message().find("whole numbers only"), std::string::npos);
}

TEST(DurationTest, FormatsRoundedForDisplay) {
  EXPECT_EQ(FormatDurationRounded(milliseconds(106692)), "1m47s");  // jitter: 1m46s692ms
  EXPECT_EQ(FormatDurationRounded(milliseconds(600458)), "10m0s");  // "10m458ms old"
  EXPECT_EQ(FormatDurationRounded(minutes(5)), "5m");               // one unit: exact
  EXPECT_EQ(FormatDurationRounded(hours(3) + minutes(35)), "3h35m");
  EXPECT_EQ(FormatDurationRounded(hours(1) + minutes(30) + seconds(29)), "1h30m");
  EXPECT_EQ(FormatDurationRounded(milliseconds(46692)), "47s");
  EXPECT_EQ(FormatDurationRounded(milliseconds(59831)), "1m0s");
  // Issue 12.8: at most 2-3 significant figures: under ten seconds, tenths of a second.
  EXPECT_EQ(FormatDurationRounded(milliseconds(2500)), "2.5s");
  EXPECT_EQ(FormatDurationRounded(milliseconds(1719)), "1.7s");
  EXPECT_EQ(FormatDurationRounded(milliseconds(1040)), "1.0s");
  EXPECT_EQ(FormatDurationRounded(milliseconds(7042)), "7.0s");
  EXPECT_EQ(FormatDurationRounded(milliseconds(9970)), "10s");
  EXPECT_EQ(FormatDurationRounded(seconds(7)), "7s");
  EXPECT_EQ(FormatDurationRounded(milliseconds(250)), "250ms");
  EXPECT_EQ(FormatDurationRounded(milliseconds(0)), "0s");
  EXPECT_EQ(FormatDurationRounded(milliseconds(3599700)), "1h0m");  // 59m59.7s carries
  EXPECT_EQ(FormatDurationRounded(hours(25) + minutes(40)), "1d2h");
  EXPECT_EQ(FormatDurationRounded(seconds(-90) - milliseconds(400)), "-1m30s");
}

TEST(DurationTest, RejectsOverflow) {
  EXPECT_FALSE(ParseDuration("99999999999999999999999s").ok());
  EXPECT_FALSE(ParseDuration("9223372036854775807d").ok());
  EXPECT_FALSE(ParseDuration("40000d").ok());
  EXPECT_TRUE(ParseDuration("36500d").ok());
}

TEST(DurationTest, FormatsShortestExact) {
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0s");
  EXPECT_EQ(FormatDuration(milliseconds(250)), "250ms");
  EXPECT_EQ(FormatDuration(minutes(5)), "5m");
  EXPECT_EQ(FormatDuration(hours(3) + minutes(35)), "3h35m");
  EXPECT_EQ(FormatDuration(hours(21) + minutes(35)), "21h35m");
  EXPECT_EQ(FormatDuration(hours(25) + minutes(1) + seconds(1) + milliseconds(1)), "1d1h1m1s1ms");
  EXPECT_EQ(FormatDuration(seconds(-90)), "-1m30s");
}

TEST(DurationTest, FormatParseRoundTrip) {
  for (int64_t ms : {1LL, 999LL, 1000LL, 61'001LL, 86'400'000LL, 123'456'789LL}) {
    EXPECT_EQ(ParseDuration(FormatDuration(milliseconds(ms)))->count(), ms);
  }
}

TEST(ByteSizeTest, ParsesUnits) {
  EXPECT_EQ(*ParseByteSize("512"), 512u);
  EXPECT_EQ(*ParseByteSize("512B"), 512u);
  EXPECT_EQ(*ParseByteSize("64KiB"), 64u * 1024);
  EXPECT_EQ(*ParseByteSize("5MiB"), 5u * 1024 * 1024);
  EXPECT_EQ(*ParseByteSize("1GiB"), 1u << 30);
  EXPECT_EQ(*ParseByteSize("10KB"), 10'000u);
  EXPECT_EQ(*ParseByteSize("5MB"), 5'000'000u);
  EXPECT_FALSE(ParseByteSize("5XB").ok());
  EXPECT_FALSE(ParseByteSize("MiB").ok());
  EXPECT_FALSE(ParseByteSize("-1").ok());
  EXPECT_FALSE(ParseByteSize("99999999999GiB").ok());
  EXPECT_EQ(FormatByteSize(5u << 20), "5MiB");
  EXPECT_EQ(FormatByteSize(1000), "1000B");
}

TEST(RateTest, ParsesPerUnit) {
  EXPECT_DOUBLE_EQ(*ParseRate("100/s"), 100.0);
  EXPECT_DOUBLE_EQ(*ParseRate("600/m"), 10.0);
  EXPECT_DOUBLE_EQ(*ParseRate("3600/h"), 1.0);
  EXPECT_FALSE(ParseRate("0/s").ok());
  EXPECT_FALSE(ParseRate("100").ok());
  EXPECT_FALSE(ParseRate("100/d").ok());
  EXPECT_FALSE(ParseRate("/s").ok());
  // Issue 32.21: decimals, as FormatRate writes them and docs/api.md shows them.
  EXPECT_DOUBLE_EQ(*ParseRate("0.00001/s"), 0.00001);
  EXPECT_DOUBLE_EQ(*ParseRate("1.5/m"), 0.025);
  EXPECT_EQ(*ParseRate(FormatRate(0.00001)), 0.00001);
  for (const char* bad : {"0.0/s", ".5/s", "1./s", "1e3/s", "-1/s", "1.2.3/s", "1,5/s"}) {
    EXPECT_FALSE(ParseRate(bad).ok()) << bad;
  }
}

// Issue 12, point 3: the one rate formatter of the CLI and the server log; never scientific.
TEST(RateTest, FormatsAsAFlagWouldGiveIt) {
  EXPECT_EQ(FormatRate(50), "50/s");
  EXPECT_EQ(FormatRate(1.0 / 3600), "1/h");
  EXPECT_EQ(FormatRate(1.0 / 60), "1/m");
  EXPECT_EQ(FormatRate(0.5), "30/m");
  EXPECT_EQ(FormatRate(0.0123), "0.0123/s");
  EXPECT_EQ(FormatRate(0.00001), "0.00001/s");
  EXPECT_EQ(FormatRate(0.3 / 3600), "0.00008333333333333333/s");
  EXPECT_EQ(*ParseRate(FormatRate(1.0 / 3600)), 1.0 / 3600);
}

}  // namespace
}  // namespace hookrelay
