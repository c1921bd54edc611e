#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

#include "model/destination.h"

namespace hookrelay::model {
namespace {

namespace json = boost::json;

Status ParseError(json::object o) {
  o.emplace("name", "d");
  if (!o.contains("url")) o.emplace("url", "https://example.com/hook");
  auto d = ParseDestination(o);
  return d.ok() ? Status::Ok() : d.status();
}

// Issue 32.19: a header value with a NUL was accepted and then silently not sent (libcurl cuts a
// value there); every control character but a tab is refused, as CR and LF were.
TEST(DestinationFieldsTest, HeaderValuesWithControlCharactersAreRefused) {
  for (const std::string& value :
       {std::string("a\0Injected: b", 13), std::string("a\x01"), std::string("\x1b[2J"),
        std::string("a\x7f"), std::string("a\r\nX: y")}) {
    Status s = ParseError(json::object{{"headers", json::object{{"X-Env", value}}}});
    ASSERT_FALSE(s.ok()) << json::serialize(json::value(value));
    EXPECT_EQ(s.field(), "headers.X-Env");
    EXPECT_NE(s.message().find("not a valid HTTP header"), std::string::npos) << s.ToString();
  }
  EXPECT_TRUE(ParseError(json::object{{"headers", json::object{{"X-Env", "a\tb c"}}}}).ok());
}

TEST(DestinationFieldsTest, UrlPortsOutsideOneTo65535AreRefused) {
  for (const char* url : {"http://example.com:0/h", "http://example.com:99999/h",
                          "http://example.com:65536/", "http://example.com:000/"}) {
    Status s = ParseError(json::object{{"url", url}});
    ASSERT_FALSE(s.ok()) << url;
    EXPECT_EQ(s.field(), "url");
    EXPECT_NE(s.message().find("not a TCP port (1 to 65535)"), std::string::npos) << s.ToString();
  }
  for (const char* url : {"http://example.com:1/h", "https://example.com:65535/",
                          "http://example.com/h", "http://[::1]:8080/h"}) {
    EXPECT_TRUE(ParseError(json::object{{"url", url}}).ok()) << url;
  }
}

}  // namespace
}  // namespace hookrelay::model
