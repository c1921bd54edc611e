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

TEST(RedactSnippet, ASecretStraddlingTheCutLeavesNoPrefix) {
  const std::string secret = "Zq7bearerQW3rty9Lk2Mn";
  // Cut after 20 of its 21 characters, after 1, after all but "Bearer ".
  EXPECT_EQ(RedactSnippet("x: Bearer " + secret.substr(0, 20), {"Bearer " + secret, secret}, "(r)",
                          true, 100),
            "x: (r)");
  EXPECT_EQ(RedactSnippet("key: " + secret.substr(0, 1), {secret}, "(r)", true, 100), "key: (r)");
  EXPECT_EQ(RedactSnippet("key: " + secret.substr(0, 5), {secret}, "(r)", true, 100), "key: (r)");
  // Not cut: the body ended there, and what looks like a beginning is only text.
  EXPECT_EQ(RedactSnippet("key: Zq7", {secret}, "(r)", false, 100), "key: Zq7");
  // Whole ones before it are replaced too, and short ones are ignored at the cut as elsewhere.
  EXPECT_EQ(
      RedactSnippet(secret + " and " + secret.substr(0, 9), {secret, "short"}, "(r)", true, 100),
      "(r) and (r)");
  EXPECT_EQ(RedactSnippet("a sho", {"short"}, "(r)", true, 100), "a sho");
}

TEST(RedactSnippet, RedactsBeforeCuttingToTheLimit) {
  // 8 bytes of text, then a 12-byte secret: the first 10 bytes with it replaced are kept (cut
  // first, "abcdefgh" + "Se" would be left, and no longer a whole secret).
  EXPECT_EQ(RedactSnippet("abcdefghSecret-12345", {"Secret-12345"}, "(redacted)", false, 10),
            "abcdefgh(r");
  EXPECT_EQ(RedactSnippet("abc", {}, "(r)", true, 2), "ab");
  EXPECT_EQ(RedactSnippet("", {"long-enough-secret"}, "(r)", true, 10), "");
}

}  // namespace
}  // namespace hookrelay
