#include "cli/catalog_edit.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>

#include "support/process.h"

namespace hookrelay::cli {
namespace {

namespace json = boost::json;

TEST(CatalogEditTest, SourceBodyFromFlagsOverTheSpec) {
  SourceFlags f;
  f.spec = R"({"max_body": "1MiB", "verify": {"tolerance": "10m"}})";
  f.verify = "stripe";
  f.secrets = {"whsec_one", "whsec_two"};
  f.dedup_json = "id";
  auto body = BuildSourceBody("pay", f, false);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(json::value(*body), json::parse(R"({"max_body": "1MiB", "name": "pay",
      "verify": {"tolerance": "10m", "scheme": "stripe", "secrets": ["whsec_one", "whsec_two"]},
      "dedup": {"json": "id"}})"));
  // An update is a merge patch: no name, and the other dedup key is cleared.
  SourceFlags u;
  u.dedup_header = "X-Id";
  auto patch = BuildSourceBody("pay", u, true);
  ASSERT_TRUE(patch.ok());
  EXPECT_EQ(json::value(*patch), json::parse(R"({"dedup": {"header": "X-Id", "json": null}})"));
  EXPECT_FALSE(BuildSourceBody("pay", SourceFlags{}, true).ok());  // nothing to change
  SourceFlags both;
  both.dedup_header = "X";
  both.dedup_json = "id";
  EXPECT_FALSE(BuildSourceBody("pay", both, false).ok());
}

TEST(CatalogEditTest, DestinationBodyParsesPolicyHeadersAndSecretFiles) {
  hookrelay::testing::TempDir dir;
  const std::string file = dir.path() + "/secret";
  std::ofstream(file) << "whsec_abc\n";
  DestinationFlags f;
  f.url = "https://x.example/h";
  f.policy = R"({"strategy": "exponential", "base": "1s"})";
  f.headers = {"Authorization: Bearer t", "X-Env:prod", "X-Key: @" + file};
  f.signing_secret = "@" + file;
  f.max_concurrency = 3;
  f.rate_limit = "10/s";
  f.replay_window = "3d";
  f.allow_private = true;
  auto body = BuildDestinationBody("d", f, false);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(json::value(*body), json::parse(R"({"name": "d", "url": "https://x.example/h",
      "policy": {"strategy": "exponential", "base": "1s"},
      "headers": {"Authorization": "Bearer t", "X-Env": "prod", "X-Key": "whsec_abc"},
      "signing_secret": "whsec_abc", "max_concurrency": 3, "rate_limit": "10/s",
      "replay_window": "3d", "allow_private": true})"));
  DestinationFlags preset;
  preset.url = "https://x.example";
  preset.policy = "pro";
  EXPECT_EQ(BuildDestinationBody("d", preset, false)->at("policy"), "pro");

  for (auto bad : {DestinationFlags{.policy = "{nope"}, DestinationFlags{.headers = {"nocolon"}},
                   DestinationFlags{.headers = {": v"}}, DestinationFlags{.spec = "[1]"},
                   DestinationFlags{.signing_secret = "@/nonexistent/file"}}) {
    auto r = BuildDestinationBody("d", bad, false);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  }
}

// Issue 30: --kind, --stream and --maxlen become the destination's kind and its fields (the
// server checks them: a field of another kind is its 400).
TEST(CatalogEditTest, KindStreamAndMaxlenFlags) {
  DestinationFlags f;
  f.url = "redis://:pw@cache.internal:6379/0";
  f.kind = "redis";
  f.stream = "webhooks";
  f.maxlen = 1000;
  auto body = BuildDestinationBody("orders", f, false);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(json::value(*body), json::parse(R"({"name": "orders",
      "url": "redis://:pw@cache.internal:6379/0", "kind": "redis", "stream": "webhooks",
      "maxlen": 1000})"));
  auto patch = BuildDestinationBody("orders", DestinationFlags{.stream = "other"}, true);
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  EXPECT_EQ(json::value(*patch), json::parse(R"({"stream": "other"})"));
}

// Issue 10.3: --forward-headers all|none|A,B becomes "forward_headers"; --secret-header marks a
// configured header's value secret.
TEST(CatalogEditTest, ForwardHeadersAndSecretHeadersFlags) {
  DestinationFlags f{.forward_headers = "X-GitHub-Event, X-Request-Id"};
  f.secret_headers = {"X-Foo"};
  auto body = BuildDestinationBody("d", f, true);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(json::value(*body), json::parse(R"({"forward_headers": ["X-GitHub-Event",
      "X-Request-Id"], "secret_headers": ["X-Foo"]})"));
  for (const char* mode : {"all", "none"}) {
    body = BuildDestinationBody("d", DestinationFlags{.forward_headers = mode}, true);
    ASSERT_TRUE(body.ok());
    EXPECT_EQ(body->at("forward_headers"), mode);
  }
  auto bad = BuildDestinationBody("d", DestinationFlags{.forward_headers = " , "}, true);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "--forward-headers");
}

