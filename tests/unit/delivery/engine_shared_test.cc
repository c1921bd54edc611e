// Three delivery engines (three nodes), each with its own PostgresStore on one database of a
// private cluster, sending to one real sink on 127.0.0.1 through real Senders (issue 15): the
// breaker and the pause live in the database, so the nodes obey one breaker and one pause.
//
// The engines share one FakeClock: their schedulers sleep through it, and moving it by a second
// (poll_interval) wakes all three for a pass (FakeClock::Advance marks them fired; AwaitWaiters(3)
// then returns once all three sleep again, i.e. each has made its pass). Nothing sleeps to wait.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "alerts/alert.h"
#include "common/clock.h"
#include "common/random.h"
#include "conformance/store_test_util.h"
#include "delivery/engine.h"
#include "delivery/kinds/http/http_sender.h"
#include "model/registry.h"
#include "policy/retry_policy.h"
#include "store/open_store.h"
#include "store/postgres/postgres_store.h"
#include "store/store.h"
#include "support/fake_alert_sink.h"
#include "support/pg_cluster.h"
#include "support/sink.h"
#include "support/wait.h"

namespace hookrelay::delivery {
namespace {

using namespace std::chrono_literals;

using Alerts = hookrelay::testing::FakeAlertSink;

constexpr int kNodes = 3;

// One node: its own store (connections), registry, sender, alerts and engine.
struct Node {
  std::unique_ptr<store::Store> store;
  model::Registry registry;
  std::unique_ptr<HttpSender> sender;
  Alerts alerts;
  std::unique_ptr<DeliveryEngine> engine;
  std::atomic<int> claims_with_work{0};  // claims that found deliveries (sent or not)
};

class EngineSharedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    hookrelay::testing::PgCluster* cluster = hookrelay::testing::SharedPgCluster(&error);
    ASSERT_NE(cluster, nullptr) << error;
    url_ = cluster->CreateDatabase(&error);
    ASSERT_FALSE(url_.empty()) << error;
  }
  void TearDown() override {
    for (auto& n : nodes_) {
      if (n && n->engine) n->engine->Stop(0ms);
    }
  }

  // A destination every node sends to one at a time; a failed attempt is retried an hour later
  // (so each delivery fails once per breaker period), 20 failures open the breaker for 60 s.
  model::Destination Dest(const std::string& name) const {
    model::Destination d;
    d.name = name;
    d.url = sink_.url("/" + name);
    d.allow_private = true;
    d.policy = *policy::PresetPolicy("default");
    d.policy.strategy = policy::Strategy::kLadder;
    d.policy.jitter = policy::Jitter::kNone;
    d.policy.ladder = {1h};
    d.policy.max_attempts = 10;
    d.policy.max_duration = 24h;
    d.breaker.threshold = 20;
    d.breaker.open_periods = {60s};
    d.max_concurrency = 1;
    return d;
  }

  void StartNodes(const model::Destination& d) {
    for (int i = 0; i < kNodes; ++i) {
      auto n = std::make_unique<Node>();
      Result<store::StoreAddress> address = store::ParseStoreAddress(url_);
      ASSERT_TRUE(address.ok()) << address.status().ToString();
      auto opened = store::OpenPostgresStore({.url = url_, .display = address->display}, clock_);
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      n->store = std::move(*opened);
      model::Catalog catalog;
      catalog.destinations.emplace(d.name, d);
      ASSERT_TRUE(n->registry.Replace(std::move(catalog)).ok());
      HttpSender::Options sender_options;
      sender_options.allow_private_destinations = true;
      n->sender = std::make_unique<HttpSender>(sender_options, clock_);
      EngineOptions options;
      options.node_id = "node" + std::to_string(i);
      options.poll_interval = 1s;
      options.on_claim = [node = n.get()](const std::string&, TimePoint, int got) {
        if (got > 0) node->claims_with_work++;
      };
      n->engine = std::make_unique<DeliveryEngine>(*n->store, n->registry, *n->sender, &n->alerts,
                                                   clock_, random_, options);
      nodes_.push_back(std::move(n));
    }
    for (auto& n : nodes_) n->engine->Start();
  }

