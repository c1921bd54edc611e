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

// Text from outside (a header value, a URL path) may hold any bytes; the JSON must still parse.
TEST(SerializeJsonTest, InvalidUtf8IsShownAsLatin1AndTheTextStaysValidJson) {
  const std::string cases[] = {
      "caf\xff",  // a byte that never occurs in UTF-8
      "a\xc0\xaf"
      "b",                 // overlong "/"
      "x\x80y",            // a lone continuation byte
      "e\xe2\x82",         // "\u20ac" cut short
      "\xed\xa0\x80",      // a surrogate
      "\xf4\x90\x80\x80",  // above U+10FFFF
  };
  for (const std::string& s : cases) {
    EXPECT_FALSE(IsValidUtf8(s)) << s;
    json::object o{{s, s}, {"list", json::array{json::value(s)}}};
    const std::string text = SerializeJson(o);
    boost::system::error_code ec;
    json::value back = json::parse(text, ec);  // boost::json rejects invalid UTF-8
    ASSERT_FALSE(ec) << text;
    EXPECT_EQ(back.at("list").at(0).as_string(), ValidUtf8(s));
  }
  EXPECT_EQ(ValidUtf8("caf\xff"), "caf\u00ff");
  EXPECT_EQ(ValidUtf8("x\x80y"), "x\u0080y");
  EXPECT_EQ(ValidUtf8("e\xe2\x82"), "e\u00e2\u0082");
  EXPECT_EQ(ValidUtf8("a\xc0\xaf"
                      "b"),
            "a\u00c0\u00af"
            "b");
  // Valid text, multibyte included, is left alone.
  for (std::string ok : {"", "plain", "caf\u00e9 \u20ac \U0001F600", "\xef\xbf\xbf"}) {
    EXPECT_TRUE(IsValidUtf8(ok)) << ok;
    EXPECT_EQ(ValidUtf8(ok), ok);
  }
}

}  // namespace
}  // namespace hookrelay::http
