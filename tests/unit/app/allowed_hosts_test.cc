#include "app/allowed_hosts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hookrelay::app {
namespace {

AllowedHosts Hosts(const std::vector<std::string>& entries) {
  auto r = AllowedHosts::Parse(entries);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : AllowedHosts();
}

TEST(AllowedHostsTest, NoEntriesAllowEverything) {
  AllowedHosts none;
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(none.Allows("evil.example"));
  EXPECT_TRUE(none.Allows(std::nullopt));
}

TEST(AllowedHostsTest, AnEntryWithoutAPortMatchesAnyPortAndCaseAndTrailingDotAreIgnored) {
  AllowedHosts h = Hosts({"Relay.Example.com"});
  EXPECT_TRUE(h.Allows("relay.example.com"));
  EXPECT_TRUE(h.Allows("RELAY.example.COM:8080"));
  EXPECT_TRUE(h.Allows("relay.example.com.:443"));
  EXPECT_FALSE(h.Allows("relay.example.com.evil.example"));
  EXPECT_FALSE(h.Allows("evil.example"));
  EXPECT_FALSE(h.Allows("example.com"));
  EXPECT_FALSE(h.Allows(std::nullopt));
  EXPECT_FALSE(h.Allows(""));
}

TEST(AllowedHostsTest, AnEntryWithAPortMatchesOnlyThatPort) {
  AllowedHosts h = Hosts({"127.0.0.1:8080", "[::1]:8080", "[2001:DB8::1]"});
  EXPECT_TRUE(h.Allows("127.0.0.1:8080"));
  EXPECT_FALSE(h.Allows("127.0.0.1"));
  EXPECT_FALSE(h.Allows("127.0.0.1:8081"));
  EXPECT_TRUE(h.Allows("[::1]:8080"));
  EXPECT_FALSE(h.Allows("[::1]"));
  EXPECT_TRUE(h.Allows("[2001:db8::1]"));
  EXPECT_TRUE(h.Allows("[2001:db8::1]:9000"));
  EXPECT_FALSE(h.Allows("127.0.0.1:8080x"));
  EXPECT_FALSE(h.Allows("127.0.0.1:99999"));
}

TEST(AllowedHostsTest, BadEntriesAreRefusedNamingTheEntry) {
  struct Case {
    std::vector<std::string> entries;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{""}, "allowed_hosts[0]: must not be empty"},
           {{"ok.example", "https://relay.example.com"},
            "allowed_hosts[1]: \"https://relay.example.com\" is a URL: write the host (and port) "
            "only"},
           {{"relay.example.com/in"}, "allowed_hosts[0]: \"relay.example.com/in\" holds a path"},
           {{"relay.example.com:0"}, "the port must be a number from 1 to 65535"},
           {{"relay.example.com:99999"}, "the port must be a number from 1 to 65535"},
           {{"relay.example.com:"}, "the port must be a number from 1 to 65535"},
           {{"*.example.com"}, "a host name cannot hold '*'"},
           {{"relay example"}, "a host name cannot hold ' '"},
           {{"::1"}, "an IPv6 address must be in brackets"},
           {{"[::1"}, "closing ']'"},
           {{"[::1]8080"}, "expected ':' and a port after ']'"},
           {{":8080"}, "the host is empty"},
       }) {
    auto r = AllowedHosts::Parse(c.entries);
    ASSERT_FALSE(r.ok()) << c.entries.back();
    EXPECT_NE(r.status().ToString().find(c.message), std::string::npos)
        << r.status().ToString() << " lacks " << c.message;
  }
}

}  // namespace
}  // namespace hookrelay::app