// Issue 17: the PEM files are read here (the server may not have them) and sent whole; the
// credential replaces the other kind.
TEST(CatalogEditTest, TlsFilesAndCredentialFlags) {
  hookrelay::testing::TempDir dir;
  const std::string pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  hookrelay::testing::WriteFile(dir.path() + "/c.pem", pem);
  hookrelay::testing::WriteFile(dir.path() + "/k.pem", "key\n");
  DestinationFlags f;
  f.client_cert = dir.path() + "/c.pem";
  f.client_key = "@" + dir.path() + "/k.pem";
  f.ca_file = dir.path() + "/c.pem";
  f.basic = "relay:pa:ss";
  auto body = BuildDestinationBody("d", f, true);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(body->at("tls"),
            (json::object{{"client_cert", pem}, {"client_key", "key\n"}, {"ca_file", pem}}));
  EXPECT_EQ(
      body->at("auth"),
      json::parse(R"({"basic": {"username": "relay", "password": "pa:ss"}, "bearer": null})"));
  body = BuildDestinationBody("d", DestinationFlags{.bearer = "tok"}, true);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(body->at("auth"), json::parse(R"({"bearer": "tok", "basic": null})"));
  EXPECT_EQ(BuildDestinationBody("d", DestinationFlags{.client_key = dir.path() + "/nope"}, true)
                .status()
                .field(),
            "--client-key");
  EXPECT_EQ(BuildDestinationBody("d", DestinationFlags{.basic = "no-colon"}, true).status().field(),
            "--basic");
  EXPECT_FALSE(
      BuildDestinationBody("d", DestinationFlags{.bearer = "a", .basic = "u:p"}, true).ok());
}

TEST(CatalogEditTest, ReadValueArgReadsFilesOnlyAfterAnAt) {
  EXPECT_EQ(*ReadValueArg("plain", "--x"), "plain");
  EXPECT_EQ(*ReadValueArg("@", "--x"), "@");
  auto missing = ReadValueArg("@/nonexistent/x", "--secret");
  ASSERT_FALSE(missing.ok());
  // Issue 32.10: with the OS's reason.
  EXPECT_NE(missing.status().message().find(
                "--secret: cannot read /nonexistent/x: No such file or directory"),
            std::string::npos)
      << missing.status().message();
  auto dir = ReadValueArg("@/", "--secret");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("cannot read /: Is a directory"), std::string::npos)
      << dir.status().message();
}

TEST(CatalogEditTest, TlsFilesThatCannotBeReadSayWhy) {
  for (auto [flags, flag] :
       {std::pair{DestinationFlags{.client_cert = "/nonexistent/c.pem"}, "--client-cert"},
        std::pair{DestinationFlags{.client_key = "@/nonexistent/c.pem"}, "--client-key"},
        std::pair{DestinationFlags{.ca_file = "/nonexistent/c.pem"}, "--ca-file"}}) {
    auto body = BuildDestinationBody("d", flags, true);
    ASSERT_FALSE(body.ok()) << flag;
    EXPECT_EQ(body.status().message(),
              std::string(flag) + ": cannot read /nonexistent/c.pem: No such file or directory");
  }
}

}  // namespace
}  // namespace hookrelay::cli