  std::vector<std::string> Append(const std::string& destination, int count, bool wake = true) {
    std::vector<std::string> ids;
    for (int i = 0; i < count; ++i) {
      auto e = nodes_[static_cast<size_t>(i % kNodes)]->store->AppendEventSync(
          store::test::MakeEvent(clock_, append_random_, "{}", {destination}));
      EXPECT_TRUE(e.ok()) << e.status().ToString();
      if (e.ok()) ids.push_back(e->id);
    }
    if (wake) {
      for (auto& n : nodes_) n->engine->Wake();
    }
    return ids;
  }

  // Moves the clock by a poll interval and returns once every node's scheduler made a pass
  // (`nodes`: how many are running).
  ::testing::AssertionResult EveryNodeLooks(size_t nodes = kNodes) {
    return EveryNodeLooksAt(clock_.Now() + 1s, nodes);
  }
  // The same, moving the clock to `t`.
  ::testing::AssertionResult EveryNodeLooksAt(TimePoint t, size_t nodes = kNodes) {
    if (!clock_.AwaitWaiters(nodes)) return ::testing::AssertionFailure() << "nodes not asleep";
    clock_.Set(t);
    if (!clock_.AwaitWaiters(nodes)) return ::testing::AssertionFailure() << "no pass";
    return ::testing::AssertionSuccess();
  }

  // Every node looks (EveryNodeLooks) until `want` deliveries show as paused, at most 10 times.
  // A node whose copy of the breaker or pause was stale claims new work, reads the shared state
  // and gives its claim back, after its scheduler's pass: only the next pass's sweep shows those
  // deliveries as paused. So each look waits for no claim being out first.
  ::testing::AssertionResult LookUntilPaused(int64_t want) {
    int64_t paused = -1;
    for (int look = 0; look < 10 && paused != want; ++look) {
      if (!test::WaitFor([&] { return Count(store::DeliveryStatus::kDelivering) == 0; })) {
        return ::testing::AssertionFailure() << "claims not given back";
      }
      if (auto r = EveryNodeLooks(); !r) return r;
      paused = Count(store::DeliveryStatus::kPaused);
    }
    if (paused == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << paused << " paused, not " << want;
  }

  // Waits until the stored breaker of `destination` is open, every node is quiet and the trip's
  // alert is raised (just after the last result is counted).
  ::testing::AssertionResult WaitForTrip(const std::string& destination) {
    if (!test::WaitFor(
            [&] { return Control(destination).breaker.state == policy::BreakerState::kOpen; })) {
      return ::testing::AssertionFailure() << "the breaker of " << destination << " is not open";
    }
    if (!test::WaitFor(
            [&] { return Quiet() && Alerted(alerts::Alert::Kind::kBreakerOpened) >= 1; })) {
      return ::testing::AssertionFailure() << "not quiet, or no breaker-opened alert";
    }
    return ::testing::AssertionSuccess();
  }

  // For a failure message: the deliveries by status, the stored breaker and each node's copy.
  // With `events`, each of their deliveries not delivered: its attempts and when it is due.
  std::string Describe(const std::string& destination,
                       const std::vector<std::string>& events = {}) {
    std::string out = "deliveries:";
    for (const std::string& id : events) {
      auto ds = nodes_[0]->store->GetDeliveries(id);
      if (!ds.ok()) continue;
      for (const store::Delivery& d : *ds) {
        if (d.status == store::DeliveryStatus::kDelivered) continue;
        out +=
            " [" + std::to_string(d.id) + " " + std::string(store::DeliveryStatusName(d.status)) +
            " attempts " + std::to_string(d.attempts) + " due in " +
            std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d.next_attempt_at -
                                                                                 clock_.Now())
                               .count()) +
            " ms, updated " +
            std::to_string(
                std::chrono::duration_cast<std::chrono::milliseconds>(d.updated_at - clock_.Now())
                    .count()) +
            " ms, reason " + d.reason.value_or("-") + "]";
      }
    }
    for (auto st : {store::DeliveryStatus::kScheduled, store::DeliveryStatus::kDelivering,
                    store::DeliveryStatus::kDelivered, store::DeliveryStatus::kFailed,
                    store::DeliveryStatus::kPaused}) {
      out += " " + std::string(store::DeliveryStatusName(st)) + "=" + std::to_string(Count(st));
    }
    const store::DestinationControl c = Control(destination);
    out += "; stored breaker " + std::string(policy::BreakerStateName(c.breaker.state)) +
           (c.breaker.probe_in_flight ? " (probe out)" : "") + (c.pause ? ", paused" : "");
    for (size_t i = 0; i < nodes_.size(); ++i) {
      DestinationState s = nodes_[i]->engine->Destinations()[destination];
      out += "; node" + std::to_string(i) + " " +
             std::string(policy::BreakerStateName(s.breaker.state)) +
             (s.breaker.probe_in_flight ? " (probe out)" : "") + " allowed " +
             std::to_string(s.allowed_concurrency) + " in flight " + std::to_string(s.in_flight) +
             (s.paused ? " paused" : "") + " attempts " +
             std::to_string(nodes_[i]->engine->Stats().attempts);
    }
    return out;
  }

  // Nothing claimed is left unrecorded on any node, and every request the sink saw is recorded.
  bool Quiet() {
    int64_t attempts = 0;
    for (auto& n : nodes_) {
      EngineStats s = n->engine->Stats();
      if (s.in_flight != 0) return false;
      attempts += s.attempts;
    }
    return attempts == static_cast<int64_t>(sink_.RequestCount());
  }

  int64_t Count(store::DeliveryStatus status) {
    auto n = nodes_[0]->store->CountDeliveries(status);
    return n.ok() ? *n : -1;
  }
  store::DestinationControl Control(const std::string& destination) {
    auto c = nodes_[0]->store->GetDestinationControl(destination);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : store::DestinationControl{};
  }
  int Alerted(alerts::Alert::Kind kind) {
    int total = 0;
    for (auto& n : nodes_) total += n->alerts.count(kind);
    return total;
  }

  std::string url_;
  FakeClock clock_;
  SeededRandom random_{3};
  SeededRandom append_random_{4};
  hookrelay::testing::Sink sink_;
  std::vector<std::unique_ptr<Node>> nodes_;  // engines stopped in TearDown
};

