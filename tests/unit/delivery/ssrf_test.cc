#include "delivery/ssrf.h"

#include <gtest/gtest.h>

#include <string>

namespace hookrelay::delivery {
namespace {

struct Case {
  const char* address;
  bool is_private;
};

TEST(IsPrivateAddressTest, Table) {
  const Case cases[] = {
      // IPv4 loopback, RFC 1918, link-local, CGNAT, unspecified, broadcast, multicast.
      {"127.0.0.1", true},
      {"127.255.255.254", true},
      {"10.0.0.1", true},
      {"10.255.255.255", true},
      {"172.16.0.1", true},
      {"172.31.255.255", true},
      {"172.15.255.255", false},
      {"172.32.0.1", false},
      {"192.168.1.1", true},
      {"192.169.0.1", false},
      {"169.254.169.254", true},
      {"100.64.0.1", true},
      {"100.127.255.255", true},
      {"100.63.255.255", false},
      {"100.128.0.1", false},
      {"0.0.0.0", true},
      {"0.1.2.3", true},
      {"255.255.255.255", true},
      {"240.0.0.1", true},
      {"224.0.0.1", true},
      {"239.255.255.255", true},
      {"198.18.0.1", true},  // benchmarking, 198.18.0.0/15
      {"198.19.255.255", true},
      {"198.17.255.255", false},
      {"198.20.0.1", false},
      {"192.0.0.8", true},  // IETF protocol assignments, 192.0.0.0/24
      {"192.0.1.1", false},
      {"8.8.8.8", false},
      {"1.1.1.1", false},
      {"93.184.216.34", false},
      // IPv6.
      {"::1", true},
      {"::", true},
      {"fe80::1", true},
      {"febf::1", true},
      {"fec0::1", true},
      {"fc00::1", true},
      {"fd12::1", true},
      {"ff02::1", true},
      {"::ffff:127.0.0.1", true},
      {"::ffff:10.1.2.3", true},
      {"::ffff:8.8.8.8", false},
      {"::127.0.0.1", true},
      {"64:ff9b::7f00:1", true},
      {"64:ff9b::808:808", false},
      {"::ffff:0:7f00:1", true},  // IPv4-translated ::ffff:0:0:0/96
      {"::ffff:0:a01:203", true},
      {"::ffff:0:808:808", false},
      {"64:ff9b:1::808:808", true},  // local-use NAT64
      {"2001:4860::8888", false},
      {"2001:4860:4860::8888", false},
      {"2606:4700::1111", false},
      // Anything that is not a numeric address is refused.
      {"", true},
      {"garbage", true},
      {"localhost", true},
      {"example.com", true},
      {"127.1", true},
      {"1.2.3.4.5", true},
      {"fe80::1%eth0", true},
      {"[::1]", true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(IsPrivateAddress(c.address), c.is_private) << c.address;
  }
  EXPECT_TRUE(IsPrivateAddress(std::string("8.8.8.8\0", 8)));
}

// What can be refused from the URL alone: literal private addresses and localhost; names are left
// to the connect-time check.
TEST(SsrfTest, RefusedLiteralHosts) {
  for (const char* host :
       {"127.0.0.1", "10.1.2.3", "::1", "169.254.169.254", "0.0.0.0", "localhost", "LocalHost",
        "api.localhost", "A.LOCALHOST", "localhost.", "127.0.0.1.", "api.localhost.",
        "::ffff:0:7f00:1", "198.18.0.1", "192.0.0.170"}) {
    EXPECT_TRUE(IsRefusedLiteralHost(host)) << host;
  }
  for (const char* host :
       {"8.8.8.8", "2001:4860:4860::8888", "example.com", "internal.corp", "localhost.example.com",
        ".localhost", "127.1", "8.8.8.8.", "example.com."}) {
    EXPECT_FALSE(IsRefusedLiteralHost(host)) << host;
  }
}

// The check at creation refuses the forms the attack found, with the same message.
TEST(SsrfTest, CheckDestinationAddressRefusesTrailingDotsAndTranslatedForms) {
  for (const char* url :
       {"http://localhost.:18601/", "http://127.0.0.1.:18601/", "http://[::ffff:0:7f00:1]:18601/",
        "http://198.18.0.1/", "http://192.0.0.1/"}) {
    model::Destination d;
    d.url = url;
    Status s = CheckDestinationAddress(d, false);
    EXPECT_FALSE(s.ok()) << url;
    EXPECT_NE(s.message().find(kPrivateAddressRefusal), std::string::npos) << s.message();
    d.allow_private = true;
    EXPECT_TRUE(CheckDestinationAddress(d, false).ok()) << url;
  }
  model::Destination d;
  d.url = "http://example.com./x";
  EXPECT_TRUE(CheckDestinationAddress(d, false).ok());
}

// Issue 30: a Redis destination's host is checked as an HTTP one's (its user-info aside).
TEST(SsrfTest, CheckDestinationAddressChecksARedisUrlsHost) {
  for (const char* url : {"redis://127.0.0.1:6379/0", "redis://:pw@localhost/0",
                          "redis://user:pw@[::1]:6380", "redis://10.0.0.5"}) {
    model::Destination d;
    d.kind = "redis";
    d.url = url;
    Status s = CheckDestinationAddress(d, false);
    EXPECT_FALSE(s.ok()) << url;
    EXPECT_EQ(s.field(), "url");
    EXPECT_EQ(s.message().find("pw"), std::string::npos) << s.message();
    EXPECT_TRUE(CheckDestinationAddress(d, true).ok()) << url;
  }
  model::Destination d;
  d.kind = "redis";
  d.url = "redis://:pw@cache.example.com:6379/0";
  EXPECT_TRUE(CheckDestinationAddress(d, false).ok());
}

}  // namespace
}  // namespace hookrelay::delivery
