#include "retention/retention_job.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "conformance/store_test_util.h"
#include "store/sqlite/open.h"
#include "store/store.h"
#include "support/process.h"
#include "support/wait.h"
#include "unit/retention/retention_test_util.h"

namespace hookrelay::retention {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using store::DeliveryStatus;
using store::test::MakeEvent;

constexpr Duration kDay = hours(24);

class RetentionJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<store::Store>> s = store::OpenSqliteStore({.dir = dir_.path()}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    model::Catalog catalog;
    test::AddDestination(catalog, test::MakeDestination("billing", "free"));  // 3d
    test::AddDestination(catalog, test::MakeDestination("crm", "pro"));       // 30d
    ASSERT_TRUE(registry_.Replace(std::move(catalog)).ok());
  }

  std::string Append(std::vector<std::string> destinations = {"billing", "crm"}) {
    Result<store::AppendResult> r =
        store_->AppendEventSync(MakeEvent(clock_, random_, "{}", std::move(destinations)));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->id : "";
  }

  bool Exists(const std::string& id) {
    Result<std::optional<store::Event>> e = store_->GetEvent(id);
    EXPECT_TRUE(e.ok());
    return e.ok() && e->has_value();
  }

  hookrelay::testing::TempDir dir_;
  FakeClock clock_;
  SeededRandom random_{7};
  std::unique_ptr<store::Store> store_;
  model::Registry registry_;
};

TEST_F(RetentionJobTest, PurgesFinishedEventsPastTheLongestWindowKeepsPendingOnes) {
  std::vector<std::string> old_ids;
  for (int i = 0; i < 7; ++i) old_ids.push_back(Append());
  // Every old delivery is claimed; those of the first five events end delivered or failed, the
  // sixth's are being retried (scheduled again) and the seventh's are still leased (sending).
  std::vector<store::Delivery> claimed =
      store_->ClaimDue(clock_.Now(), 14, minutes(5), "s").value();
  ASSERT_EQ(claimed.size(), 14u);
  const std::string& retrying = old_ids[5];
  const std::string& sending = old_ids[6];
  int n = 0;
  for (const store::Delivery& d : claimed) {
    if (d.event_id == sending) continue;
    const DeliveryStatus status =
        d.event_id == retrying ? DeliveryStatus::kScheduled
                               : (n++ % 2 ? DeliveryStatus::kDelivered : DeliveryStatus::kFailed);
    store::Attempt a{d.id, 1, clock_.Now(), 3, 500, std::nullopt, std::nullopt, "x"};
    ASSERT_TRUE(store_->RecordAttempt(a, {status, clock_.Now() + minutes(5)}, "s").ok());
  }

  clock_.Advance(20 * kDay);  // past billing's 3d window, within crm's 30d
  std::vector<std::string> young_ids;
  for (int i = 0; i < 2; ++i) young_ids.push_back(Append());
  clock_.Advance(11 * kDay);  // now the first events are 31 days old, the young ones 11

  RetentionJob job(*store_, registry_, clock_, {.interval = hours(1), .batch = 3});
  Result<int64_t> purged = job.RunOnce();
  ASSERT_TRUE(purged.ok()) << purged.status().ToString();
  EXPECT_EQ(*purged, 5);

  for (size_t i = 0; i < old_ids.size(); ++i) {
    const bool kept = old_ids[i] == retrying || old_ids[i] == sending;
    EXPECT_EQ(Exists(old_ids[i]), kept) << old_ids[i];
    EXPECT_EQ(store_->GetDeliveries(old_ids[i])->size(), kept ? 2u : 0u) << old_ids[i];
  }
  for (const store::Delivery& d : claimed) {
    const size_t expected = d.event_id == retrying ? 1u : 0u;
    EXPECT_EQ(store_->GetAttempts(d.id)->size(), expected);
  }
  for (const std::string& id : young_ids) {
    EXPECT_TRUE(Exists(id)) << id;
    EXPECT_EQ(store_->GetDeliveries(id)->size(), 2u) << id;
  }
  EXPECT_EQ(*store_->CountDeliveries(DeliveryStatus::kScheduled), 6);   // retrying 2 + young 4
  EXPECT_EQ(*store_->CountDeliveries(DeliveryStatus::kDelivering), 2);  // still sending
  EXPECT_EQ(*store_->CountDeliveries(DeliveryStatus::kDelivered), 0);

  RetentionStats stats = job.stats();
  EXPECT_EQ(stats.purged_events, 5);
  EXPECT_EQ(stats.batches, 2);  // 3 + 2: stops at the first short batch
  EXPECT_EQ(stats.passes, 1);
  EXPECT_EQ(stats.failed_passes, 0);
  ASSERT_TRUE(stats.last_cutoff.has_value());
  EXPECT_EQ(*stats.last_cutoff, clock_.Now() - 30 * kDay);

  // Nothing left to do: one empty batch.
  EXPECT_EQ(*job.RunOnce(), 0);
  EXPECT_EQ(job.stats().batches, 3);
  EXPECT_EQ(job.stats().passes, 2);
}