// Failures seen by three nodes add up in one breaker: it opens once (one alert, from the node
// whose failure was the 20th), no node sends while it is open, exactly one node sends the
// half-open probe, and after a successful probe everything is delivered.
TEST_F(EngineSharedTest, FailuresOnThreeNodesTripOneBreaker) {
  // Each failure takes 20 ms, so while one node waits for its answer the others claim and send:
  // with instant answers one node could win every claim on a loaded machine and send all 20.
  sink_.SetDefault(
      hookrelay::testing::SinkResponse::Status(500).WithDelay(std::chrono::milliseconds(20)));
  StartNodes(Dest("b"));
  std::vector<std::string> events = Append("b", 30);

  ASSERT_TRUE(WaitForTrip("b"));
  const size_t sent = sink_.RequestCount();
  const store::DestinationControl opened = Control("b");
  // Every failure was counted once, whichever node saw it; one trip, one alert.
  EXPECT_EQ(opened.breaker.consecutive_failures, static_cast<int>(sent));
  EXPECT_EQ(opened.breaker.trips, 1);
  EXPECT_EQ(Alerted(alerts::Alert::Kind::kBreakerOpened), 1);
  EXPECT_GE(sent, 20u);
  // Past the 20th, only requests already on their way when it opened (at most one per node
  // between its claim's check and the trip, and one whose failure was still being applied).
  EXPECT_LE(sent, 20u + 2 * kNodes) << "requests left after the breaker opened";
  // No node reached the threshold alone: the counts added up in the database. (Which nodes sent
  // is up to their claims: one of them may have sent nothing at all, so at least two did.)
  for (auto& n : nodes_) EXPECT_LT(n->engine->Stats().attempts, 20);
  const TimePoint open_until = *opened.breaker.open_until;

  // While open: new work on any node is shown as paused, and nothing is sent.
  std::vector<std::string> late = Append("b", 5);
  events.insert(events.end(), late.begin(), late.end());
  ASSERT_TRUE(LookUntilPaused(35));
  ASSERT_LT(clock_.Now(), open_until);
  EXPECT_EQ(sink_.RequestCount(), sent) << "a request left while the breaker was open";
  for (auto& n : nodes_) {
    EXPECT_EQ(n->engine->Destinations()["b"].breaker.state, policy::BreakerState::kOpen);
  }

  // Half-open: exactly one probe, from one node; it fails, and the breaker opens again.
  clock_.Set(open_until);
  ASSERT_TRUE(sink_.WaitForRequests(sent + 1, 20s));
  ASSERT_TRUE(test::WaitFor([&] {
    return Control("b").breaker.trips == 2 && Quiet() &&
           Control("b").breaker.state == policy::BreakerState::kOpen &&
           Alerted(alerts::Alert::Kind::kBreakerOpened) >= 2;
  }));
  ASSERT_TRUE(EveryNodeLooks());
  ASSERT_TRUE(EveryNodeLooks());
  ASSERT_TRUE(test::WaitFor([&] { return Quiet(); }));
  EXPECT_EQ(sink_.RequestCount(), sent + 1) << "more than one probe";
  EXPECT_EQ(Alerted(alerts::Alert::Kind::kBreakerOpened), 2);

  // The next probe succeeds: closed (one alert), and the backlog is delivered.
  sink_.SetDefault(hookrelay::testing::SinkResponse::Status(200));
  clock_.Set(*Control("b").breaker.open_until);
  for (auto& n : nodes_) n->engine->Wake();
  ASSERT_TRUE(test::WaitFor([&] {
    return Count(store::DeliveryStatus::kDelivered) == static_cast<int64_t>(events.size());
  })) << Describe("b", events);
  ASSERT_TRUE(
      test::WaitFor([&] { return Alerted(alerts::Alert::Kind::kBreakerClosed) >= 1 && Quiet(); }));
  EXPECT_EQ(Alerted(alerts::Alert::Kind::kBreakerClosed), 1);
  EXPECT_EQ(Control("b").breaker.state, policy::BreakerState::kClosed);
  ASSERT_TRUE(EveryNodeLooks());
  for (auto& n : nodes_) {
    EXPECT_EQ(n->engine->Destinations()["b"].breaker.state, policy::BreakerState::kClosed);
  }
}

