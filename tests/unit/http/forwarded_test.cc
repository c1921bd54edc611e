// Which address a request comes from behind trusted reverse proxies (issue 29: trusted_proxies).

#include "http/forwarded.h"

#include <gtest/gtest.h>

namespace hookrelay::http {
namespace {

namespace ip = boost::asio::ip;

TrustedProxies Trusted(const std::vector<std::string>& entries) {
  auto t = TrustedProxies::Parse(entries);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : TrustedProxies{};
}

std::string Client(const TrustedProxies& t, const std::string& peer,
                   std::optional<std::string_view> forwarded, std::optional<std::string_view> xff) {
  return ClientAddress(t, ip::make_address(peer), forwarded, xff).to_string();
}

TEST(TrustedProxiesTest, NetworksAndAddressesOfBothFamilies) {
  TrustedProxies t = Trusted({"10.0.0.0/8", "192.168.1.7", "fd00::/8", "::1"});
  EXPECT_TRUE(t.Contains(ip::make_address("10.200.3.4")));
  EXPECT_TRUE(t.Contains(ip::make_address("::ffff:10.0.0.1"))) << "IPv4-mapped, as dual stack";
  EXPECT_TRUE(t.Contains(ip::make_address("192.168.1.7")));
  EXPECT_FALSE(t.Contains(ip::make_address("192.168.1.8")));
  EXPECT_FALSE(t.Contains(ip::make_address("11.0.0.1")));
  EXPECT_TRUE(t.Contains(ip::make_address("fd12:3456::1")));
  EXPECT_TRUE(t.Contains(ip::make_address("::1")));
  EXPECT_FALSE(t.Contains(ip::make_address("2001:db8::1")));
  EXPECT_TRUE(Trusted({"0.0.0.0/0"}).Contains(ip::make_address("203.0.113.9")));
  EXPECT_FALSE(TrustedProxies().Contains(ip::make_address("127.0.0.1")));
}

TEST(TrustedProxiesTest, MistakesNameTheEntry) {
  auto bad = TrustedProxies::Parse({"10.0.0.0/8", "10.0.0.0/33"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "trusted_proxies[1]");
  EXPECT_NE(bad.status().message().find("0 to 32"), std::string::npos) << bad.status().message();
  bad = TrustedProxies::Parse({"proxy.internal"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "trusted_proxies[0]");
  EXPECT_NE(bad.status().message().find("is not an IP address"), std::string::npos);
  bad = TrustedProxies::Parse({"10.1.2.3/8"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("the network is 10.0.0.0/8"), std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(TrustedProxies::Parse({"10.0.0.0/"}).ok());
  EXPECT_FALSE(TrustedProxies::Parse({"10.0.0.0/8x"}).ok());
  EXPECT_FALSE(TrustedProxies::Parse({""}).ok());
}

TEST(ClientAddressTest, AnUntrustedPeerIsTheClientWhateverItSays) {
  TrustedProxies t = Trusted({"10.0.0.0/8"});
  EXPECT_EQ(Client(t, "203.0.113.5", std::nullopt, "198.51.100.1"), "203.0.113.5");
  EXPECT_EQ(Client(t, "203.0.113.5", "for=198.51.100.1", std::nullopt), "203.0.113.5");
  EXPECT_EQ(Client(TrustedProxies(), "10.0.0.1", std::nullopt, "198.51.100.1"), "10.0.0.1");
}

TEST(ClientAddressTest, XForwardedForIsReadFromTheRightPastTrustedProxies) {
  TrustedProxies t = Trusted({"10.0.0.0/8"});
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, "198.51.100.1"), "198.51.100.1");
  // The client wrote the left part itself: only the right-most untrusted address counts.
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, "1.2.3.4, 198.51.100.1"), "198.51.100.1");
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, "1.2.3.4, 198.51.100.1, 10.0.0.9"), "198.51.100.1");
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, "198.51.100.1:4711"), "198.51.100.1");
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, " 2001:db8::7 "), "2001:db8::7");
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, "[2001:db8::7]:4711"), "2001:db8::7");
  // All trusted: the left-most. Nothing said: the proxy itself.
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, "10.0.0.3, 10.0.0.2"), "10.0.0.3");
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, std::nullopt), "10.0.0.1");
}

TEST(ClientAddressTest, ForwardedWinsOverXForwardedFor) {
  TrustedProxies t = Trusted({"10.0.0.0/8"});
  EXPECT_EQ(Client(t, "10.0.0.1", "for=198.51.100.1;proto=https;by=10.0.0.1", "1.1.1.1"),
            "198.51.100.1");
  EXPECT_EQ(Client(t, "10.0.0.1", R"(For="[2001:db8:cafe::17]:4711", for=10.0.0.2)", std::nullopt),
            "2001:db8:cafe::17");
  EXPECT_EQ(Client(t, "10.0.0.1", "for=1.2.3.4, for=198.51.100.1", std::nullopt), "198.51.100.1");
}

TEST(ClientAddressTest, WhatCannotBeReadLeavesThePeer) {
  TrustedProxies t = Trusted({"10.0.0.0/8"});
  EXPECT_EQ(Client(t, "10.0.0.1", "for=unknown", std::nullopt), "10.0.0.1");
  EXPECT_EQ(Client(t, "10.0.0.1", "for=_hidden", std::nullopt), "10.0.0.1");
  EXPECT_EQ(Client(t, "10.0.0.1", "proto=https", std::nullopt), "10.0.0.1");
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, "evil.example"), "10.0.0.1");
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, "198.51.100.1, garbage"), "10.0.0.1");
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, ""), "10.0.0.1");
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, "[2001:db8::1"), "10.0.0.1");
  // Garbage left of the right-most untrusted address is the client's and does not matter.
  EXPECT_EQ(Client(t, "10.0.0.1", std::nullopt, "garbage, 198.51.100.1"), "198.51.100.1");
}

}  // namespace
}  // namespace hookrelay::http
