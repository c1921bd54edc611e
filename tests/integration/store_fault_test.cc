// Store faults during delivery (issue 14): the real delivery engine and libcurl sender deliver to a
// real sink on 127.0.0.1 from a real SQLite store wrapped in the FaultInjectingStore, which fails
// the writes of attempt results as a failed commit or a full disk would. While the store cannot
// write, a result must not count (delivered, failed for good, 410 Gone) and must not be lost;
// once the fault clears, each result is recorded, once.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <set>
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

namespace hookrelay {
namespace {

using namespace std::chrono_literals;
using testing::Sink;
using testing::SinkResponse;

using Alerts = hookrelay::testing::FakeAlertSink;

class StoreFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::OpenSqliteStore({.dir = dir_.path()}, clock_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    sqlite_ = std::move(*opened);
    faulty_ = std::make_unique<store::FaultInjectingStore>(sqlite_.get());
  }
  void TearDown() override {
    if (engine_) engine_->Stop(0ms);
    engine_.reset();
    sender_.reset();
  }

  void Start(const std::string& path) {
    model::Destination d;
    d.name = "d";
    d.url = sink_.url(path);
    d.allow_private = true;
    d.policy = *policy::PresetPolicy("default");
    d.policy.jitter = policy::Jitter::kNone;
    d.policy.strategy = policy::Strategy::kLadder;
    d.policy.ladder = {50ms};
    d.policy.max_attempts = 5;
    d.policy.max_duration = 1h;
    d.policy.timeout = 5s;
    d.breaker.threshold = 1000;
    d.max_concurrency = 8;
    model::Catalog catalog;
    catalog.destinations.emplace(d.name, d);
    ASSERT_TRUE(registry_.Replace(std::move(catalog)).ok());

    sender_ = std::make_unique<delivery::HttpSender>(delivery::HttpSender::Options{}, clock_);
    delivery::EngineOptions options;
    options.node_id = "n1";
    options.poll_interval = 50ms;
    // Longer than the test: a delivery is sent again only if its result was let go.
    options.lease_margin = 10min;
    engine_ = std::make_unique<delivery::DeliveryEngine>(*faulty_, registry_, *sender_, &alerts_,
                                                         clock_, random_, options);
    engine_->Start();
  }

  std::vector<std::string> Append(int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      auto e = sqlite_->AppendEventSync(
          store::test::MakeEvent(clock_, random_, "{\"n\":" + std::to_string(i) + "}", {"d"}));
      EXPECT_TRUE(e.ok()) << e.status().ToString();
      if (e.ok()) ids.push_back(e->id);
    }
    if (engine_) engine_->Wake();
    return ids;
  }

  std::vector<store::Delivery> DeliveriesOf(const std::vector<std::string>& ids) {
    std::vector<store::Delivery> out;
    for (const auto& id : ids) {
      auto ds = sqlite_->GetDeliveries(id);
      EXPECT_TRUE(ds.ok() && ds->size() == 1);
      if (ds.ok() && ds->size() == 1) out.push_back((*ds)[0]);
    }
    return out;
  }
  bool AllInStatus(const std::vector<std::string>& ids, store::DeliveryStatus status) {
    for (const auto& d : DeliveriesOf(ids)) {
      if (d.status != status) return false;
    }
    return true;
  }

  // Every event was delivered once: one request per event at the sink (one webhook-id each), one
  // attempt recorded for each, the engine's counters matching the store.
  void ExpectEachDeliveredOnce(const std::vector<std::string>& ids) {
    ASSERT_TRUE(test::WaitFor([&] { return AllInStatus(ids, store::DeliveryStatus::kDelivered); }));
    for (const auto& d : DeliveriesOf(ids)) {
      EXPECT_EQ(d.attempts, 1) << d.event_id;
      auto attempts = sqlite_->GetAttempts(d.id);
      ASSERT_TRUE(attempts.ok());
      ASSERT_EQ(attempts->size(), 1u) << d.event_id;
      EXPECT_EQ((*attempts)[0].status_code, 200);
    }
    std::set<std::string> webhook_ids;
    for (const auto& r : sink_.Requests()) webhook_ids.insert(r.Header("webhook-id").value_or(""));
    EXPECT_EQ(webhook_ids, std::set<std::string>(ids.begin(), ids.end()));
    EXPECT_EQ(sink_.RequestCount(), ids.size());
    ASSERT_TRUE(test::WaitFor([&] { return engine_->Stats().in_flight == 0; }));
    const delivery::EngineStats stats = engine_->Stats();
    EXPECT_EQ(stats.delivered, static_cast<int64_t>(ids.size()));
    EXPECT_EQ(stats.attempts, static_cast<int64_t>(ids.size()));
    EXPECT_EQ(stats.failed, 0);
    EXPECT_EQ(engine_->Destinations().at("d").delivered, static_cast<int64_t>(ids.size()));
  }

  // While writes fail: the sink got every event, the recorder has seen its write fail (and either
  // tried again, or (the defect) counted the results anyway).
  void WaitForFailedWrites(size_t events) {
    ASSERT_TRUE(sink_.WaitForRequests(events, 20s));
    ASSERT_TRUE(test::WaitFor([&] {
      return faulty_->failed_record_attempts() > static_cast<int64_t>(events) ||
             engine_->Stats().delivered > 0 || engine_->Stats().failed > 0;
    }));
  }

  testing::TempDir dir_;
  SystemClock& clock_ = SystemClock::Instance();
  SeededRandom random_{14};
  Sink sink_;
  std::unique_ptr<store::Store> sqlite_;
  std::unique_ptr<store::FaultInjectingStore> faulty_;
  model::Registry registry_;
  Alerts alerts_;
  std::unique_ptr<delivery::HttpSender> sender_;
  std::unique_ptr<delivery::DeliveryEngine> engine_;
};

