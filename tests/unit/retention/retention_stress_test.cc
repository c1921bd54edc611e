// Purging a large backlog must not stall ingest: the purge runs in small batches through the
// store's single writer, and appends queued meanwhile commit between them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "conformance/store_test_util.h"
#include "retention/retention_job.h"
#include "store/sqlite/open.h"
#include "store/store.h"
#include "support/process.h"
#include "support/wait.h"
#include "unit/retention/retention_test_util.h"

namespace hookrelay::retention {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;
using store::test::MakeEvent;

constexpr int kOldEvents = 20'000;

TEST(RetentionStressTest, PurgingABacklogKeepsAppendsFlowing) {
  hookrelay::testing::TempDir dir;
  FakeClock clock;
  Result<std::unique_ptr<store::Store>> opened = store::OpenSqliteStore({.dir = dir.path()}, clock);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  store::Store& store = **opened;
  model::Registry registry;
  {
    model::Catalog catalog;
    test::AddDestination(catalog, test::MakeDestination("billing", "pro"));  // 30d
    ASSERT_TRUE(registry.Replace(std::move(catalog)).ok());
  }

  // The backlog: appended asynchronously so group commit makes it quick to build.
  {
    SeededRandom random(1);
    const std::string body(512, 'x');
    std::latch stored(kOldEvents);
    std::atomic<int> failed{0};
    for (int i = 0; i < kOldEvents; ++i) {
      store.AppendEvent(MakeEvent(clock, random, body, {}), [&](Result<store::AppendResult> r) {
        if (!r.ok()) failed.fetch_add(1);
        stored.count_down();
      });
    }
    stored.wait();
    ASSERT_EQ(failed.load(), 0);
  }
  clock.Advance(hours(24 * 31));

  RetentionJob job(store, registry, clock,
                   {.interval = hours(1), .batch = 500, .pause = milliseconds(10)});
  // Ingest goes on while the job purges: one event at a time, each waiting for its commit.
  std::atomic<bool> done{false};
  int appended = 0;
  int appended_during_purge = 0;  // committed after the first batch, before the pass ended
  int append_failures = 0;
  Duration worst{0};
  std::thread ingest([&] {
    SeededRandom random(2);
    while (!done.load()) {
      const auto t0 = std::chrono::steady_clock::now();
      Result<store::AppendResult> r = store.AppendEventSync(MakeEvent(clock, random, "{}"));
      const auto took = std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - t0);
      worst = std::max(worst, took);
      if (r.ok()) {
        ++appended;
        const RetentionStats s = job.stats();
        if (s.batches >= 1 && s.passes == 0) ++appended_during_purge;
      } else {
        ++append_failures;
      }
    }
  });

  const auto started = std::chrono::steady_clock::now();
  job.Start();
  ASSERT_TRUE(hookrelay::test::WaitFor([&] { return job.stats().passes >= 1; }, seconds(120),
                                       milliseconds(5)));
  const auto purge_time =
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - started);
  done.store(true);
  ingest.join();
  job.Stop();

  const RetentionStats stats = job.stats();
  std::printf(
      "purged %lld events in %lld batches in %lld ms; %d appends meanwhile, "
      "longest append %lld ms\n",
      static_cast<long long>(stats.purged_events), static_cast<long long>(stats.batches),
      static_cast<long long>(purge_time.count()), appended, static_cast<long long>(worst.count()));
  ::testing::Test::RecordProperty("purge_ms", std::to_string(purge_time.count()));
  ::testing::Test::RecordProperty("longest_append_ms", std::to_string(worst.count()));
  ::testing::Test::RecordProperty("appends_during_purge", std::to_string(appended));

  ASSERT_EQ(stats.passes, 1);
  EXPECT_EQ(stats.failed_passes, 0);
  EXPECT_EQ(stats.purged_events, kOldEvents);
  EXPECT_GE(stats.batches, kOldEvents / 500 + 1);  // 40 full batches and one short
  EXPECT_EQ(append_failures, 0);
  EXPECT_GT(appended, 0);
  // Ingest commits between the purge's batches (the time it waited is recorded above, a
  // figure, not a bound: a loaded machine must not fail this).
  EXPECT_GT(appended_during_purge, 0) << "no append committed while the purge ran";
  // The new events all stay.
  EXPECT_EQ(*store.CountDeliveries(store::DeliveryStatus::kScheduled), appended);
}

}  // namespace
}  // namespace hookrelay::retention
