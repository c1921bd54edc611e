#include "catalog/tls_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <string>

#include "support/process.h"

namespace hookrelay::catalog {
namespace {

namespace json = boost::json;
using hookrelay::testing::TempDir;
using hookrelay::testing::WriteFile;

const std::string kPem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

json::value Dest(json::object tls) {
  return json::object{{"name", "d"}, {"url", "https://example.com/"}, {"tls", std::move(tls)}};
}

TEST(InlineTlsFilesTest, ReadsAtPathsRelativeToTheBaseAndAbsolute) {
  TempDir dir;
  WriteFile(dir.path() + "/client.pem", kPem + "cert");
  WriteFile(dir.path() + "/client.key", kPem + "key");
  WriteFile(dir.path() + "/ca.pem", kPem + "ca");
  json::value d = Dest({{"client_cert", "@client.pem"},
                        {"client_key", "@" + dir.path() + "/client.key"},
                        {"ca_file", "ca.pem"}});  // ca_file: a plain path too (the contract's)
  ASSERT_TRUE(InlineTlsFiles(d, dir.path()).ok());
  const json::object& tls = d.at("tls").as_object();
  EXPECT_EQ(tls.at("client_cert"), json::value(kPem + "cert"));
  EXPECT_EQ(tls.at("client_key"), json::value(kPem + "key"));
  EXPECT_EQ(tls.at("ca_file"), json::value(kPem + "ca"));
}

TEST(InlineTlsFilesTest, LeavesInlinePemNullAndOtherFieldsAlone) {
  json::value d = Dest({{"client_cert", kPem}, {"client_key", nullptr}, {"ca_file", kPem}});
  const json::value before = d;
  ASSERT_TRUE(InlineTlsFiles(d, "").ok());
  EXPECT_EQ(d, before);
  json::value no_tls = json::object{{"name", "d"}};
  ASSERT_TRUE(InlineTlsFiles(no_tls, "").ok());
  json::value not_object = json::object{{"tls", "@x"}};  // ParseDestination says what is wrong
  ASSERT_TRUE(InlineTlsFiles(not_object, "").ok());
}

TEST(InlineTlsFilesTest, ErrorsNameTheFieldAndThePath) {
  TempDir dir;
  WriteFile(dir.path() + "/big.pem", std::string((1 << 20) + 1, 'x'));
  WriteFile(dir.path() + "/locked.pem", kPem);
  WriteFile(dir.path() + "/secret.txt", "root:$6$not-a-pem:19000:0:99999:7:::\n");
  ::chmod((dir.path() + "/locked.pem").c_str(), 0);
  struct Case {
    std::string field, value, base, says;
  };
  const Case cases[] = {
      {"client_cert", "@client.pem", "", "relative path; through the API give an absolute path"},
      {"client_key", "@" + dir.path() + "/missing.key", "", dir.path() + "/missing.key: No such"},
      {"ca_file", dir.path(), "", "not a regular file"},
      {"client_cert", "@big.pem", dir.path(), "larger than 1 MiB"},
      {"client_key", "@", dir.path(), "names no file"},
      {"ca_file", "secret.txt", dir.path(), dir.path() + "/secret.txt holds no PEM"},
  };
  for (const Case& c : cases) {
    json::value d = Dest({{c.field, c.value}});
    Status st = InlineTlsFiles(d, c.base);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << c.value;
    EXPECT_EQ(st.field(), "tls." + c.field) << st.ToString();
    EXPECT_NE(st.message().find(c.says), std::string::npos) << st.ToString();
    EXPECT_EQ(st.message().find("not-a-pem"), std::string::npos) << st.ToString();
  }
  if (::geteuid() != 0) {  // root reads it anyway
    json::value d = Dest({{"client_key", "@locked.pem"}});
    Status st = InlineTlsFiles(d, dir.path());
    EXPECT_EQ(st.field(), "tls.client_key");
    EXPECT_NE(st.message().find("Permission denied"), std::string::npos) << st.ToString();
  }
}

}  // namespace
}  // namespace hookrelay::catalog