// The node that took the half-open probe dies before recording its result: its engine is
// stopped and its sender destroyed while the probe is held at the sink, so neither the attempt nor
// its breaker input reaches the database (as after a kill -9). The shared breaker stays half-open
// with the probe out for the probe's lease (policy::kProbeLease), then one of the other nodes
// probes; it succeeds, and the remaining nodes deliver everything, the lost probe's event too.
TEST_F(EngineSharedTest, AProbeLostWithItsNodeIsSentAgainAfterItsLease) {
  sink_.SetDefault(hookrelay::testing::SinkResponse::Status(500));
  StartNodes(Dest("b"));
  // Each delivery fails once (its retry is an hour away): the 20th failure trips the breaker.
  std::vector<std::string> events = Append("b", 20);
  ASSERT_TRUE(WaitForTrip("b"));
  const size_t sent = sink_.RequestCount();
  ASSERT_EQ(sent, events.size());
  ASSERT_TRUE(LookUntilPaused(static_cast<int64_t>(events.size())));
  const TimePoint open_until = *Control("b").breaker.open_until;
  ASSERT_LT(clock_.Now(), open_until);

  // The probe is held at the sink (never answered); every later request is answered 200.
  sink_.Enqueue("/b", hookrelay::testing::SinkResponse::Hang());
  sink_.SetDefault(hookrelay::testing::SinkResponse::Status(200));
  ASSERT_TRUE(clock_.AwaitWaiters(kNodes));
  clock_.Set(open_until);
  ASSERT_TRUE(sink_.WaitForRequests(sent + 1, 20s));
  // The node that sent it: the one with an attempt claimed and not recorded (a claim of any other
  // node reads the half-open breaker and sends nothing).
  size_t prober = kNodes;
  ASSERT_TRUE(test::WaitFor([&] {
    int out = 0;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i]->engine->Stats().in_flight > 0) {
        prober = i;
        ++out;
      }
    }
    return out == 1;
  })) << Describe("b", events);
  const std::optional<std::string> lost_id = sink_.Requests().back().Header("webhook-id");
  ASSERT_TRUE(lost_id.has_value());
  nodes_[prober]->engine->Stop(0ms);
  // The request out completes now ("shutting down"), into a stopped engine: nothing is recorded.
  nodes_[prober]->sender.reset();
  ASSERT_TRUE(test::WaitFor([&] {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (i != prober && nodes_[i]->engine->Stats().in_flight != 0) return false;
    }
    return Count(store::DeliveryStatus::kDelivering) == 1;  // the probe's, leased to the dead node
  })) << Describe("b", events);
  const store::DestinationControl probing = Control("b");
  EXPECT_EQ(probing.breaker.state, policy::BreakerState::kHalfOpen);
  EXPECT_TRUE(probing.breaker.probe_in_flight);
  EXPECT_EQ(probing.breaker.open_until, open_until) << "when the probe was let through";
  constexpr size_t kAlive = kNodes - 1;

  // Within the lease the live nodes send nothing: their copies of the breaker show the probe
  // out, which holds it (the probe's delivery lease, 60 s, is long expired by then).
  ASSERT_TRUE(EveryNodeLooksAt(open_until + policy::kProbeLease - 1s, kAlive));
  EXPECT_EQ(sink_.RequestCount(), sent + 1) << "a probe within the lease";
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (i == prober) continue;
    EXPECT_EQ(nodes_[i]->engine->Destinations()["b"].breaker, probing.breaker) << "node " << i;
  }
  EXPECT_EQ(Control("b").breaker, probing.breaker);
  // At the lease's end, one of them probes; the probe succeeds and closes the breaker.
  ASSERT_TRUE(EveryNodeLooks(kAlive));
  ASSERT_TRUE(sink_.WaitForRequests(sent + 2, 20s)) << Describe("b", events);
  ASSERT_TRUE(test::WaitFor([&] {
    return Count(store::DeliveryStatus::kDelivered) == static_cast<int64_t>(events.size());
  })) << Describe("b", events);
  ASSERT_TRUE(test::WaitFor([&] {
    if (Alerted(alerts::Alert::Kind::kBreakerClosed) < 1) return false;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (i != prober && nodes_[i]->engine->Stats().in_flight != 0) return false;
    }
    return true;
  }));
  EXPECT_EQ(Alerted(alerts::Alert::Kind::kBreakerClosed), 1);
  EXPECT_EQ(Control("b").breaker.state, policy::BreakerState::kClosed);
  // Every delivery was sent once more after the trip, and only once: the lost probe's too.
  EXPECT_EQ(sink_.RequestCount(), sent + 1 + events.size());
  int lost_sent = 0;
  for (const auto& r : sink_.Requests()) lost_sent += r.Header("webhook-id") == lost_id;
  EXPECT_EQ(lost_sent, 3) << "the lost probe's event: failed, held, delivered";
  int64_t attempts = 0;
  for (auto& n : nodes_) attempts += n->engine->Stats().attempts;
  EXPECT_EQ(attempts, static_cast<int64_t>(sink_.RequestCount()) - 1)
      << "every request but the lost probe is recorded";
}

