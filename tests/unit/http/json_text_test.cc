// http::SerializeJson: the API's and the CLI's JSON text, with plain numbers.
#include "http/json_text.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace hookrelay::http {
namespace {

namespace json = boost::json;

TEST(SerializeJsonTest, NumbersArePlain) {
  EXPECT_EQ(SerializeJson(json::value(50.0)), "50");  // boost::json writes 5E1
  EXPECT_EQ(SerializeJson(json::value(3.0)), "3");
  EXPECT_EQ(SerializeJson(json::value(-2.0)), "-2");
  EXPECT_EQ(SerializeJson(json::value(0.0)), "0");
  EXPECT_EQ(SerializeJson(json::value(0.25)), "0.25");
  EXPECT_EQ(SerializeJson(json::value(1.0 / 60)), "0.016666666666666666");
  EXPECT_EQ(SerializeJson(json::value(1e-7)), "0.0000001");
  EXPECT_EQ(SerializeJson(json::value(1e20)), "100000000000000000000");
  EXPECT_EQ(SerializeJson(json::value(int64_t{7})), "7");
  EXPECT_EQ(SerializeJson(json::value(uint64_t{18446744073709551615u})), "18446744073709551615");
  // What it writes parses back to the same number.
  for (double d : {0.1, 1.5, 123456.789, 1.0 / 3, 1e-300, 1e300}) {
    EXPECT_EQ(json::parse(SerializeJson(json::value(d))).to_number<double>(), d) << d;
  }
}

TEST(SerializeJsonTest, EverythingElseAsBoostWritesIt) {
  json::value v = json::parse(
      R"({"a":[1,2.5,{"b":null,"c":true}],"s":"q\"uote\n\u0001","e":{},"f":[],"rate":5E1})");
  EXPECT_EQ(SerializeJson(v),
            R"({"a":[1,2.5,{"b":null,"c":true}],"s":"q\"uote\n\u0001","e":{},"f":[],"rate":50})");
  EXPECT_EQ(json::parse(SerializeJson(v)).at("s"), v.at("s"));
}

}  // namespace
}  // namespace hookrelay::http
