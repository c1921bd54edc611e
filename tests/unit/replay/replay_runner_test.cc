#include "replay/replay_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "common/time_format.h"
#include "conformance/store_test_util.h"
#include "policy/retry_policy.h"
#include "replay/replay_filter.h"
#include "store/sqlite/open.h"
#include "store/store.h"
#include "support/process.h"
#include "support/wait.h"

namespace hookrelay::replay {
namespace {

using std::chrono::hours;
using std::chrono::seconds;
using store::DeliveryStatus;

store::Delivery D(std::string destination, int chain, DeliveryStatus status) {
  store::Delivery d;
  d.destination = std::move(destination);
  d.chain = chain;
  d.status = status;
  return d;
}

TEST(ReplayTargetsTest, TheLatestChainPerDestinationDecides) {
  std::vector<store::Delivery> ds = {
      D("a", 0, DeliveryStatus::kFailed), D("b", 0, DeliveryStatus::kFailed),
      D("a", 1, DeliveryStatus::kDelivered), D("c", 0, DeliveryStatus::kDelivered)};
  ReplayFilter f;
  EXPECT_EQ(ReplayTargets(ds, f), std::vector<std::string>{"b"});
  f.status = DeliveryStatus::kDelivered;
  EXPECT_EQ(ReplayTargets(ds, f), (std::vector<std::string>{"a", "c"}));
  f.destination = "c";
  EXPECT_EQ(ReplayTargets(ds, f), std::vector<std::string>{"c"});
  f.destination = "b";
  EXPECT_TRUE(ReplayTargets(ds, f).empty());
}

TEST(ReplayFilterTest, RoundTripsAndNamesBadFields) {
  auto f = ParseReplayFilter(
      R"({"destination": "billing", "source": "gh", "since": "2026-11-30T06:00:00Z"})");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->status, DeliveryStatus::kFailed);
  EXPECT_EQ(f->destination, "billing");
  auto again = ParseReplayFilter(ReplayFilterToJson(*f));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *f);
  EXPECT_EQ(ParseReplayFilter(R"({"status": "nope"})").status().field(), "status");
  EXPECT_EQ(ParseReplayFilter(R"({"since": "yesterday"})").status().field(), "since");
  EXPECT_EQ(ParseReplayFilter(R"({"destination": 3})").status().field(), "destination");
  EXPECT_EQ(ParseReplayFilter(R"({"colour": "red"})").status().field(), "colour");
  EXPECT_FALSE(ParseReplayFilter("[]").ok());
}

// The two destinations the runner tests replay to, with the default policy (and `max_attempts`
// when given).
model::Catalog BillingAndCrm(std::optional<int> max_attempts = std::nullopt) {
  model::Catalog catalog;
  for (const char* name : {"billing", "crm"}) {
    model::Destination d;
    d.name = name;
    d.url = std::string("https://example.com/") + name;
    d.policy = *policy::PresetPolicy("default");
    if (max_attempts) d.policy.max_attempts = *max_attempts;
    catalog.destinations.emplace(name, std::move(d));
  }
  return catalog;
}