TEST_F(RetentionJobTest, CutoffFollowsTheLiveCatalog) {
  const std::string id = Append({});
  clock_.Advance(10 * kDay);
  RetentionJob job(*store_, registry_, clock_, {.interval = hours(1)});
  EXPECT_EQ(*job.RunOnce(), 0);  // crm keeps it for 30 days
  EXPECT_TRUE(Exists(id));

  model::Catalog only_billing;  // crm removed: billing's 3 days are the longest window now
  test::AddDestination(only_billing, test::MakeDestination("billing", "free"));
  ASSERT_TRUE(registry_.Replace(std::move(only_billing)).ok());
  EXPECT_EQ(*job.RunOnce(), 1);
  EXPECT_FALSE(Exists(id));
}

// Rejected requests go by their own age (7 days by default), in batches, whatever the windows.
TEST_F(RetentionJobTest, PurgesRejectionsPastTheirAge) {
  std::vector<store::Rejection> rows;
  for (int i = 0; i < 5; ++i) {
    store::Rejection r;
    r.source = "github";
    r.received_at = clock_.Now() + std::chrono::minutes(i);
    r.reason = "signature_mismatch";
    rows.push_back(r);
  }
  ASSERT_TRUE(store_->AppendRejections(rows, 100).ok());
  RetentionJob job(*store_, registry_, clock_, {.interval = hours(1), .batch = 2});
  clock_.Advance(7 * kDay);
  EXPECT_EQ(*job.RunOnce(), 0);
  EXPECT_EQ(job.stats().purged_rejections, 0) << "none is older than 7 days yet";
  clock_.Advance(std::chrono::minutes(3));  // the first three are now
  ASSERT_TRUE(job.RunOnce().ok());
  EXPECT_EQ(job.stats().purged_rejections, 3);
  EXPECT_EQ(store_->ListRejections("github", "", 10)->items.size(), 2u);
  RetentionJob keeping(*store_, registry_, clock_,
                       {.interval = hours(1), .rejections_max_age = Duration::zero()});
  clock_.Advance(kDay);
  ASSERT_TRUE(keeping.RunOnce().ok());
  EXPECT_EQ(store_->ListRejections("github", "", 10)->items.size(), 2u) << "zero keeps them";
}

// On simulated time: the first pass runs at Start, then the thread sleeps through the clock for
// exactly one interval; a clock moved short of it runs no pass, moved to it runs the next one,
// which takes the events that aged past the window meanwhile.
TEST_F(RetentionJobTest, ThreadPurgesEveryIntervalOnTheClock) {
  for (int i = 0; i < 5; ++i) Append({});
  clock_.Advance(31 * kDay);
  RetentionJob job(*store_, registry_, clock_, {.interval = hours(1), .batch = 2});
  const TimePoint started = clock_.Now();
  job.Start();
  ASSERT_TRUE(clock_.AwaitWaiters(1));  // the first pass is over: asleep until the next
  EXPECT_EQ(job.stats().purged_events, 5);
  EXPECT_EQ(job.stats().passes, 1);
  EXPECT_EQ(clock_.NextDeadline(), started + hours(1));

  for (int i = 0; i < 3; ++i) Append({});
  clock_.Advance(hours(1) - milliseconds(1));  // short of the interval: no pass
  EXPECT_EQ(clock_.Waiters(), 1u);
  EXPECT_EQ(job.stats().passes, 1);
  clock_.Advance(milliseconds(1));
  ASSERT_TRUE(hookrelay::test::WaitFor([&] { return job.stats().passes == 2; }));
  EXPECT_EQ(job.stats().purged_events, 5);  // the new events are an hour old
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  EXPECT_EQ(clock_.NextDeadline(), started + hours(2));

  // They age past the window; the next pass takes them without being asked.
  clock_.Advance(31 * kDay);
  ASSERT_TRUE(hookrelay::test::WaitFor([&] { return job.stats().passes == 3; }));
  EXPECT_EQ(job.stats().purged_events, 8);
  EXPECT_EQ(job.stats().failed_passes, 0);
  job.Stop();
  job.Stop();  // idempotent
}

// Stop ends the interval's sleep: the clock never moves here, so a Stop that waited it out would
// never return (the test then moves the clock so as not to hang).
TEST_F(RetentionJobTest, StopDoesNotWaitOutALongInterval) {
  RetentionJob job(*store_, registry_, clock_, {.interval = hours(1)});
  job.Start();
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  ASSERT_EQ(job.stats().passes, 1);  // the first pass runs at Start
  auto stopped = std::async(std::launch::async, [&job] { job.Stop(); });
  const bool prompt = stopped.wait_for(seconds(20)) == std::future_status::ready;
  if (!prompt) clock_.Advance(hours(2));
  EXPECT_TRUE(prompt) << "Stop waited for the interval";
}

TEST_F(RetentionJobTest, StopBeforeStartAndDestroyWithoutStart) {
  { RetentionJob never_started(*store_, registry_, clock_); }
  RetentionJob job(*store_, registry_, clock_);
  job.Stop();
}

}  // namespace
}  // namespace hookrelay::retention