// A node learns of a trip made elsewhere before its next claim sends anything: each claim that
// finds work reads the shared breaker. The clock does not move here, so no node's scheduler
// refreshes its copy: the nodes claim with their copies still closed, and send nothing.
TEST_F(EngineSharedTest, AClaimAfterAnotherNodesTripSendsNothing) {
  const model::Destination d = Dest("b");
  StartNodes(d);
  Append("b", 1);
  ASSERT_TRUE(test::WaitFor([&] { return Count(store::DeliveryStatus::kDelivered) == 1; }));
  ASSERT_TRUE(test::WaitFor([&] { return Quiet(); }));
  // Another node (a fourth connection) counts 20 failures: open.
  std::vector<store::BreakerInputAt> failures(20, {policy::BreakerInput::kFailure, clock_.Now()});
  auto steps = nodes_[0]->store->UpdateBreaker("b", d.breaker, failures);
  ASSERT_TRUE(steps.ok()) << steps.status().ToString();
  ASSERT_EQ(steps->back().after.state, policy::BreakerState::kOpen);
  std::vector<int> before;
  for (auto& n : nodes_) {
    ASSERT_EQ(n->engine->Destinations()["b"].breaker.state, policy::BreakerState::kClosed);
    before.push_back(n->claims_with_work.load());
  }
  Append("b", kNodes);  // wakes every node: their copies still say closed
  ASSERT_TRUE(test::WaitFor([&] {
    int claimed = 0;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      claimed += nodes_[i]->claims_with_work.load() - before[i];
    }
    return claimed > 0 && Count(store::DeliveryStatus::kDelivering) == 0;
  }));
  for (size_t i = 0; i < nodes_.size(); ++i) {
    // A node whose claim found work read the shared breaker: its copy says open now.
    if (nodes_[i]->claims_with_work.load() > before[i]) {
      EXPECT_EQ(nodes_[i]->engine->Destinations()["b"].breaker.state, policy::BreakerState::kOpen)
          << "node " << i;
    }
  }
  ASSERT_TRUE(test::WaitFor([&] { return Quiet(); }));
  // Other nodes' claims may still be on their way back (Quiet sees requests, not claims); a claim
  // not given back would hold its lease far longer than this wait (the policy's 30 s timeout).
  EXPECT_TRUE(test::WaitFor([&] { return Count(store::DeliveryStatus::kDelivering) == 0; }))
      << "claims not given back";
  EXPECT_EQ(sink_.RequestCount(), 1u) << "a node sent after the breaker opened elsewhere";
}

