#include "support/fault_injecting_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/random.h"
#include "conformance/store_test_util.h"
#include "store/sqlite/sqlite_store.h"
#include "support/process.h"

namespace hookrelay::store {
namespace {

using std::chrono::seconds;
using test::MakeEvent;

class FaultInjectingStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<Store>> s = OpenSqliteStore({.dir = dir_.path()}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    base_ = std::move(*s);
    store_ = std::make_unique<FaultInjectingStore>(base_.get());
  }

  // Appends through the wrapper and returns what the callback reported, and on which thread.
  Result<AppendResult> Append(const NewEvent& e, std::thread::id* callback_thread = nullptr) {
    std::latch done(1);
    std::optional<Result<AppendResult>> out;
    store_->AppendEvent(e, [&](Result<AppendResult> r) {
      out.emplace(std::move(r));
      if (callback_thread != nullptr) *callback_thread = std::this_thread::get_id();
      done.count_down();
    });
    done.wait();
    return std::move(*out);
  }

  int64_t Scheduled() { return *base_->CountDeliveries(DeliveryStatus::kScheduled); }

  hookrelay::testing::TempDir dir_;
  FakeClock clock_;
  SeededRandom random_{3};
  std::unique_ptr<Store> base_;
  std::unique_ptr<FaultInjectingStore> store_;
};

TEST_F(FaultInjectingStoreTest, FailsTheNextAppendsAndStoresNothingOfThem) {
  store_->FailAppends(2, Status::ResourceExhausted("disk full: injected"));
  for (int i = 0; i < 2; ++i) {
    NewEvent e = MakeEvent(clock_, random_);
    Result<AppendResult> r = Append(e);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kResourceExhausted);
    EXPECT_EQ(r.status().message(), "disk full: injected");
    EXPECT_TRUE(base_->ListEvents({}, "", 10)->items.empty());
  }
  EXPECT_EQ(Scheduled(), 0);
  NewEvent ok = MakeEvent(clock_, random_);
  Result<AppendResult> r = Append(ok);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(base_->GetEvent(r->id)->has_value());
  EXPECT_EQ(store_->failed_appends(), 2);
}

TEST_F(FaultInjectingStoreTest, FailsAllAppendsUntilHealed) {
  store_->FailAllAppends(Status::Unavailable("commit failed"));
  for (int i = 0; i < 5; ++i) {
    Result<AppendResult> r = Append(MakeEvent(clock_, random_));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kUnavailable);
  }
  // AppendEventSync goes through the same path.
  EXPECT_FALSE(store_->AppendEventSync(MakeEvent(clock_, random_)).ok());
  EXPECT_EQ(Scheduled(), 0);
  store_->Heal();
  EXPECT_TRUE(Append(MakeEvent(clock_, random_)).ok());
  EXPECT_EQ(Scheduled(), 1);
  EXPECT_EQ(store_->failed_appends(), 6);
}

TEST_F(FaultInjectingStoreTest, OkStatusStillInjectsAFailure) {
  store_->FailAppends(1, Status::Ok());
  Result<AppendResult> r = Append(MakeEvent(clock_, random_));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable);
}

TEST_F(FaultInjectingStoreTest, FailureCallbackRunsOnAStoreThread) {
  store_->FailAppends(1, Status::Unavailable("x"));
  std::thread::id cb_thread;
  ASSERT_FALSE(Append(MakeEvent(clock_, random_), &cb_thread).ok());
  EXPECT_NE(cb_thread, std::this_thread::get_id());
}

