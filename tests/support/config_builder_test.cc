// The test config builder (support/config_builder.h): what it writes is what hookrelay's own
// config parser reads, strings escaped whatever they hold.
#include "support/config_builder.h"

#include <gtest/gtest.h>

#include <string>

#include "app/config.h"

namespace hookrelay {
namespace {

using testing::TomlArray;
using testing::TomlInline;

TEST(ConfigBuilderTest, WritesTablesArraysOfTablesAndInlineTables) {
  const std::string toml = testing::Config()
                               .Source("src")
                               .Set("delivery.poll_interval", "100ms")
                               .Destination("d", "http://127.0.0.1:9/hooks",
                                            {{"max_concurrency", 4},
                                             {"policy", TomlInline({{"strategy", "ladder"},
                                                                    {"delays", TomlArray({"1s"})},
                                                                    {"max_attempts", 3}})}})
                               .Route("src", "d")
                               .Set("delivery.poll_interval", "200ms");  // replaces
  EXPECT_EQ(toml,
            "[delivery]\npoll_interval = \"200ms\"\n"
            "\n[[sources]]\nname = \"src\"\n"
            "\n[[destinations]]\nname = \"d\"\nurl = \"http://127.0.0.1:9/hooks\"\n"
            "allow_private = true\nmax_concurrency = 4\n"
            "policy = { strategy = \"ladder\", delays = [\"1s\"], max_attempts = 3 }\n"
            "\n[[routes]]\nsource = \"src\"\ndestination = \"d\"\n");
  auto config = app::ParseConfig(toml, "built.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->delivery.poll_interval, std::chrono::milliseconds(200));
  ASSERT_EQ(config->catalog.destinations.count("d"), 1u);
  EXPECT_EQ(config->catalog.destinations.at("d").url, "http://127.0.0.1:9/hooks");
  EXPECT_EQ(config->catalog.routes.size(), 1u);
}

TEST(ConfigBuilderTest, StringsAreEscapedSoTheParserReadsThemBackExactly) {
  // A verification secret is any string: quotes, backslashes, control characters, UTF-8.
  const std::string value = "a \"quoted\" \\ back\\slash\ttab\nnewline \x01 and h\u00e9llo";
  const std::string toml = testing::Config().Source(
      "s", {{"verify", TomlInline({{"scheme", "github"}, {"secrets", TomlArray({value})}})}});
  auto config = app::ParseConfig(toml, "built.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString() << "\n" << toml;
  const auto& verify = config->catalog.sources.at("s").verify;
  ASSERT_TRUE(verify.has_value());
  ASSERT_EQ(verify->secrets.size(), 1u);
  EXPECT_EQ(verify->secrets[0], value);
}

TEST(ConfigBuilderTest, AllowPrivateCanBeSetByTheCaller) {
  const std::string toml =
      testing::Config().Destination("d", "https://example.com/hooks", {{"allow_private", false}});
  EXPECT_EQ(toml.find("allow_private = true"), std::string::npos) << toml;
  EXPECT_NE(toml.find("allow_private = false"), std::string::npos) << toml;
}

}  // namespace
}  // namespace hookrelay