// The runner against a real SQLite store and the system clock, with a high rate (pacing and
// waits are tested on simulated time, ReplayRunnerFakeClockTest).
class ReplayRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::OpenSqliteStore({.dir = dir_.path()}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    ASSERT_TRUE(registry_.Replace(BillingAndCrm(3)).ok());
  }

  // An event to `destinations`, each delivery in `status`, received `age` ago.
  std::string AddEvent(std::vector<std::string> destinations, DeliveryStatus status,
                       Duration age = Duration::zero()) {
    store::NewEvent e = store::test::MakeEvent(clock_, random_, "{}", std::move(destinations));
    e.received_at = clock_.Now() - age;
    for (store::NewDelivery& d : e.deliveries) d.status = status;
    auto r = store_->AppendEventSync(std::move(e));
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->id : "";
  }

  // A job as the API creates it: its total counted before it is stored.
  store::ReplayJob Job(const std::string& filter, double rate = 2000) {
    store::ReplayJob j;
    j.id = NewUlid(clock_, random_);
    j.created_at = clock_.Now();
    j.filter = filter;
    j.rate = rate;
    if (auto f = ParseReplayFilter(filter); f.ok()) {
      auto total = CountReplayable(*store_, AsOfJob(*f, j.created_at));
      EXPECT_TRUE(total.ok());
      j.total = total.ok() ? *total : -1;
    }
    EXPECT_TRUE(store_->CreateReplayJob(j).ok());
    return j;
  }

  store::ReplayJob Get(const std::string& id) {
    auto j = store_->GetReplayJob(id);
    EXPECT_TRUE(j.ok() && j->has_value());
    return j.ok() && j->has_value() ? **j : store::ReplayJob{};
  }

  int Chains(const std::string& event_id, const std::string& destination) {
    int n = 0;
    auto ds = store_->GetDeliveries(event_id);
    EXPECT_TRUE(ds.ok());
    if (!ds.ok()) return -1;
    for (const store::Delivery& d : *ds) {
      n += d.destination == destination && d.chain > 0;
    }
    return n;
  }

  hookrelay::testing::TempDir dir_;
  const Clock& clock_ = SystemClock::Instance();
  SeededRandom random_{7};
  std::unique_ptr<store::Store> store_;
  model::Registry registry_;
  std::atomic<int> wakes_{0};
};

TEST_F(ReplayRunnerTest, ReplaysEachMatchingEventOnceAndCountsWhatItCannot) {
  // First: the store's receive times never go back, so an older event comes before the others.
  const std::string old = AddEvent({"billing"}, DeliveryStatus::kFailed, hours(24 * 40));
  std::vector<std::string> failed;
  for (int i = 0; i < 30; ++i) failed.push_back(AddEvent({"billing"}, DeliveryStatus::kFailed));
  const std::string both = AddEvent({"billing", "crm"}, DeliveryStatus::kFailed);
  const std::string delivered = AddEvent({"billing"}, DeliveryStatus::kDelivered);
  const std::string gone = AddEvent({"nowhere"}, DeliveryStatus::kFailed);
  store::ReplayJob job = Job(R"({"status":"failed"})");

  ReplayRunnerOptions options;
  options.page_size = 7;  // several pages
  ReplayRunner runner(
      *store_, registry_, clock_, random_, [this] { ++wakes_; }, options);
  Result<bool> ran = runner.RunOnce();
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_TRUE(*ran);
  store::ReplayJob after = Get(job.id);
  EXPECT_EQ(after.state, store::ReplayJobState::kDone);
  EXPECT_EQ(after.done, 31);
  EXPECT_EQ(after.failed, 2);  // past the 30-day window; destination no longer configured
  EXPECT_EQ(after.total, 33);
  EXPECT_FALSE(after.lease_until.has_value());
  for (const std::string& id : failed) EXPECT_EQ(Chains(id, "billing"), 1) << id;
  EXPECT_EQ(Chains(both, "billing"), 1);
  EXPECT_EQ(Chains(both, "crm"), 1);
  EXPECT_EQ(Chains(delivered, "billing"), 0);
  EXPECT_EQ(Chains(old, "billing"), 0);
  EXPECT_GE(wakes_.load(), 1);  // after each batch of chains
  auto ds = store_->GetDeliveries(failed[0]);
  ASSERT_TRUE(ds.ok());
  for (const store::Delivery& d : *ds) {
    if (d.chain == 1) {
      EXPECT_EQ(d.max_attempts, 3);
    }
  }
  // Nothing left: the same filter again replays nothing (the latest chains are scheduled now).
  EXPECT_FALSE(*runner.RunOnce());
  store::ReplayJob again = Job(R"({"status":"failed"})");
  ASSERT_TRUE(*runner.RunOnce());
  // Only the two it could not replay match again, and still cannot be replayed.
  EXPECT_EQ(Get(again.id).done, 0);
  EXPECT_EQ(Get(again.id).failed, 2);
}