TEST_F(FaultInjectingStoreTest, FailsRecordAttemptsAndWritesNothing) {
  Result<AppendResult> e = Append(MakeEvent(clock_, random_));
  ASSERT_TRUE(e.ok());
  std::vector<Delivery> claimed = *store_->ClaimDue(clock_.Now(), 1, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 1u);
  Attempt a{claimed[0].id, 1, clock_.Now(), 5, 200, std::nullopt, std::nullopt, "ok"};
  DeliveryUpdate u{DeliveryStatus::kDelivered, clock_.Now()};

  store_->FailRecordAttempts(1, Status::Unavailable("commit failed"));
  Status s = store_->RecordAttempt(a, u, "s");
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_TRUE(base_->GetAttempts(a.delivery_id)->empty());
  EXPECT_EQ((*base_->GetDeliveries(e->id))[0].status, DeliveryStatus::kDelivering);

  EXPECT_TRUE(store_->RecordAttempt(a, u, "s").ok());
  EXPECT_EQ((*base_->GetDeliveries(e->id))[0].status, DeliveryStatus::kDelivered);
  EXPECT_EQ(store_->failed_record_attempts(), 1);

  store_->FailAllRecordAttempts(Status::ResourceExhausted("disk full"));
  EXPECT_EQ(store_->RecordAttempt(a, u, "s").code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(store_->RecordAttempt(a, u, "s").code(), Status::Code::kResourceExhausted);
  store_->Heal();
  // Healed: the call reaches the store, which refuses it on its own terms (lease gone).
  EXPECT_EQ(store_->RecordAttempt(a, u, "s").code(), Status::Code::kFailedPrecondition);
}

TEST_F(FaultInjectingStoreTest, RecordAttemptsFailsRecordByRecord) {
  NewEvent e1 = MakeEvent(clock_, random_), e2 = MakeEvent(clock_, random_);
  ASSERT_TRUE(Append(e1).ok());
  ASSERT_TRUE(Append(e2).ok());
  std::vector<Delivery> claimed = *store_->ClaimDue(clock_.Now(), 2, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 2u);
  const DeliveryUpdate u{DeliveryStatus::kDelivered, clock_.Now()};
  std::vector<AttemptRecord> batch = {
      {{claimed[0].id, 1, clock_.Now(), 5, 200, std::nullopt, std::nullopt, ""}, u},
      {{claimed[1].id, 1, clock_.Now(), 5, 200, std::nullopt, std::nullopt, ""}, u}};

  // One injected failure: the first record fails and writes nothing; the second is recorded.
  store_->FailRecordAttempts(1, Status::Unavailable("commit failed"));
  std::vector<Status> st = store_->RecordAttempts(batch, "s");
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].code(), Status::Code::kUnavailable);
  EXPECT_TRUE(st[1].ok()) << st[1].ToString();
  EXPECT_TRUE(base_->GetAttempts(claimed[0].id)->empty());
  EXPECT_EQ(base_->GetAttempts(claimed[1].id)->size(), 1u);
  EXPECT_EQ(store_->failed_record_attempts(), 1);

  store_->FailAllRecordAttempts(Status::ResourceExhausted("disk full"));
  st = store_->RecordAttempts({batch[0]}, "s");
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].code(), Status::Code::kResourceExhausted);
  store_->Heal();
  st = store_->RecordAttempts(batch, "s");
  ASSERT_EQ(st.size(), 2u);
  EXPECT_TRUE(st[0].ok()) << st[0].ToString();
  EXPECT_EQ(st[1].code(), Status::Code::kFailedPrecondition);  // recorded above already
}

TEST_F(FaultInjectingStoreTest, CountsFaultsExactlyUnderConcurrency) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 50;
  constexpr int kFaults = 100;
  store_->FailAppends(kFaults, Status::Unavailable("injected"));
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  std::latch done(kThreads * kPerThread);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      SeededRandom random(50 + t);
      for (int i = 0; i < kPerThread; ++i) {
        store_->AppendEvent(MakeEvent(clock_, random), [&](Result<AppendResult> r) {
          (r.ok() ? ok : failed).fetch_add(1);
          done.count_down();
        });
      }
    });
  }
  for (std::thread& t : threads) t.join();
  done.wait();
  EXPECT_EQ(failed.load(), kFaults);
  EXPECT_EQ(ok.load(), kThreads * kPerThread - kFaults);
  EXPECT_EQ(Scheduled(), kThreads * kPerThread - kFaults);
}

TEST_F(FaultInjectingStoreTest, OwnsTheStoreItWraps) {
  hookrelay::testing::TempDir dir;
  Result<std::unique_ptr<Store>> s = OpenSqliteStore({.dir = dir.path()}, clock_);
  ASSERT_TRUE(s.ok());
  FaultInjectingStore owning(std::move(*s));
  Result<AppendResult> e = owning.AppendEventSync(MakeEvent(clock_, random_));
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(owning.target().GetEvent(e->id)->has_value());
}

}  // namespace
}  // namespace hookrelay::store
