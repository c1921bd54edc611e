// Issue 30: the Redis Streams kind's sender (delivery/kinds/redis/redis_sender.h) against real,
// private redis-server instances: what an entry holds, trimming, Redis's refusals as final
// outcomes with its words, a stopped server as a retryable one, and the reconnect after it
// comes back.

#include "delivery/kinds/redis/redis_sender.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "model/destination.h"
#include "policy/outcome.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace hookrelay::delivery::redis {
namespace {

using policy::BrokerAnswer;
using policy::OutcomeClass;
using testing::RedisServer;

std::shared_ptr<model::Destination> RedisDestination(const std::string& url,
                                                     const std::string& stream,
                                                     std::optional<int64_t> maxlen = {}) {
  auto d = std::make_shared<model::Destination>();
  d->name = "orders";
  d->kind = "redis";
  d->url = url;
  d->redis = model::RedisSettings{stream, maxlen};
  d->allow_private = true;  // the test's server listens on 127.0.0.1
  return d;
}

SendRequest Request(std::shared_ptr<const model::Destination> d, std::string body = "{\"n\":1}") {
  SendRequest r;
  r.kind = "redis";
  r.url = d->url;
  r.allow_private = d->allow_private;
  r.destination = std::move(d);
  r.body = std::move(body);
  r.timeout = std::chrono::seconds(5);
  r.source = "shop";
  r.headers = {{"Content-Type", "application/json"},
               {"webhook-id", "evt_1"},
               {"webhook-timestamp", "1700000000"}};
  return r;
}

SendResult SendAndWait(RequestSender& sender, SendRequest request) {
  std::promise<SendResult> promise;
  sender.Send(std::move(request), [&promise](SendResult r) { promise.set_value(std::move(r)); });
  return promise.get_future().get();
}

class RedisSenderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.ok()) << server_.error(); }

  RedisServer server_;
  RedisSender sender_{RedisSender::Options{}, SystemClock::Instance()};
};

TEST_F(RedisSenderTest, AnEntryCarriesTheBodyAndEveryHeader) {
  auto d = RedisDestination(server_.Url(), "webhooks");
  SendRequest req = Request(d, std::string("{\"id\":\"evt_1\",\"bin\":\"\0\xff\"}", 26));
  req.event_type = "orders/create";
  req.headers = {{"X-Shopify-Topic", "orders/create"},
                 {"Content-Type", "application/json; charset=utf-8"},
                 {"X-Team", "billing"},
                 {"webhook-id", "evt_1"},
                 {"webhook-timestamp", "1700000000"},
                 {"webhook-signature", "v1,c2lnbmF0dXJl"}};
  SendResult r = SendAndWait(sender_, req);
  ASSERT_EQ(r.outcome.broker, BrokerAnswer::kAccepted) << r.error_detail << r.snippet;
  EXPECT_EQ(r.outcome.error, policy::TransportError::kNone);
  EXPECT_EQ(policy::Classify(r.outcome).cls, OutcomeClass::kSuccess);
  EXPECT_EQ(r.request.body, req.body);  // handed back
  EXPECT_EQ(sender_.InFlight(), 0);

  std::vector<testing::StreamEntry> entries = server_.Entries("webhooks");
  ASSERT_EQ(entries.size(), 1u);
  const testing::StreamEntry& e = entries[0];
  EXPECT_EQ(e.id, r.snippet);  // the broker's reply is the entry's id
  EXPECT_EQ(r.outcome.broker_reply, e.id);
  const std::vector<std::pair<std::string, std::string>> want{
      {"body", req.body},
      {"webhook-id", "evt_1"},
      {"webhook-timestamp", "1700000000"},
      {"webhook-signature", "v1,c2lnbmF0dXJl"},
      {"source", "shop"},
      {"type", "orders/create"},
      {"content-type", "application/json; charset=utf-8"},
      {"header:x-shopify-topic", "orders/create"},
      {"header:x-team", "billing"},
  };
  EXPECT_EQ(e.fields, want);
}

TEST_F(RedisSenderTest, WithoutASignatureOrTypeTheirFieldsAreLeftOut) {
  SendResult r = SendAndWait(sender_, Request(RedisDestination(server_.Url(), "s")));
  ASSERT_EQ(r.outcome.broker, BrokerAnswer::kAccepted) << r.error_detail << r.snippet;
  std::vector<testing::StreamEntry> entries = server_.Entries("s");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_FALSE(entries[0].Has("webhook-signature"));
  EXPECT_FALSE(entries[0].Has("type"));
  EXPECT_EQ(entries[0].Field("source"), "shop");
}