// A pause through one node stops every node's sends at once (their claims read it) and shows on
// every node after one pass; a resume through another node makes the deliveries due everywhere.
TEST_F(EngineSharedTest, APauseThroughOneNodeAppliesOnEveryNode) {
  StartNodes(Dest("p"));
  Append("p", 3);
  ASSERT_TRUE(test::WaitFor([&] { return Count(store::DeliveryStatus::kDelivered) == 3; }));
  ASSERT_TRUE(test::WaitFor([&] { return Quiet(); }));

  ASSERT_TRUE(nodes_[0]->engine->Pause("p", "maintenance").ok());
  // New work, and every node woken for it (as ingest on each node would).
  Append("p", 6);
  ASSERT_TRUE(LookUntilPaused(6));
  EXPECT_EQ(sink_.RequestCount(), 3u) << "a node sent to a paused destination";
  for (auto& n : nodes_) {
    DestinationState s = n->engine->Destinations()["p"];
    EXPECT_TRUE(s.paused);
    EXPECT_EQ(s.paused_reason, "maintenance");
  }
  const store::DestinationControl paused = Control("p");
  ASSERT_TRUE(paused.pause.has_value());
  EXPECT_EQ(paused.pause->reason, "maintenance");

  ASSERT_TRUE(nodes_[1]->engine->Resume("p").ok());
  ASSERT_TRUE(test::WaitFor([&] { return Count(store::DeliveryStatus::kDelivered) == 9; }));
  ASSERT_TRUE(EveryNodeLooks());
  for (auto& n : nodes_) EXPECT_FALSE(n->engine->Destinations()["p"].paused);
  EXPECT_FALSE(Control("p").pause.has_value());
  EXPECT_EQ(sink_.RequestCount(), 9u);
}

}  // namespace
}  // namespace hookrelay::delivery