TEST_F(ReplayRunnerTest, DestinationFilter) {
  for (int i = 0; i < 20; ++i) AddEvent({"billing", "crm"}, DeliveryStatus::kFailed);
  store::ReplayJob job = Job(R"({"status":"failed","destination":"crm"})");
  ReplayRunner runner(*store_, registry_, clock_, random_, nullptr);
  ASSERT_TRUE(*runner.RunOnce());
  EXPECT_EQ(Get(job.id).done, 20);
  auto page = store_->ListEvents({}, "", 100);
  ASSERT_TRUE(page.ok());
  for (const store::Event& e : page->items) {
    EXPECT_EQ(Chains(e.id, "crm"), 1);
    EXPECT_EQ(Chains(e.id, "billing"), 0);
  }
}

// The total the user was shown stays, even when every event was replayed by other means
// between the count and the run (it used to end as "0 replayed, 0 failed, of 0").
TEST_F(ReplayRunnerTest, TheTotalIsCountedOnceAndNeverChanges) {
  std::vector<std::string> ids;
  for (int i = 0; i < 7; ++i) ids.push_back(AddEvent({"billing"}, DeliveryStatus::kFailed));
  store::ReplayJob job = Job(R"({"status":"failed"})");
  EXPECT_EQ(Get(job.id).total, 7);
  for (const std::string& id : ids) {
    ASSERT_TRUE(store_->CreateReplay(id, "billing", 3, clock_.Now()).ok());
  }
  ReplayRunner runner(*store_, registry_, clock_, random_, nullptr);
  ASSERT_TRUE(*runner.RunOnce());
  store::ReplayJob after = Get(job.id);
  EXPECT_EQ(after.state, store::ReplayJobState::kDone);
  EXPECT_EQ(after.total, 7);
  EXPECT_EQ(after.done, 0);
  EXPECT_EQ(after.failed, 0);
  for (const std::string& id : ids) EXPECT_EQ(Chains(id, "billing"), 1);  // not replayed again
}

// Events that fail after the job was created are not its business: its walk sees what its count
// saw, so done + failed ends at the total.
TEST_F(ReplayRunnerTest, AJobReplaysWhatMatchedWhenItWasCreated) {
  const std::string before = AddEvent({"billing"}, DeliveryStatus::kFailed);
  store::ReplayJob job = Job(R"({"status":"failed"})");
  // The next event is received after the job was created (the store keeps milliseconds).
  ASSERT_TRUE(test::WaitFor([&] { return clock_.Now() > job.created_at; }));
  const std::string after = AddEvent({"billing"}, DeliveryStatus::kFailed);
  ReplayRunner runner(*store_, registry_, clock_, random_, nullptr);
  ASSERT_TRUE(*runner.RunOnce());
  store::ReplayJob done = Get(job.id);
  EXPECT_EQ(done.total, 1);
  EXPECT_EQ(done.done, 1);
  EXPECT_EQ(Chains(before, "billing"), 1);
  EXPECT_EQ(Chains(after, "billing"), 0);
}

// Polls the job until `pred` holds (at most 20 s); returns the job as last seen.
template <typename Pred>
store::ReplayJob WaitForJob(const std::function<store::ReplayJob()>& get, Pred pred) {
  store::ReplayJob j = get();
  (void)test::WaitFor([&] {
    j = get();
    return pred(j);
  });
  return j;
}

TEST_F(ReplayRunnerTest, AJobWaitingForAnOpenBreakerSaysSo) {
  AddEvent({"billing"}, DeliveryStatus::kFailed);
  policy::BreakerSnapshot open;
  open.state = policy::BreakerState::kOpen;
  open.open_until = clock_.Now() + std::chrono::milliseconds(600);
  ASSERT_TRUE(store_->PutBreaker("billing", open).ok());
  store::ReplayJob job = Job(R"({})");
  ReplayRunner runner(*store_, registry_, clock_, random_, nullptr);
  std::thread run([&runner] { EXPECT_TRUE(*runner.RunOnce()); });
  store::ReplayJob waiting = WaitForJob(
      [&] { return Get(job.id); }, [](const store::ReplayJob& j) { return j.waiting.has_value(); });
  ASSERT_TRUE(waiting.waiting.has_value());
  boost::json::object w = boost::json::parse(*waiting.waiting).as_object();
  EXPECT_EQ(w.at("reason"), "breaker_open");
  EXPECT_EQ(w.at("destination"), "billing");
  EXPECT_EQ(w.at("until").as_string(), FormatRfc3339(*open.open_until, false));
  EXPECT_EQ(w.at("message").as_string(),
            "breaker open on billing until " + FormatRfc3339(*open.open_until, false));
  EXPECT_EQ(waiting.done, 0);
  run.join();
  store::ReplayJob after = Get(job.id);
  EXPECT_EQ(after.done, 1);
  EXPECT_FALSE(after.waiting.has_value());
}

