#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>

#include "common/clock.h"
#include "delivery/kinds/registry.h"
#include "model/destination.h"

namespace hookrelay::delivery {
namespace {

TEST(KindRegistryTest, ADestinationIsHttpByDefault) {
  model::Destination d;
  d.name = "orders";
  d.url = "https://example.com/hook";
  EXPECT_EQ(KindOf(d), "http");
  const DestinationKind* kind = FindDestinationKind(KindOf(d));
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->name, "http");
  EXPECT_NE(kind->make, nullptr);
}

TEST(KindRegistryTest, KindOfIsTheDestinationsKind) {
  model::Destination d;
  d.kind = "redis";
  d.url = "redis://127.0.0.1:6379/0";
  EXPECT_EQ(KindOf(d), "redis");
  // The view is the table's, not the destination's string.
  EXPECT_EQ(KindOf(d).data(), FindDestinationKind("redis")->name.data());
}

TEST(KindRegistryTest, EveryKindTheModelAcceptsHasASender) {
  // The model's list (what ParseDestination accepts) and the registry's are the same, in order.
  ASSERT_EQ(model::DestinationKindNames().size(), DestinationKinds().size());
  for (size_t i = 0; i < DestinationKinds().size(); ++i) {
    EXPECT_EQ(model::DestinationKindNames()[i], DestinationKinds()[i].name);
  }
}

TEST(KindRegistryTest, KindsAreUniqueAndFindable) {
  ASSERT_FALSE(DestinationKinds().empty());
  for (const DestinationKind& k : DestinationKinds()) {
    EXPECT_EQ(FindDestinationKind(k.name), &k) << k.name;
  }
  EXPECT_EQ(FindDestinationKind("carrier-pigeon"), nullptr);
}

TEST(KindRegistryTest, UnknownKindFailsTheAttemptNamingIt) {
  KindSenders senders(SenderSettings{}, SystemClock::Instance());
  SendRequest request;
  request.tag = 42;
  request.kind = "carrier-pigeon";
  request.url = "http://127.0.0.1:1/";
  request.body = "{}";
  std::promise<SendResult> promise;
  senders.Send(std::move(request), [&promise](SendResult r) { promise.set_value(std::move(r)); });
  SendResult r = promise.get_future().get();
  EXPECT_EQ(r.tag, 42u);
  EXPECT_EQ(r.outcome.status_code, 0);
  EXPECT_EQ(r.outcome.error, policy::TransportError::kOther);
  EXPECT_NE(r.error_detail.find("carrier-pigeon"), std::string::npos) << r.error_detail;
  EXPECT_EQ(r.request.body, "{}");  // handed back
  EXPECT_EQ(senders.InFlight(), 0);
}

TEST(KindRegistryTest, HttpKindCarriesTheRequest) {
  // A private address without allow_private: the HTTP kind's own SSRF guard answers, which
  // shows the request reached the HTTP sender (and nothing is sent anywhere).
  KindSenders senders(SenderSettings{}, SystemClock::Instance());
  SendRequest request;
  request.tag = 7;
  model::Destination d;
  request.kind = KindOf(d);
  request.url = "http://127.0.0.1:1/";
  std::promise<SendResult> promise;
  senders.Send(std::move(request), [&promise](SendResult r) { promise.set_value(std::move(r)); });
  SendResult r = promise.get_future().get();
  EXPECT_EQ(r.tag, 7u);
  EXPECT_EQ(r.outcome.error, policy::TransportError::kPrivateAddress) << r.error_detail;
}

}  // namespace
}  // namespace hookrelay::delivery