// A commit that fails (kUnavailable) for every result write: the 40 deliveries reached the sink,
// none counts while its result is not written, and once commits work again each is recorded once
// (40 delivered, not 80: the defect counted a failed write as recorded, then again once the
// lease expired and the delivery was sent and recorded again).
TEST_F(StoreFaultTest, CommitFailureDuringDeliveryLosesNoResultAndCountsEachOnce) {
  faulty_->FailAllRecordAttempts(Status::Unavailable("commit failed: disk I/O error"));
  Start("/hooks");
  const std::vector<std::string> ids = Append(40);
  WaitForFailedWrites(ids.size());
  delivery::EngineStats stats = engine_->Stats();
  EXPECT_EQ(stats.delivered, 0) << "results whose write failed were counted";
  EXPECT_EQ(stats.attempts, 0);
  EXPECT_EQ(stats.in_flight, 40) << "unrecorded results are still in flight";
  EXPECT_TRUE(AllInStatus(ids, store::DeliveryStatus::kDelivering));

  faulty_->Heal();
  ExpectEachDeliveredOnce(ids);
  EXPECT_EQ(alerts_.count(alerts::Alert::Kind::kDeliveriesFailed), 0);
}

// A full disk (kResourceExhausted) while results are written: the same, and deliveries go on once
// space is freed (new events are delivered too).
TEST_F(StoreFaultTest, FullDiskDuringDeliveryThenDeliveryResumesWhenSpaceIsFreed) {
  Start("/hooks");
  std::vector<std::string> ids = Append(5);
  ASSERT_TRUE(test::WaitFor([&] { return AllInStatus(ids, store::DeliveryStatus::kDelivered); }));

  faulty_->FailAllRecordAttempts(Status::ResourceExhausted("database or disk is full"));
  std::vector<std::string> more = Append(30);
  WaitForFailedWrites(35);
  EXPECT_EQ(engine_->Stats().delivered, 5);
  EXPECT_TRUE(AllInStatus(more, store::DeliveryStatus::kDelivering));

  faulty_->Heal();
  std::vector<std::string> after = Append(5);
  ids.insert(ids.end(), more.begin(), more.end());
  ids.insert(ids.end(), after.begin(), after.end());
  ExpectEachDeliveredOnce(ids);
}

// 410 Gone whose result cannot be written: the destination is not paused and nothing is reported
// as failed for good until the result is recorded; then both happen, once.
TEST_F(StoreFaultTest, GoneIsActedOnOnlyOnceItsResultIsRecorded) {
  sink_.SetDefault("/gone", SinkResponse::Status(410));
  faulty_->FailAllRecordAttempts(Status::Unavailable("commit failed"));
  Start("/gone");
  const std::vector<std::string> ids = Append(3);
  WaitForFailedWrites(ids.size());
  EXPECT_FALSE(engine_->Destinations().at("d").paused);
  EXPECT_EQ(engine_->Stats().failed, 0);
  EXPECT_EQ(alerts_.count(alerts::Alert::Kind::kDeliveriesFailed), 0);
  EXPECT_EQ(alerts_.count(alerts::Alert::Kind::kDestinationPaused), 0);

  faulty_->Heal();
  ASSERT_TRUE(test::WaitFor([&] { return AllInStatus(ids, store::DeliveryStatus::kFailed); }));
  ASSERT_TRUE(test::WaitFor([&] { return engine_->Stats().in_flight == 0; }));
  EXPECT_TRUE(engine_->Destinations().at("d").paused);
  EXPECT_EQ(engine_->Stats().failed, 3);
  EXPECT_EQ(alerts_.count(alerts::Alert::Kind::kDeliveriesFailed), 3);
  EXPECT_EQ(alerts_.count(alerts::Alert::Kind::kDestinationPaused), 1);
  EXPECT_EQ(sink_.RequestCount(), 3u);
}

// Stopping while results cannot be written: Stop waits its grace period, then lets them go; they
// were not counted, and the deliveries are sent again by the next engine (at-least-once, with the
// same webhook-id).
TEST_F(StoreFaultTest, StopWithUnwritableResultsLetsThemGoUncounted) {
  faulty_->FailAllRecordAttempts(Status::Unavailable("commit failed"));
  Start("/hooks");
  const std::vector<std::string> ids = Append(4);
  WaitForFailedWrites(ids.size());
  engine_->Stop(200ms);
  EXPECT_EQ(engine_->Stats().delivered, 0);
  EXPECT_EQ(engine_->Stats().in_flight, 0);
  engine_.reset();
  sender_.reset();

  // A restart: the in-memory leases are gone with the old store; the deliveries are due again.
  faulty_.reset();
  sqlite_.reset();
  auto opened = store::OpenSqliteStore({.dir = dir_.path()}, clock_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  sqlite_ = std::move(*opened);
  faulty_ = std::make_unique<store::FaultInjectingStore>(sqlite_.get());
  Start("/hooks");
  ASSERT_TRUE(test::WaitFor([&] { return AllInStatus(ids, store::DeliveryStatus::kDelivered); }));
  EXPECT_EQ(sink_.RequestCount(), 8u);
  std::multiset<std::string> webhook_ids;
  for (const auto& r : sink_.Requests()) webhook_ids.insert(r.Header("webhook-id").value_or(""));
  for (const auto& id : ids) EXPECT_EQ(webhook_ids.count(id), 2u) << id;
}

}  // namespace
}  // namespace hookrelay