TEST_F(ReplayRunnerTest, AJobWaitsWhileItsDestinationIsPausedAndSaysSo) {
  const std::string id = AddEvent({"billing"}, DeliveryStatus::kFailed);
  std::atomic<bool> paused{true};
  ReplayRunnerOptions options;
  options.paused_reason = [&paused](const std::string& d) -> std::optional<std::string> {
    if (d == "billing" && paused) return std::string("maintenance");
    return std::nullopt;
  };
  store::ReplayJob job = Job(R"({})");
  ReplayRunner runner(*store_, registry_, clock_, random_, nullptr, options);
  std::thread run([&runner] { EXPECT_TRUE(*runner.RunOnce()); });
  store::ReplayJob waiting = WaitForJob(
      [&] { return Get(job.id); }, [](const store::ReplayJob& j) { return j.waiting.has_value(); });
  ASSERT_TRUE(waiting.waiting.has_value());
  boost::json::object w = boost::json::parse(*waiting.waiting).as_object();
  EXPECT_EQ(w.at("reason"), "destination_paused");
  EXPECT_EQ(w.at("destination"), "billing");
  EXPECT_TRUE(w.at("until").is_null());
  EXPECT_EQ(w.at("message"), "destination billing is paused (maintenance)");
  EXPECT_EQ(Chains(id, "billing"), 0);  // nothing created while paused
  paused = false;
  run.join();
  store::ReplayJob after = Get(job.id);
  EXPECT_EQ(after.state, store::ReplayJobState::kDone);
  EXPECT_EQ(after.done, 1);
  EXPECT_FALSE(after.waiting.has_value());
}

TEST_F(ReplayRunnerTest, ABadJobFailsWithTheReasonAndCancelledJobsAreNotRun) {
  store::ReplayJob bad = Job(R"({"status":"nope"})");
  ReplayRunner runner(*store_, registry_, clock_, random_, nullptr);
  ASSERT_TRUE(*runner.RunOnce());
  EXPECT_EQ(Get(bad.id).state, store::ReplayJobState::kFailed);
  EXPECT_TRUE(Get(bad.id).error.has_value());
  AddEvent({"billing"}, DeliveryStatus::kFailed);
  store::ReplayJob cancelled = Job(R"({})");
  ASSERT_TRUE(store_->CancelReplayJob(cancelled.id, clock_.Now()).ok());
  EXPECT_FALSE(*runner.RunOnce());
}

TEST_F(ReplayRunnerTest, TheThreadPicksUpQueuedJobsAndStopsPromptly) {
  for (int i = 0; i < 5; ++i) AddEvent({"billing"}, DeliveryStatus::kFailed);
  ReplayRunner runner(*store_, registry_, clock_, random_, nullptr);
  runner.Start();
  store::ReplayJob job = Job(R"({})");
  runner.Notify();
  ASSERT_TRUE(test::WaitFor([&] { return Get(job.id).state == store::ReplayJobState::kDone; }));
  EXPECT_EQ(Get(job.id).done, 5);
  // A slow job (1/s) is left running, with its lease, when the runner stops: Stop ends its wait
  // for the next slot rather than waiting out the job (which would end it as done).
  for (int i = 0; i < 5; ++i) AddEvent({"crm"}, DeliveryStatus::kFailed);
  store::ReplayJob slow = Job(R"({"destination":"crm"})", 1);
  runner.Notify();
  ASSERT_TRUE(test::WaitFor([&] { return Get(slow.id).state == store::ReplayJobState::kRunning; }));
  runner.Stop();
  EXPECT_EQ(Get(slow.id).state, store::ReplayJobState::kRunning);
  EXPECT_LT(Get(slow.id).done, 5);
}

