// The body memory accounting (shared and per-client) and the per-client connection caps.

#include "http/body_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/ip/address.hpp>

#include "common/units.h"
#include "http/admission.h"

namespace hookrelay::http {
namespace {

using Refusal = BodyBudget::Refusal;

ClientKey Key(const char* address) { return ClientKeyOf(boost::asio::ip::make_address(address)); }

TEST(ClientKeyTest, IPv6CountsByItsSlash64AndMappedIPv4AsIPv4) {
  EXPECT_EQ(Key("2001:db8:1:2::1"), Key("2001:db8:1:2:ffff::9"));
  EXPECT_NE(Key("2001:db8:1:2::1"), Key("2001:db8:1:3::1"));
  EXPECT_EQ(Key("::ffff:192.0.2.1"), Key("192.0.2.1"));
  EXPECT_NE(Key("192.0.2.1"), Key("192.0.2.2"));
  // An IPv6 /64 whose first bytes spell an IPv4 address is not that IPv4 client.
  EXPECT_NE(Key("c000:0201::"), Key("192.0.2.1"));
}

TEST(BodyBudgetTest, TakesAndGivesBackAgainstTheTotal) {
  std::atomic<uint64_t> total{0};
  BodyBudget budget(total, 100, 0);
  EXPECT_EQ(budget.Take(Key("192.0.2.1"), 60), Refusal::kNone);
  EXPECT_EQ(budget.Take(Key("192.0.2.2"), 41), Refusal::kServer);
  EXPECT_EQ(total.load(), 60u) << "a refused take takes nothing";
  EXPECT_EQ(budget.Take(Key("192.0.2.2"), 40), Refusal::kNone);
  EXPECT_EQ(total.load(), 100u);
  EXPECT_EQ(budget.Take(Key("192.0.2.3"), 101), Refusal::kServer);
  budget.Give(Key("192.0.2.1"), 60);
  budget.Give(Key("192.0.2.2"), 40);
  EXPECT_EQ(total.load(), 0u);
  EXPECT_EQ(budget.clients(), 0u) << "without a per-client cap no client is tracked";
}

TEST(BodyBudgetTest, PerClientShareComesFirst) {
  std::atomic<uint64_t> total{0};
  BodyBudget budget(total, 100, 50);
  const ClientKey a = Key("192.0.2.1");
  const ClientKey b = Key("2001:db8::1");
  EXPECT_EQ(budget.Take(a, 50), Refusal::kNone);
  EXPECT_EQ(budget.Take(a, 1), Refusal::kClient);
  EXPECT_EQ(budget.HeldBy(a), 50u);
  EXPECT_EQ(budget.Take(b, 40), Refusal::kNone);
  EXPECT_EQ(budget.Take(Key("2001:db8::2"), 11), Refusal::kClient) << "the same /64";
  EXPECT_EQ(budget.Take(Key("192.0.2.9"), 11), Refusal::kServer);
  EXPECT_EQ(budget.clients(), 2u) << "refused clients holding nothing are not kept";
  EXPECT_EQ(budget.Take(Key("192.0.2.9"), 51), Refusal::kClient);
  budget.Give(a, 50);
  EXPECT_EQ(budget.HeldBy(a), 0u);
  EXPECT_EQ(budget.clients(), 1u);
  budget.Give(b, 40);
  EXPECT_EQ(total.load(), 0u);
  EXPECT_EQ(budget.clients(), 0u);
}

TEST(BodyReservationTest, GrowsByDoublingUpToItsCap) {
  std::atomic<uint64_t> total{0};
  BodyBudget budget(total, 1 << 20, 0);
  BodyReservation r(budget, Key("192.0.2.1"));
  EXPECT_EQ(r.Cover(10, 100000), Refusal::kNone);
  EXPECT_EQ(r.held(), 16384u) << "the first step is 16 KiB";
  EXPECT_EQ(r.Cover(16384, 100000), Refusal::kNone);
  EXPECT_EQ(r.held(), 16384u) << "already covered";
  EXPECT_EQ(r.Cover(20000, 100000), Refusal::kNone);
  EXPECT_EQ(r.held(), 32768u);
  EXPECT_EQ(r.Cover(90000, 100000), Refusal::kNone);
  EXPECT_EQ(r.held(), 90000u) << "a step smaller than what arrived takes what arrived";
  EXPECT_EQ(r.Cover(95000, 100000), Refusal::kNone);
  EXPECT_EQ(r.held(), 100000u) << "never past the cap";
  EXPECT_EQ(total.load(), 100000u);
  r.Release();
  EXPECT_EQ(r.held(), 0u);
  EXPECT_EQ(total.load(), 0u);

  EXPECT_EQ(r.Cover(10, 100), Refusal::kNone);
  EXPECT_EQ(r.held(), 100u) << "a small Content-Length reserves just that";
}

TEST(BodyReservationTest, FallsBackToWhatArrivedWhenTheStepDoesNotFit) {
  std::atomic<uint64_t> total{0};
  BodyBudget budget(total, 20000, 0);
  BodyReservation r(budget, Key("192.0.2.1"));
  ASSERT_EQ(r.Cover(10, 100000), Refusal::kNone);
  EXPECT_EQ(r.Cover(17000, 100000), Refusal::kNone);
  EXPECT_EQ(r.held(), 17000u);
  EXPECT_EQ(r.Cover(20001, 100000), Refusal::kServer);
  EXPECT_EQ(r.held(), 17000u) << "a refusal takes nothing more";
  EXPECT_EQ(total.load(), 17000u);
}

TEST(BodyReservationTest, DestructionGivesTheBytesBack) {
  std::atomic<uint64_t> total{0};
  BodyBudget budget(total, 1000, 500);
  {
    BodyReservation r(budget, Key("192.0.2.1"));
    ASSERT_EQ(r.Take(300), Refusal::kNone);
    EXPECT_EQ(budget.HeldBy(Key("192.0.2.1")), 300u);
  }
  EXPECT_EQ(total.load(), 0u);
  EXPECT_EQ(budget.clients(), 0u);
}

TEST(BodyLimitTest, MemoryLimitsLowerTheHandlersAndAreNamed) {
  BodyLimit handler = EffectiveBodyLimit(1000, 5000, 2000);
  EXPECT_EQ(handler.bytes, 1000u);
  EXPECT_EQ(handler.kind, BodyLimit::Kind::kHandler);
  EXPECT_EQ(BodyLimitText(handler), "the limit of " + FormatByteSize(1000));

  BodyLimit memory = EffectiveBodyLimit(10000, 5000, 0);
  EXPECT_EQ(memory.bytes, 5000u);
  EXPECT_EQ(memory.kind, BodyLimit::Kind::kMemory);
  EXPECT_NE(BodyLimitText(memory).find("max_body_memory ("), std::string::npos);

  BodyLimit client = EffectiveBodyLimit(10000, 5000, 2000);
  EXPECT_EQ(client.bytes, 2000u);
  EXPECT_EQ(client.kind, BodyLimit::Kind::kClientMemory);
  EXPECT_NE(BodyLimitText(client).find("max_body_memory_per_client"), std::string::npos);
}

TEST(ClientConnectionsTest, CapsEachClient) {
  ClientConnections connections(2);
  const ClientKey a = Key("192.0.2.1");
  EXPECT_TRUE(connections.Add(a));
  EXPECT_TRUE(connections.Add(Key("::ffff:192.0.2.1")));
  EXPECT_FALSE(connections.Add(a));
  EXPECT_EQ(connections.Count(a), 2);
  EXPECT_TRUE(connections.Add(Key("192.0.2.2")));
  connections.Remove(a);
  EXPECT_TRUE(connections.Add(a));
  connections.Remove(a);
  connections.Remove(a);
  connections.Remove(Key("192.0.2.2"));
  connections.Remove(Key("192.0.2.77"));  // unknown: ignored
  EXPECT_EQ(connections.Count(a), 0);
  EXPECT_EQ(connections.clients(), 0u);
}

TEST(ClientConnectionsTest, ZeroMeansNoCap) {
  ClientConnections connections(0);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(connections.Add(Key("192.0.2.1")));
  EXPECT_EQ(connections.Count(Key("192.0.2.1")), 1000);
}

}  // namespace
}  // namespace hookrelay::http
