#include "webui/web_assets.h"

#include <gtest/gtest.h>

namespace hookrelay::webui {
namespace {

constexpr std::string_view kTag = "\"0123456789abcdef0123456789abcdef\"";

TEST(EtagMatchesTest, NamesTheTagExactlyWeaklyInAListOrStar) {
  EXPECT_TRUE(EtagMatches(kTag, kTag));
  EXPECT_TRUE(EtagMatches("W/\"0123456789abcdef0123456789abcdef\"", kTag));
  EXPECT_TRUE(EtagMatches("\"x\", \"0123456789abcdef0123456789abcdef\"", kTag));
  EXPECT_TRUE(EtagMatches("\"x\",W/\"0123456789abcdef0123456789abcdef\" ", kTag));
  EXPECT_TRUE(EtagMatches(" * ", kTag));
}

TEST(EtagMatchesTest, AnotherTagOrGarbageDoesNot) {
  EXPECT_FALSE(EtagMatches("", kTag));
  EXPECT_FALSE(EtagMatches("\"0123456789abcdef\"", kTag));
  EXPECT_FALSE(EtagMatches("0123456789abcdef0123456789abcdef", kTag));  // unquoted
  EXPECT_FALSE(EtagMatches(",,,", kTag));
  EXPECT_FALSE(EtagMatches("W/", kTag));
  EXPECT_FALSE(EtagMatches("\"x\", *", kTag));  // "*" only alone
}

TEST(WebAssetsTest, EveryFileHasTheEtagOfItsContent) {
  ASSERT_FALSE(Assets().empty());
  for (const Asset& a : Assets()) {
    ASSERT_EQ(a.etag.size(), 34u) << a.path;
    http::Response r = Serve(a.path);
    EXPECT_EQ(r.status, 200) << a.path;
    EXPECT_EQ(r.body, a.body) << a.path;
    http::Response cached = Serve(a.path, a.etag);
    EXPECT_EQ(cached.status, 304) << a.path;
    EXPECT_TRUE(cached.body.empty()) << a.path;
  }
}

}  // namespace
}  // namespace hookrelay::webui