// The runner with a FakeClock: its waits are the clock's, so they end on Notify or Stop, or when
// the test moves the clock to their deadline, and no real time passes.
class ReplayRunnerFakeClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::OpenSqliteStore({.dir = dir_.path()}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    ASSERT_TRUE(registry_.Replace(BillingAndCrm()).ok());
  }

  std::string AddEvent(std::vector<std::string> destinations) {
    store::NewEvent e = store::test::MakeEvent(clock_, random_, "{}", std::move(destinations));
    for (store::NewDelivery& d : e.deliveries) d.status = DeliveryStatus::kFailed;
    auto r = store_->AppendEventSync(std::move(e));
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->id : "";
  }

  store::ReplayJob Job(const std::string& filter, double rate) {
    store::ReplayJob j;
    j.id = NewUlid(clock_, random_);
    j.created_at = clock_.Now();
    j.filter = filter;
    j.rate = rate;
    auto f = ParseReplayFilter(filter);
    EXPECT_TRUE(f.ok());
    auto total = CountReplayable(*store_, AsOfJob(*f, j.created_at));
    j.total = total.ok() ? *total : -1;
    EXPECT_TRUE(store_->CreateReplayJob(j).ok());
    clock_.Advance(std::chrono::milliseconds(1));  // the next job's ULID sorts after
    return j;
  }

  store::ReplayJob Get(const std::string& id) {
    auto j = store_->GetReplayJob(id);
    EXPECT_TRUE(j.ok() && j->has_value());
    return j.ok() && j->has_value() ? **j : store::ReplayJob{};
  }

  int Chains(const std::string& event_id, const std::string& destination) {
    auto ds = store_->GetDeliveries(event_id);
    EXPECT_TRUE(ds.ok());
    int n = 0;
    if (ds.ok()) {
      for (const store::Delivery& d : *ds) n += d.destination == destination && d.chain > 0;
    }
    return n;
  }

  hookrelay::testing::TempDir dir_;
  FakeClock clock_;
  SeededRandom random_{11};
  std::unique_ptr<store::Store> store_;
  model::Registry registry_;
};

// Issue 12.1: a job paced at 1/h sleeps until its next slot; a cancel must end that sleep at
// once (it used to be seen only at shutdown).
TEST_F(ReplayRunnerFakeClockTest, ACancelEndsASlowJobsWaitAtOnce) {
  const std::string first = AddEvent({"crm"});
  const std::string second = AddEvent({"crm"});
  store::ReplayJob slow = Job(R"({"status":"failed"})", 1.0 / 3600);
  std::future<Result<bool>> run;  // destroyed after the runner has stopped
  ReplayRunner runner(*store_, registry_, clock_, random_, nullptr);
  run = std::async(std::launch::async, [&runner] { return runner.RunOnce(); });
  // The job waits for its first slot, somewhere in the first hour.
  store::ReplayJob j = WaitForJob(
      [&] { return Get(slow.id); },
      [](const store::ReplayJob& j) { return j.state == store::ReplayJobState::kRunning; });
  ASSERT_EQ(j.state, store::ReplayJobState::kRunning);
  ASSERT_TRUE(store_->CancelReplayJob(slow.id, clock_.Now()).ok());
  runner.Notify();  // what DELETE /api/v1/replays/{id} does
  const bool ended = run.wait_for(seconds(5)) == std::future_status::ready;
  runner.Stop();  // lets the old code's wait end, so a failure does not hang the test
  EXPECT_TRUE(ended) << "the cancelled job still waits for its next slot";
  Result<bool> ran = run.get();
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_EQ(Get(slow.id).state, store::ReplayJobState::kCancelled);
  EXPECT_LE(Chains(first, "crm") + Chains(second, "crm"), 1);
}

