#include "common/redact.h"

#include <gtest/gtest.h>

namespace hookrelay {
namespace {

TEST(RedactUrlCredentials, HidesUserinfoOnly) {
  EXPECT_EQ(RedactUrlCredentials("https://user:pw@host.example/x?y=1"),
            "https://***@host.example/x?y=1");
  EXPECT_EQ(RedactUrlCredentials("connect to http://tok@10.0.0.1:8080 failed"),
            "connect to http://***@10.0.0.1:8080 failed");
  EXPECT_EQ(RedactUrlCredentials("a http://u:p@h/ and https://v@w, done"),
            "a http://***@h/ and https://***@w, done");
  // '@' in a path or query is not userinfo.
  EXPECT_EQ(RedactUrlCredentials("https://host/a@b?c=@d"), "https://host/a@b?c=@d");
  // A password with '@' in it: everything up to the last '@' of the authority goes.
  EXPECT_EQ(RedactUrlCredentials("https://u:p@ss@host/"), "https://***@host/");
  EXPECT_EQ(RedactUrlCredentials("HTTP 500"), "HTTP 500");
  EXPECT_EQ(RedactUrlCredentials(""), "");
  EXPECT_EQ(RedactUrlCredentials("ends with ://"), "ends with ://");
}

}  // namespace
}  // namespace hookrelay