TEST_F(RedisSenderTest, MaxlenTrimsTheStreamApproximately) {
  // Small nodes, so that approximate trimming (whole nodes only) shows on a few hundred entries.
  ASSERT_FALSE(server_.Command({"CONFIG", "SET", "stream-node-max-entries", "10"}).error());
  auto d = RedisDestination(server_.Url(), "trimmed", 20);
  constexpr int kEntries = 300;
  std::vector<std::future<SendResult>> results;
  std::vector<std::shared_ptr<std::promise<SendResult>>> promises;
  for (int i = 0; i < kEntries; ++i) {
    auto p = std::make_shared<std::promise<SendResult>>();
    results.push_back(p->get_future());
    sender_.Send(Request(d), [p](SendResult r) { p->set_value(std::move(r)); });
  }
  for (auto& f : results) {
    SendResult r = f.get();
    ASSERT_EQ(r.outcome.broker, BrokerAnswer::kAccepted) << r.error_detail << r.snippet;
  }
  const long long len = server_.Command({"XLEN", "trimmed"}).integer;
  EXPECT_GE(len, 20);
  EXPECT_LE(len, 40) << "MAXLEN ~ 20 with nodes of 10 keeps at most a node more";
  // Without maxlen, nothing is trimmed.
  auto untrimmed = RedisDestination(server_.Url(), "untrimmed");
  for (int i = 0; i < 50; ++i) SendAndWait(sender_, Request(untrimmed));
  EXPECT_EQ(server_.Command({"XLEN", "untrimmed"}).integer, 50);
}