// Issue 12.1: jobs run side by side, each at its own pace: a job at 50/s finishes while one at
// 1/h waits for its next slot (it used to wait behind it for up to an hour).
TEST_F(ReplayRunnerFakeClockTest, AFastJobFinishesWhileASlowOneWaits) {
  AddEvent({"crm"});
  AddEvent({"crm"});
  store::ReplayJob slow = Job(R"({"destination":"crm"})", 1.0 / 3600);
  const std::string a = AddEvent({"billing"});
  const std::string b = AddEvent({"billing"});
  store::ReplayJob fast = Job(R"({"destination":"billing"})", 50);
  ReplayRunner runner(*store_, registry_, clock_, random_, nullptr);
  runner.Start();
  runner.Notify();
  store::ReplayJob f =
      WaitForJob([&] { return Get(fast.id); },
                 [](const store::ReplayJob& j) { return j.state == store::ReplayJobState::kDone; });
  EXPECT_EQ(f.state, store::ReplayJobState::kDone);
  EXPECT_EQ(f.done, 2);
  EXPECT_EQ(Chains(a, "billing"), 1);
  EXPECT_EQ(Chains(b, "billing"), 1);
  EXPECT_EQ(Get(slow.id).state, store::ReplayJobState::kRunning);  // still at its pace
  runner.Stop();
}

// Issue 12.7: a paused destination holds back only its own chains: the other destinations of
// the same event, and other events, are replayed and counted; `waiting` names the paused one
// once only it holds the job back.
TEST_F(ReplayRunnerFakeClockTest, APausedDestinationHoldsBackOnlyItsOwnChains) {
  const std::string both = AddEvent({"crm", "billing"});
  const std::string other = AddEvent({"billing"});
  std::atomic<bool> paused{true};
  ReplayRunnerOptions options;
  options.paused_reason = [&paused](const std::string& d) -> std::optional<std::string> {
    if (d == "crm" && paused) return std::string("410 Gone");
    return std::nullopt;
  };
  store::ReplayJob job = Job(R"({"status":"failed"})", 1000);
  EXPECT_EQ(job.total, 2);
  std::future<Result<bool>> run;  // destroyed after the runner has stopped
  ReplayRunner runner(*store_, registry_, clock_, random_, nullptr, options);
  run = std::async(std::launch::async, [&runner] { return runner.RunOnce(); });
  store::ReplayJob waiting =
      WaitForJob([&] { return Get(job.id); },
                 [](const store::ReplayJob& j) { return j.waiting.has_value() && j.done == 2; });
  EXPECT_EQ(waiting.done, 2);  // both events had a chain replayed
  EXPECT_EQ(waiting.failed, 0);
  ASSERT_TRUE(waiting.waiting.has_value());
  boost::json::object w = boost::json::parse(*waiting.waiting).as_object();
  EXPECT_EQ(w.at("reason"), "destination_paused");
  EXPECT_EQ(w.at("destination"), "crm");
  EXPECT_EQ(Chains(both, "billing"), 1);
  EXPECT_EQ(Chains(other, "billing"), 1);
  EXPECT_EQ(Chains(both, "crm"), 0);
  paused = false;
  runner.Notify();  // what resuming the destination does
  const bool ended = run.wait_for(seconds(5)) == std::future_status::ready;
  runner.Stop();
  ASSERT_TRUE(ended);
  ASSERT_TRUE(run.get().ok());
  store::ReplayJob after = Get(job.id);
  EXPECT_EQ(after.state, store::ReplayJobState::kDone);
  EXPECT_EQ(after.done, 2);
  EXPECT_FALSE(after.waiting.has_value());
  EXPECT_EQ(Chains(both, "crm"), 1);
}

// Moves the clock to each deadline the runner sleeps until, until `run` has finished; calls
// `at_each` before each move.
template <typename F>
::testing::AssertionResult RunOnSimulatedTime(FakeClock& clock, std::future<Result<bool>>& run,
                                              F at_each) {
  auto ended = [&run] {
    return run.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  };
  for (int steps = 0; !ended(); ++steps) {
    if (steps > 100000) return ::testing::AssertionFailure() << "too many steps";
    if (!test::WaitFor([&] { return clock.Waiters() > 0 || ended(); })) {
      return ::testing::AssertionFailure() << "the job neither sleeps nor ends";
    }
    if (ended()) break;
    at_each();
    clock.AdvanceToNextDeadline();
  }
  return ::testing::AssertionSuccess();
}

