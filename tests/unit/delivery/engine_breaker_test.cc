// The delivery engine's breaker transitions as reported (log, alerts) when an operator's reset
// lands between an attempt's end and its record (issue 12, point 5). Real SQLite store (held by
// a FaultInjectingStore), real HttpSender, real sink on 127.0.0.1.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "alerts/alert.h"
#include "common/clock.h"
#include "common/random.h"
#include "conformance/store_test_util.h"
#include "delivery/engine.h"
#include "delivery/kinds/http/http_sender.h"
#include "model/registry.h"
#include "policy/retry_policy.h"
#include "store/sqlite/open.h"
#include "store/store.h"
#include "support/fake_alert_sink.h"
#include "support/fault_injecting_store.h"
#include "support/process.h"
#include "support/sink.h"
#include "support/wait.h"

namespace hookrelay::delivery {
namespace {

using Alerts = hookrelay::testing::FakeAlertSink;

// The breaker opens on an attempt's failure; before that attempt is recorded the operator resets
// the breaker. The late record must not report "opened ... (trip 0) after 0 consecutive failed
// attempts" (the state after the reset), nor pause deliveries for it: the reset overtook it.
TEST(EngineBreakerTest, ATransitionOvertakenByAResetIsNotReported) {
  hookrelay::testing::TempDir dir;
  const Clock& clock = SystemClock::Instance();
  SeededRandom random(5);
  auto opened = store::OpenSqliteStore({.dir = dir.path()}, clock);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  store::FaultInjectingStore store(std::move(*opened));
  hookrelay::testing::Sink sink;
  sink.SetDefault(hookrelay::testing::SinkResponse::Status(503));
  model::Registry registry;
  {
    model::Catalog catalog;
    model::Destination d;
    d.name = "slowd";
    d.url = sink.url("/hooks");
    d.allow_private = true;
    d.policy = *policy::PresetPolicy("default");
    d.policy.max_attempts = 1;
    d.breaker.threshold = 1;
    catalog.destinations.emplace(d.name, d);
    ASSERT_TRUE(registry.Replace(std::move(catalog)).ok());
  }
  HttpSender::Options sender_options;
  sender_options.allow_private_destinations = true;
  HttpSender sender(sender_options, clock);
  Alerts alerts;
  EngineOptions options;
  options.node_id = "n1";
  options.poll_interval = std::chrono::milliseconds(20);
  DeliveryEngine engine(store, registry, sender, &alerts, clock, random, options);

  store.HoldRecordAttempts(true);
  auto e = store.AppendEventSync(store::test::MakeEvent(clock, random, "{}", {"slowd"}));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  engine.Start();
  engine.Wake();
  // The attempt failed and opened the breaker; its record waits.
  ASSERT_TRUE(test::WaitFor([&] {
    auto all = engine.Destinations();
    return store.held_record_attempts() > 0 &&
           all["slowd"].breaker.state == policy::BreakerState::kOpen;
  }));
  ASSERT_TRUE(engine.ResetBreaker("slowd").ok());
  store.HoldRecordAttempts(false);
  ASSERT_TRUE(test::WaitFor([&] {
    auto ds = store.GetDeliveries(e->id);
    return ds.ok() && !ds->empty() && (*ds)[0].status == store::DeliveryStatus::kFailed;
  }));
  engine.Stop(std::chrono::seconds(2));
  for (const alerts::Alert& a : alerts.all()) {
    EXPECT_NE(a.kind, alerts::Alert::Kind::kBreakerOpened) << "stale: " << a.reason;
  }
  EXPECT_EQ(engine.Destinations()["slowd"].breaker.state, policy::BreakerState::kClosed);
  EXPECT_FALSE(engine.Destinations()["slowd"].paused);
}

}  // namespace
}  // namespace hookrelay::delivery