TEST_F(RedisSenderTest, AKeyOfAnotherTypeIsFinalWithRedissWords) {
  ASSERT_FALSE(server_.Command({"SET", "not-a-stream", "x"}).error());
  SendResult r = SendAndWait(sender_, Request(RedisDestination(server_.Url(), "not-a-stream")));
  EXPECT_EQ(r.outcome.error, policy::TransportError::kNone);
  EXPECT_EQ(r.outcome.broker, BrokerAnswer::kRefused);
  EXPECT_EQ(r.outcome.broker_reply,
            "WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(r.snippet, r.outcome.broker_reply);
  policy::Classification c = policy::Classify(r.outcome);
  EXPECT_EQ(c.cls, OutcomeClass::kFinal);
  EXPECT_NE(c.reason.find("WRONGTYPE Operation against a key"), std::string::npos) << c.reason;
  // The connection is still good: the next request on it is delivered.
  SendResult ok = SendAndWait(sender_, Request(RedisDestination(server_.Url(), "a-stream")));
  EXPECT_EQ(ok.outcome.broker, BrokerAnswer::kAccepted) << ok.error_detail << ok.snippet;
}

TEST(RedisSenderAuthTest, AWrongOrMissingPasswordIsFinalWithRedissWords) {
  RedisServer server(RedisServer::Options{.password = "right-password-123"});
  ASSERT_TRUE(server.ok()) << server.error();
  RedisSender sender(RedisSender::Options{}, SystemClock::Instance());
  const std::string where = "127.0.0.1:" + std::to_string(server.port()) + "/0";

  SendResult wrong =
      SendAndWait(sender, Request(RedisDestination("redis://:wrong-password@" + where, "s")));
  EXPECT_EQ(wrong.outcome.broker, BrokerAnswer::kRefused) << wrong.error_detail;
  EXPECT_EQ(wrong.outcome.broker_reply.rfind("WRONGPASS", 0), 0u) << wrong.outcome.broker_reply;
  EXPECT_EQ(policy::Classify(wrong.outcome).cls, OutcomeClass::kFinal);
  EXPECT_EQ(wrong.outcome.broker_reply.find("wrong-password"), std::string::npos);

  SendResult none = SendAndWait(sender, Request(RedisDestination("redis://" + where, "s")));
  EXPECT_EQ(none.outcome.broker, BrokerAnswer::kRefused) << none.error_detail;
  EXPECT_EQ(none.outcome.broker_reply.rfind("NOAUTH", 0), 0u) << none.outcome.broker_reply;

  SendResult right =
      SendAndWait(sender, Request(RedisDestination("redis://:right-password-123@" + where, "s")));
  EXPECT_EQ(right.outcome.broker, BrokerAnswer::kAccepted) << right.error_detail << right.snippet;
  EXPECT_EQ(server.Entries("s").size(), 1u);
}

TEST_F(RedisSenderTest, AStoppedServerIsRetryableAndTheSenderReconnectsWhenItIsBack) {
  auto d = RedisDestination(server_.Url(), "s");
  ASSERT_EQ(SendAndWait(sender_, Request(d)).outcome.broker, BrokerAnswer::kAccepted);
  ASSERT_EQ(server_.Stop(SIGKILL), "");

  // The pooled connection is dead (reset or closed), then nothing listens (refused); either way
  // retryable, and a transport error, not a broker's answer.
  for (int i = 0; i < 3; ++i) {
    SendResult r = SendAndWait(sender_, Request(d));
    EXPECT_NE(r.outcome.error, policy::TransportError::kNone) << i;
    EXPECT_EQ(r.outcome.broker, BrokerAnswer::kNone) << i;
    EXPECT_EQ(policy::Classify(r.outcome).cls, OutcomeClass::kRetryable)
        << i << ": " << r.error_detail;
    EXPECT_FALSE(r.error_detail.empty());
  }
  SendResult refused = SendAndWait(sender_, Request(d));
  EXPECT_EQ(refused.outcome.error, policy::TransportError::kConnectionRefused)
      << refused.error_detail;

  ASSERT_EQ(server_.Start(), "");
  // Within the reconnect backoff (2 s at most) the sender connects again.
  SendResult last;
  ASSERT_TRUE(test::WaitFor(
      [&] {
        last = SendAndWait(sender_, Request(d));
        return last.outcome.broker == BrokerAnswer::kAccepted;
      },
      std::chrono::seconds(10), std::chrono::milliseconds(50)))
      << last.error_detail;
  // What Redis acknowledged before the crash survived it (appendfsync always), and the new one.
  EXPECT_EQ(server_.Entries("s").size(), 2u);
}

TEST_F(RedisSenderTest, ALoopbackServerIsRefusedWithoutAllowPrivate) {
  auto d = RedisDestination(server_.Url(), "s");
  d->allow_private = false;
  SendResult r = SendAndWait(sender_, Request(d));
  EXPECT_EQ(r.outcome.error, policy::TransportError::kPrivateAddress) << r.error_detail;
  EXPECT_EQ(policy::Classify(r.outcome).cls, OutcomeClass::kFinal);
  EXPECT_TRUE(server_.Entries("s").empty());
  // The node's switch lifts it, as for HTTP.
  RedisSender open(RedisSender::Options{.allow_private_destinations = true},
                   SystemClock::Instance());
  EXPECT_EQ(SendAndWait(open, Request(d)).outcome.broker, BrokerAnswer::kAccepted);
}

TEST_F(RedisSenderTest, TheDatabaseIsThePathsNumber) {
  auto d = RedisDestination(server_.Url(3), "in-db-3");
  ASSERT_EQ(SendAndWait(sender_, Request(d)).outcome.broker, BrokerAnswer::kAccepted);
  EXPECT_TRUE(server_.Entries("in-db-3").empty());  // not in database 0
  EXPECT_EQ(server_.Entries("in-db-3", 3).size(), 1u);
}

TEST_F(RedisSenderTest, AFiveMebibyteBodyIsOneEntry) {
  std::string body(5 * 1024 * 1024, 'x');
  for (size_t i = 0; i < body.size(); i += 4096) body[i] = static_cast<char>('a' + i % 26);
  SendResult r = SendAndWait(sender_, Request(RedisDestination(server_.Url(), "big"), body));
  ASSERT_EQ(r.outcome.broker, BrokerAnswer::kAccepted) << r.error_detail << r.snippet;
  std::vector<testing::StreamEntry> entries = server_.Entries("big");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(entries[0].Field("body") == body);
}

TEST_F(RedisSenderTest, ARequestWithoutARedisDestinationFailsSayingSo) {
  SendRequest req;
  req.kind = "redis";
  req.tag = 9;
  SendResult r = SendAndWait(sender_, std::move(req));
  EXPECT_EQ(r.tag, 9u);
  EXPECT_EQ(r.outcome.error, policy::TransportError::kOther);
  EXPECT_NE(r.error_detail.find("not a Redis destination"), std::string::npos) << r.error_detail;
}

}  // namespace
}  // namespace hookrelay::delivery::redis