// Pacing on simulated time: 20 chains at 100/s are due one per 10 ms slot, in order, the last
// in [190 ms, 200 ms); the job sleeps until each chain is `lookahead` (100 ms) ahead.
TEST_F(ReplayRunnerFakeClockTest, ChainsAreDueOnePerSlotAtTheJobsRate) {
  std::vector<std::string> events;
  for (int i = 0; i < 20; ++i) events.push_back(AddEvent({"crm"}));
  store::ReplayJob job = Job(R"({"status":"failed"})", 100);
  const TimePoint start = clock_.Now();
  ReplayRunner runner(*store_, registry_, clock_, random_, nullptr);
  std::future<Result<bool>> run = std::async(std::launch::async, [&] { return runner.RunOnce(); });
  int sleeps = 0;
  ASSERT_TRUE(RunOnSimulatedTime(clock_, run, [&] {
    ++sleeps;
    // Never more than lookahead ahead: every chain created so far is due within 100 ms.
    for (const std::string& e : events) {
      auto ds = store_->GetDeliveries(e);
      ASSERT_TRUE(ds.ok());
      for (const store::Delivery& d : *ds) {
        if (d.chain > 0) {
          EXPECT_LE(d.next_attempt_at - clock_.Now(), std::chrono::milliseconds(100));
        }
      }
    }
  }));
  ASSERT_TRUE(run.get().ok());
  EXPECT_GT(sleeps, 0);
  EXPECT_EQ(Get(job.id).done, 20);
  std::vector<std::pair<int64_t, TimePoint>> due;  // (delivery id, next_attempt_at)
  for (const std::string& e : events) {
    auto ds = store_->GetDeliveries(e);
    ASSERT_TRUE(ds.ok());
    for (const store::Delivery& d : *ds) {
      if (d.chain == 1) due.emplace_back(d.id, d.next_attempt_at);
    }
  }
  ASSERT_EQ(due.size(), 20u);
  std::sort(due.begin(), due.end());  // creation order
  for (size_t i = 0; i < due.size(); ++i) {
    const Duration at = due[i].second - start;
    EXPECT_GE(at, std::chrono::milliseconds(10 * static_cast<int64_t>(i))) << i;
    EXPECT_LT(at, std::chrono::milliseconds(10 * static_cast<int64_t>(i + 1))) << i;
  }
}

// A job whose destination's breaker is open creates nothing before the breaker's open_until, on
// the clock, then replays.
TEST_F(ReplayRunnerFakeClockTest, WaitsWhileTheBreakerIsOpen) {
  const std::string id = AddEvent({"billing"});
  policy::BreakerSnapshot open;
  open.state = policy::BreakerState::kOpen;
  open.open_until = clock_.Now() + std::chrono::seconds(5);
  ASSERT_TRUE(store_->PutBreaker("billing", open).ok());
  store::ReplayJob job = Job(R"({})", 1000);
  ReplayRunner runner(*store_, registry_, clock_, random_, nullptr);
  std::future<Result<bool>> run = std::async(std::launch::async, [&] { return runner.RunOnce(); });
  ASSERT_TRUE(RunOnSimulatedTime(clock_, run, [&] {
    if (clock_.Now() < *open.open_until) {
      EXPECT_EQ(Chains(id, "billing"), 0) << "created early";
    }
  }));
  ASSERT_TRUE(run.get().ok());
  EXPECT_EQ(Get(job.id).done, 1);
  EXPECT_EQ(Chains(id, "billing"), 1);
  auto ds = store_->GetDeliveries(id);
  ASSERT_TRUE(ds.ok());
  for (const store::Delivery& d : *ds) {
    if (d.chain == 1) {
      EXPECT_GE(d.next_attempt_at, *open.open_until);
    }
  }
}

}  // namespace
}  // namespace hookrelay::replay
