// The behaviour every Store implementation must show. Each implementation is one
// INSTANTIATE_TEST_SUITE_P line at the bottom: SQLite (alone and behind the fault injector) and
// PostgreSQL (a fresh database per store in a private cluster, tests/support/pg_cluster.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/id.h"
#include "common/random.h"
#include "conformance/store_test_util.h"
#include "store/open_store.h"
#include "store/postgres/postgres_store.h"
#include "store/sqlite/sqlite_store.h"
#include "store/store.h"
#include "support/fault_injecting_store.h"
#include "support/pg_cluster.h"
#include "support/process.h"

namespace hookrelay::store {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using test::BinaryBody;
using test::MakeEvent;
using test::RandomBytes;

struct StoreFactory {
  std::string name;
  // Opens a store whose data lives in `dir` (a fresh, empty directory).
  std::function<Result<std::unique_ptr<Store>>(const std::string& dir, const Clock& clock)> open;
};

void PrintTo(const StoreFactory& f, std::ostream* os) { *os << f.name; }

class StoreConformanceTest : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<Store>> s = GetParam().open(dir_.path(), clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }

  // Appends `e` and returns the id the store gave it; fails the test when the append fails or
  // was a duplicate.
  std::string Append(NewEvent e) {
    Result<AppendResult> r = store_->AppendEventSync(std::move(e));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return "";
    EXPECT_FALSE(r->duplicate);
    EXPECT_EQ(r->id.size(), 26u) << r->id;
    return r->id;
  }

  std::vector<Delivery> Deliveries(const std::string& event_id) {
    Result<std::vector<Delivery>> d = store_->GetDeliveries(event_id);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : std::vector<Delivery>{};
  }

  std::vector<Delivery> Claim(TimePoint now, int limit, Duration lease, const std::string& owner,
                              const std::string& destination = "") {
    Result<std::vector<Delivery>> d = store_->ClaimDue(now, limit, lease, owner, destination);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : std::vector<Delivery>{};
  }

  std::vector<std::string> ListIds(const EventFilter& filter, int limit = 100) {
    Result<EventPage> page = store_->ListEvents(filter, "", limit);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    std::vector<std::string> ids;
    if (page.ok()) {
      for (const Event& e : page->items) ids.push_back(e.id);
    }
    return ids;
  }

  int64_t Count(DeliveryStatus s) {
    Result<int64_t> n = store_->CountDeliveries(s);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return n.ok() ? *n : -1;
  }

  hookrelay::testing::TempDir dir_;
  FakeClock clock_;
  SeededRandom random_{42};
  std::unique_ptr<Store> store_;
};

TEST_P(StoreConformanceTest, AppendThenGetIsByteIdentical) {
  const std::vector<std::string> bodies = {
      BinaryBody(),
      "h\xc3\xa9llo \xe2\x80\x94 \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x8e\x89",  // UTF-8
      "",
      RandomBytes(random_, 5 * 1024 * 1024),
  };
  for (const std::string& body : bodies) {
    NewEvent e = MakeEvent(clock_, random_, body);
    e.headers = {
        {"X-Empty", ""}, {"X-Dup", "1"}, {"X-Dup", "2"}, {"X-Bin", std::string("a\0b", 3)}};
    e.content_type = "application/octet-stream";
    e.dedup_key = "key-" + std::to_string(body.size());
    e.dedup_window = minutes(5);
    std::string id = Append(e);
    Result<std::optional<Event>> got = store_->GetEvent(id);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_TRUE(got->has_value());
    const Event& g = **got;
    EXPECT_EQ(g.id, id);
    EXPECT_EQ(g.source, e.source);
    EXPECT_EQ(g.received_at, e.received_at);
    EXPECT_EQ(g.headers, e.headers);
    EXPECT_EQ(g.content_type, e.content_type);
    EXPECT_EQ(g.body.size(), body.size());
    EXPECT_TRUE(g.body == body) << "body differs (size " << body.size() << ")";
    EXPECT_EQ(g.size, static_cast<int64_t>(body.size()));
    EXPECT_EQ(g.dedup_key, e.dedup_key);
    clock_.Advance(milliseconds(1));
  }
}

TEST_P(StoreConformanceTest, GetUnknownEventIsEmpty) {
  Result<std::optional<Event>> got = store_->GetEvent("01JNOSUCHEVENT0000000000000");
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
  Result<std::vector<Delivery>> d = store_->GetDeliveries("01JNOSUCHEVENT0000000000000");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->empty());
}

TEST_P(StoreConformanceTest, GetEventsAnswersInOrderWithGaps) {
  const std::string a = Append(MakeEvent(clock_, random_, "first", {"billing"}));
  clock_.Advance(milliseconds(1));
  const std::string b = Append(MakeEvent(clock_, random_, BinaryBody(), {"billing"}));
  Result<std::vector<std::optional<Event>>> got =
      store_->GetEvents({b, "01JNOSUCHEVENT0000000000000", a, "not an id", b});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 5u);
  ASSERT_TRUE((*got)[0].has_value());
  EXPECT_EQ((*got)[0]->id, b);
  EXPECT_EQ((*got)[0]->body, BinaryBody());
  EXPECT_FALSE((*got)[1].has_value());
  ASSERT_TRUE((*got)[2].has_value());
  EXPECT_EQ((*got)[2]->id, a);
  EXPECT_EQ((*got)[2]->body, "first");
  EXPECT_EQ((*got)[2]->headers.size(), (*store_->GetEvent(a))->headers.size());
  EXPECT_FALSE((*got)[3].has_value());
  ASSERT_TRUE((*got)[4].has_value());
  EXPECT_EQ((*got)[4]->id, b);
  Result<std::vector<std::optional<Event>>> none = store_->GetEvents({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  // The store still answers afterwards (a reader's transaction was ended).
  EXPECT_TRUE(store_->GetEvent(a).ok());
  EXPECT_EQ(Append(MakeEvent(clock_, random_, "third", {"billing"})).size(), 26u);
}

TEST_P(StoreConformanceTest, FanOutCreatesOneDeliveryPerRoute) {
  NewEvent e = MakeEvent(clock_, random_, "{}", {"billing", "crm", "audit"});
  e.deliveries[1].max_attempts = 10;
  e.deliveries[1].next_attempt_at = clock_.Now() + seconds(7);
  e.deliveries[2].status = DeliveryStatus::kPaused;
  e.deliveries[2].reason = "destination paused";
  std::string id = Append(e);
  std::vector<Delivery> d = Deliveries(id);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].destination, "billing");
  EXPECT_EQ(d[1].destination, "crm");
  EXPECT_EQ(d[2].destination, "audit");
  for (const Delivery& x : d) {
    EXPECT_EQ(x.event_id, id);
    EXPECT_EQ(x.chain, 0);
    EXPECT_EQ(x.attempts, 0);
    EXPECT_FALSE(x.lease_until.has_value());
    EXPECT_EQ(x.created_at, clock_.Now());
  }
  EXPECT_EQ(d[0].status, DeliveryStatus::kScheduled);
  EXPECT_EQ(d[0].max_attempts, 5);
  EXPECT_EQ(d[0].next_attempt_at, clock_.Now());
  EXPECT_EQ(d[1].max_attempts, 10);
  EXPECT_EQ(d[1].next_attempt_at, clock_.Now() + seconds(7));
  EXPECT_EQ(d[2].status, DeliveryStatus::kPaused);
  EXPECT_EQ(d[2].reason, "destination paused");
  EXPECT_NE(d[0].id, d[1].id);
  EXPECT_EQ(Count(DeliveryStatus::kScheduled), 2);
  EXPECT_EQ(Count(DeliveryStatus::kPaused), 1);
}

TEST_P(StoreConformanceTest, DuplicateKeyWithinWindowReturnsEarlierEvent) {
  NewEvent first = MakeEvent(clock_, random_, "first");
  first.dedup_key = "evt_1";
  first.dedup_window = hours(1);
  std::string first_id = Append(first);

  clock_.Advance(minutes(30));
  NewEvent again = MakeEvent(clock_, random_, "again");
  again.dedup_key = "evt_1";
  again.dedup_window = hours(1);
  Result<AppendResult> r = store_->AppendEventSync(again);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->duplicate);
  EXPECT_EQ(r->id, first_id);
  // Nothing of the duplicate was stored.
  EXPECT_EQ(ListIds({}), std::vector<std::string>{first_id});
  EXPECT_EQ(Count(DeliveryStatus::kScheduled), 1);
  EXPECT_EQ((*store_->GetEvent(first_id))->body, "first");

  // The same key from another source is another event.
  NewEvent other = MakeEvent(clock_, random_, "other", {"billing"}, "github");
  other.dedup_key = "evt_1";
  other.dedup_window = hours(1);
  Append(other);
}

TEST_P(StoreConformanceTest, DuplicateKeyAfterWindowIsNewEvent) {
  NewEvent first = MakeEvent(clock_, random_);
  first.dedup_key = "evt_1";
  first.dedup_window = hours(1);
  std::string first_id = Append(first);

  clock_.Advance(hours(1) + milliseconds(1));
  NewEvent later = MakeEvent(clock_, random_);
  later.dedup_key = "evt_1";
  later.dedup_window = hours(1);
  std::string later_id = Append(later);
  EXPECT_NE(later_id, first_id);
  EXPECT_EQ(Count(DeliveryStatus::kScheduled), 2);
}

TEST_P(StoreConformanceTest, ConcurrentAppendsWithOneKeyStoreOneEvent) {
  constexpr int kN = 20;
  std::latch done(kN);
  std::mutex mu;
  std::vector<Result<AppendResult>> results;
  for (int i = 0; i < kN; ++i) {
    NewEvent e = MakeEvent(clock_, random_, "same");
    e.dedup_key = "once";
    e.dedup_window = minutes(5);
    store_->AppendEvent(std::move(e), [&](Result<AppendResult> r) {
      {
        std::lock_guard<std::mutex> lock(mu);
        results.push_back(std::move(r));
      }
      done.count_down();
    });
  }
  done.wait();
  int stored = 0;
  std::set<std::string> ids;
  for (const Result<AppendResult>& r : results) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (!r->duplicate) ++stored;
    ids.insert(r->id);
  }
  EXPECT_EQ(stored, 1);
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(Count(DeliveryStatus::kScheduled), 1);
}

// The store assigns event ids (issue 13; they used to be the caller's): opaque 26-character
// strings, strictly increasing in the order events are appended (so pages and time ranges are key
// ranges), unique even for events received in the same millisecond or after the clock stepped
// back, and each one finds its event again.
TEST_P(StoreConformanceTest, EventIdsAreAssignedTimeOrderedAndUnique) {
  std::vector<std::string> ids;
  std::vector<std::string> bodies;
  for (int i = 0; i < 5; ++i) {  // the same millisecond
    bodies.push_back("same ms " + std::to_string(i));
    ids.push_back(Append(MakeEvent(clock_, random_, bodies.back())));
  }
  clock_.Advance(seconds(1));
  bodies.push_back("a second later");
  ids.push_back(Append(MakeEvent(clock_, random_, bodies.back())));
  clock_.Set(clock_.Now() - minutes(1));  // the clock steps back
  bodies.push_back("after the step back");
  ids.push_back(Append(MakeEvent(clock_, random_, bodies.back())));
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]) << i;
  for (size_t i = 0; i < ids.size(); ++i) {
    Result<std::optional<Event>> got = store_->GetEvent(ids[i]);
    ASSERT_TRUE(got.ok() && got->has_value()) << ids[i];
    EXPECT_EQ((*got)->id, ids[i]);
    EXPECT_EQ((*got)->body, bodies[i]);
    EXPECT_EQ(Deliveries(ids[i]).size(), 1u);
    EXPECT_EQ(Deliveries(ids[i])[0].event_id, ids[i]);
  }
  // The step back changed the order of neither ids nor the list.
  std::vector<std::string> newest_first(ids.rbegin(), ids.rend());
  EXPECT_EQ(ListIds({}), newest_first);
  // Strings that are no id of this store find nothing (and fail nothing).
  for (const char* other :
       {"01JDZ8X4AC1N4G0Y5K6M7P8Q9R", "", "nope", "01jdz8x4ac0000000000000001"}) {
    Result<std::optional<Event>> got = store_->GetEvent(other);
    ASSERT_TRUE(got.ok()) << other;
    EXPECT_FALSE(got->has_value()) << other;
    EXPECT_TRUE(Deliveries(other).empty()) << other;
  }
}

// since/until select by the time events were received: [since, until), a range of keys.
TEST_P(StoreConformanceTest, ListByTimeRange) {
  const TimePoint t0 = clock_.Now();
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    ids.push_back(Append(MakeEvent(clock_, random_)));
    clock_.Advance(seconds(10));
  }
  // Received at t0, t0+10s, …, t0+50s.
  EXPECT_EQ(ListIds({.since = t0 + seconds(10), .until = t0 + seconds(30)}),
            (std::vector<std::string>{ids[2], ids[1]}));
  EXPECT_EQ(ListIds({.since = t0 + seconds(15)}),
            (std::vector<std::string>{ids[5], ids[4], ids[3], ids[2]}));
  EXPECT_EQ(ListIds({.until = t0 + seconds(1)}), std::vector<std::string>{ids[0]});
  EXPECT_TRUE(ListIds({.since = t0 + seconds(51)}).empty());
  EXPECT_TRUE(ListIds({.since = t0 + seconds(30), .until = t0 + seconds(30)}).empty());
  // With a cursor, the range still holds.
  Result<EventPage> p1 = store_->ListEvents({.since = t0 + seconds(10)}, "", 2);
  ASSERT_TRUE(p1.ok());
  ASSERT_EQ(p1->items.size(), 2u);
  Result<EventPage> p2 = store_->ListEvents({.since = t0 + seconds(10)}, p1->next_cursor, 10);
  ASSERT_TRUE(p2.ok());
  ASSERT_EQ(p2->items.size(), 3u);
  EXPECT_EQ(p2->items.back().id, ids[1]);
}

TEST_P(StoreConformanceTest, ConcurrentAppendsAllSucceedWithDistinctIds) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 200;
  std::latch done(kThreads * kPerThread);
  std::mutex mu;
  std::set<std::string> ids;
  int failures = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      SeededRandom random(1000 + t);
      for (int i = 0; i < kPerThread; ++i) {
        store_->AppendEvent(MakeEvent(clock_, random, std::string(100, 'x')),
                            [&](Result<AppendResult> r) {
                              {
                                std::lock_guard<std::mutex> lock(mu);
                                if (r.ok() && !r->duplicate) {
                                  ids.insert(r->id);
                                } else {
                                  ++failures;
                                }
                              }
                              done.count_down();
                            });
      }
    });
  }
  for (std::thread& t : threads) t.join();
  done.wait();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(Count(DeliveryStatus::kScheduled), kThreads * kPerThread);
}

TEST_P(StoreConformanceTest, ClaimDueTakesOldestFirstUpToLimit) {
  const TimePoint t0 = clock_.Now();
  std::vector<std::string> ids;
  for (Duration due : std::vector<Duration>{seconds(3), seconds(1), seconds(2), hours(1)}) {
    NewEvent e = MakeEvent(clock_, random_);
    e.deliveries[0].next_attempt_at = t0 + due;
    ids.push_back(Append(e));
  }
  ASSERT_EQ(*store_->NextDueAt(), t0 + seconds(1));

  clock_.Advance(seconds(10));
  const TimePoint now = clock_.Now();
  std::vector<Delivery> first = Claim(now, 2, seconds(30), "sender-a");
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].event_id, ids[1]);
  EXPECT_EQ(first[1].event_id, ids[2]);
  for (const Delivery& d : first) {
    EXPECT_EQ(d.status, DeliveryStatus::kDelivering);
    EXPECT_EQ(d.lease_until, now + seconds(30));
    EXPECT_EQ(d.lease_owner, "sender-a");
  }
  // What the claim returned is what is stored.
  EXPECT_EQ(Deliveries(ids[1])[0].status, DeliveryStatus::kDelivering);
  EXPECT_EQ(Deliveries(ids[1])[0].lease_owner, "sender-a");

  std::vector<Delivery> second = Claim(now, 10, seconds(30), "sender-a");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].event_id, ids[0]);
  EXPECT_TRUE(Claim(now, 10, seconds(30), "sender-a").empty());
  EXPECT_EQ(*store_->NextDueAt(), t0 + hours(1));
  EXPECT_EQ(Count(DeliveryStatus::kDelivering), 3);
  EXPECT_EQ(Count(DeliveryStatus::kScheduled), 1);
  EXPECT_TRUE(Claim(now, 0, seconds(30), "sender-a").empty());
}

TEST_P(StoreConformanceTest, ExpiredLeaseIsClaimedAgain) {
  std::string id = Append(MakeEvent(clock_, random_));
  const TimePoint t0 = clock_.Now();
  std::vector<Delivery> a = Claim(t0, 10, seconds(30), "sender-a");
  ASSERT_EQ(a.size(), 1u);

  EXPECT_TRUE(Claim(t0 + seconds(29), 10, seconds(30), "sender-b").empty());
  std::vector<Delivery> b = Claim(t0 + seconds(30), 10, seconds(30), "sender-b");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].id, a[0].id);
  EXPECT_EQ(b[0].lease_owner, "sender-b");
  EXPECT_EQ(b[0].lease_until, t0 + seconds(60));

  // The crashed sender's late report is refused; the new owner's is taken.
  Attempt attempt{a[0].id, 1, t0, 10, 200, std::nullopt, std::nullopt, "ok"};
  DeliveryUpdate update{DeliveryStatus::kDelivered, t0};
  Status late = store_->RecordAttempt(attempt, update, "sender-a");
  EXPECT_EQ(late.code(), Status::Code::kFailedPrecondition) << late.ToString();
  EXPECT_TRUE(store_->RecordAttempt(attempt, update, "sender-b").ok());
  EXPECT_EQ(Deliveries(id)[0].status, DeliveryStatus::kDelivered);
}

// A claim given back (the destination was paused while it ran) is claimable again at once, as it
// was; another owner cannot give back what it does not hold.
TEST_P(StoreConformanceTest, ReleasedClaimsAreClaimableAgain) {
  std::string id = Append(MakeEvent(clock_, random_));
  const TimePoint t0 = clock_.Now();
  std::vector<Delivery> a = Claim(t0, 10, seconds(30), "sender-a");
  ASSERT_EQ(a.size(), 1u);
  Result<int64_t> other = store_->ReleaseClaims({a[0].id}, "sender-b");
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(*other, 0);
  EXPECT_TRUE(Claim(t0, 10, seconds(30), "sender-b").empty());  // still held by sender-a

  Result<int64_t> released = store_->ReleaseClaims({a[0].id, a[0].id + 1000}, "sender-a");
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  EXPECT_EQ(*released, 1);
  EXPECT_EQ(Deliveries(id)[0].attempts, 0);  // no attempt recorded
  std::vector<Delivery> b = Claim(t0, 10, seconds(30), "sender-b");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].id, a[0].id);
  EXPECT_EQ(b[0].lease_owner, "sender-b");
  // sender-a's late report is refused: it gave the claim back.
  Attempt attempt{a[0].id, 1, t0, 10, 200, std::nullopt, std::nullopt, "ok"};
  EXPECT_EQ(store_->RecordAttempt(attempt, {DeliveryStatus::kDelivered, t0}, "sender-a").code(),
            Status::Code::kFailedPrecondition);
}

// A claim given back after a replay replaced its chain (the destination was paused between the
// claim and the send): the old chain is not claimable again, or the event would go out twice
// (once through the replay); it is failed with the replay as the reason, as when a replay stops
// a chain waiting for a retry.
TEST_P(StoreConformanceTest, AClaimReleasedAfterAReplayReplacedItIsNotSentAgain) {
  std::string id = Append(MakeEvent(clock_, random_));
  const TimePoint t0 = clock_.Now();
  std::vector<Delivery> a = Claim(t0, 10, seconds(30), "sender-a");
  ASSERT_EQ(a.size(), 1u);
  Result<Delivery> replay = store_->CreateReplay(id, "billing", 5, t0 + seconds(60));
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  Result<int64_t> released = store_->ReleaseClaims({a[0].id}, "sender-a");
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  EXPECT_EQ(*released, 1);
  // Nothing is due now (the replay is due in a minute); later, only the replay's chain.
  EXPECT_TRUE(Claim(t0, 10, seconds(30), "sender-b").empty());
  std::vector<Delivery> later = Claim(t0 + seconds(61), 10, seconds(30), "sender-b");
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].id, replay->id);
  for (const Delivery& d : Deliveries(id)) {
    if (d.id != a[0].id) continue;
    EXPECT_EQ(d.status, DeliveryStatus::kFailed);
    ASSERT_TRUE(d.reason.has_value());
    EXPECT_NE(d.reason->find("replay"), std::string::npos) << *d.reason;
    EXPECT_EQ(d.attempts, 0);
  }
}

// Issue 12: the per-minute counters behind GET /api/v1/stats move with ingest and attempts, in
// their minutes, per destination; a refused attempt (lease gone) counts nothing.
TEST_P(StoreConformanceTest, StatsCountReceivedAndOutcomesPerMinute) {
  const TimePoint start = std::chrono::floor<minutes>(clock_.Now()) + minutes(10);
  clock_.Advance(start - clock_.Now());
  Append(MakeEvent(clock_, random_, "{}", {"billing", "crm"}));
  Append(MakeEvent(clock_, random_, "{}", {"billing"}));
  std::vector<Delivery> claimed = Claim(clock_.Now(), 10, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 3u);
  clock_.Advance(minutes(1));
  const TimePoint t1 = clock_.Now();
  // billing: one delivered, one retrying; crm: failed for good.
  for (const Delivery& d : claimed) {
    const bool ok = d.destination == "billing" && d.event_id == claimed[0].event_id;
    Attempt a{d.id, 1, t1, 5, ok ? 200 : 500, std::nullopt, std::nullopt, ""};
    DeliveryUpdate u{
        ok ? DeliveryStatus::kDelivered
           : (d.destination == "crm" ? DeliveryStatus::kFailed : DeliveryStatus::kScheduled),
        t1 + minutes(5)};
    ASSERT_TRUE(store_->RecordAttempt(a, u, "s").ok());
    // Already recorded: refused, and not counted again.
    EXPECT_FALSE(store_->RecordAttempt(a, u, "s").ok());
  }
  Result<std::vector<StatsRow>> rows = store_->GetStats(start - hours(1), t1 + minutes(1));
  if (!rows.ok() && rows.status().code() == Status::Code::kUnavailable) {
    GTEST_SKIP() << "this store keeps no statistics";
  }
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  const int64_t m0 = std::chrono::duration_cast<minutes>(start.time_since_epoch()).count();
  std::map<std::pair<int64_t, std::string>, StatsRow> by;
  for (const StatsRow& r : *rows) by[{r.minute, r.destination}] = r;
  ASSERT_EQ(by.size(), 3u);
  EXPECT_EQ((by[{m0, ""}].received), 2);
  const StatsRow billing = by[{m0 + 1, "billing"}];
  EXPECT_EQ(billing.attempts, 2);
  EXPECT_EQ(billing.attempt_failures, 1);
  EXPECT_EQ(billing.delivered, 1);
  EXPECT_EQ(billing.failed, 0);
  const StatsRow crm = by[{m0 + 1, "crm"}];
  EXPECT_EQ(crm.attempts, 1);
  EXPECT_EQ(crm.failed, 1);
  EXPECT_EQ(crm.delivered, 0);
  // The range is by minute: an hour later, nothing.
  rows = store_->GetStats(t1 + hours(1), t1 + hours(2));
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
  // Retention drops minutes older than 8 days (the API reads at most 7), and keeps newer ones.
  clock_.Advance(std::chrono::days(8));  // now: minute m0 + 1 + 8 days
  ASSERT_TRUE(store_->PurgeEventsBefore(start - hours(1), 100).ok());
  rows = store_->GetStats(start - hours(1), t1 + minutes(1));
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 2u) << "minute " << m0 << " is past 8 days, " << m0 + 1 << " is not";
}

// Issue 32.2: a failed breaker probe is recorded as an attempt, marked as a probe and not
// counted: the delivery's attempts (toward max_attempts) stay, uncounted_attempts counts it, and
// the next attempt is numbered after it. Both in one RecordAttempts batch and alone.
TEST_P(StoreConformanceTest, AnUncountedProbeIsRecordedButNotCounted) {
  std::string id = Append(MakeEvent(clock_, random_));
  const TimePoint t0 = clock_.Now();
  const DeliveryUpdate retry{
      DeliveryStatus::kScheduled, t0, t0 + hours(1), t0, minutes(1), "waiting"};
  auto record = [&](int n, bool probe, bool counted) {
    std::vector<Delivery> claimed = Claim(clock_.Now(), 1, seconds(30), "s");
    EXPECT_EQ(claimed.size(), 1u);
    if (claimed.empty()) return;
    Attempt a{claimed[0].id, n, clock_.Now(), 5, 503, std::nullopt, std::nullopt, "busy"};
    a.probe = probe;
    a.counted = counted;
    std::vector<Status> st = store_->RecordAttempts({{a, retry}}, "s");
    ASSERT_EQ(st.size(), 1u);
    EXPECT_TRUE(st[0].ok()) << st[0].ToString();
  };
  record(1, false, true);
  record(2, true, false);
  Delivery d = Deliveries(id)[0];
  EXPECT_EQ(d.attempts, 1);
  EXPECT_EQ(d.uncounted_attempts, 1);
  record(3, true, false);
  record(4, true, true);  // a probe that counts (its outcome was the delivery's own)
  d = Deliveries(id)[0];
  EXPECT_EQ(d.attempts, 2);
  EXPECT_EQ(d.uncounted_attempts, 2);
  std::vector<Delivery> claimed = Claim(clock_.Now(), 1, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].attempts, 2);
  EXPECT_EQ(claimed[0].uncounted_attempts, 2);
  Attempt a5{claimed[0].id, 5, clock_.Now(), 5, 200, std::nullopt, std::nullopt, ""};
  ASSERT_TRUE(store_
                  ->RecordAttempt(a5,
                                  {DeliveryStatus::kDelivered, clock_.Now(), std::nullopt, t0,
                                   Duration(0), std::nullopt},
                                  "s")
                  .ok());
  d = Deliveries(id)[0];
  EXPECT_EQ(d.attempts, 3);
  EXPECT_EQ(d.uncounted_attempts, 2);
  Result<std::vector<Attempt>> attempts = store_->GetAttempts(d.id);
  ASSERT_TRUE(attempts.ok()) << attempts.status().ToString();
  ASSERT_EQ(attempts->size(), 5u);
  const bool probes[] = {false, true, true, true, false};
  const bool counted[] = {true, false, false, true, true};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ((*attempts)[i].n, static_cast<int>(i + 1));
    EXPECT_EQ((*attempts)[i].probe, probes[i]) << i;
    EXPECT_EQ((*attempts)[i].counted, counted[i]) << i;
  }
}

TEST_P(StoreConformanceTest, RecordAttemptStoresAttemptAndNewState) {
  std::string id = Append(MakeEvent(clock_, random_));
  TimePoint t0 = clock_.Now();
  std::vector<Delivery> claimed = Claim(t0, 1, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 1u);
  const int64_t did = claimed[0].id;

  Attempt a1{did, 1, t0, 12, 500, std::nullopt, "120", BinaryBody()};
  DeliveryUpdate u1{
      DeliveryStatus::kScheduled, t0 + minutes(5), t0 + hours(1), t0, minutes(5), std::nullopt};
  clock_.Advance(milliseconds(12));
  ASSERT_TRUE(store_->RecordAttempt(a1, u1, "s").ok());
  Delivery d = Deliveries(id)[0];
  EXPECT_EQ(d.status, DeliveryStatus::kScheduled);
  EXPECT_EQ(d.attempts, 1);
  EXPECT_EQ(d.next_attempt_at, t0 + minutes(5));
  EXPECT_EQ(d.deadline, t0 + hours(1));
  EXPECT_EQ(d.first_failure_at, t0);
  EXPECT_EQ(d.last_delay, minutes(5));
  EXPECT_FALSE(d.reason.has_value());
  EXPECT_FALSE(d.lease_until.has_value());
  EXPECT_EQ(d.lease_owner, "");
  EXPECT_EQ(d.updated_at, clock_.Now());

  // The lease is gone: a second report for it is refused.
  EXPECT_EQ(store_->RecordAttempt(a1, u1, "s").code(), Status::Code::kFailedPrecondition);

  clock_.Advance(minutes(5));
  claimed = Claim(clock_.Now(), 1, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 1u);
  Attempt a2{did, 2, clock_.Now(), 3, std::nullopt, "timeout", std::nullopt, ""};
  DeliveryUpdate u2{DeliveryStatus::kFailed, clock_.Now(), t0 + hours(1), t0, Duration(0),
                    "gave up: timeout"};
  ASSERT_TRUE(store_->RecordAttempt(a2, u2, "s").ok());
  d = Deliveries(id)[0];
  EXPECT_EQ(d.status, DeliveryStatus::kFailed);
  EXPECT_EQ(d.attempts, 2);
  EXPECT_EQ(d.reason, "gave up: timeout");

  Result<std::vector<Attempt>> attempts = store_->GetAttempts(did);
  ASSERT_TRUE(attempts.ok());
  ASSERT_EQ(attempts->size(), 2u);
  const Attempt& g1 = (*attempts)[0];
  EXPECT_EQ(g1.delivery_id, did);
  EXPECT_EQ(g1.n, 1);
  EXPECT_EQ(g1.started_at, t0);
  EXPECT_EQ(g1.duration_ms, 12);
  EXPECT_EQ(g1.status_code, 500);
  EXPECT_FALSE(g1.error.has_value());
  EXPECT_EQ(g1.retry_after, "120");
  EXPECT_TRUE(g1.response_snippet == BinaryBody());
  const Attempt& g2 = (*attempts)[1];
  EXPECT_EQ(g2.n, 2);
  EXPECT_FALSE(g2.status_code.has_value());
  EXPECT_EQ(g2.error, "timeout");
  EXPECT_FALSE(g2.retry_after.has_value());
  EXPECT_EQ(g2.response_snippet, "");
}

TEST_P(StoreConformanceTest, RecordAttemptByAnotherOwnerIsRefused) {
  std::string id = Append(MakeEvent(clock_, random_));
  std::vector<Delivery> claimed = Claim(clock_.Now(), 1, seconds(30), "sender-a");
  ASSERT_EQ(claimed.size(), 1u);
  Attempt a{claimed[0].id, 1, clock_.Now(), 5, 200, std::nullopt, std::nullopt, ""};
  DeliveryUpdate u{DeliveryStatus::kDelivered, clock_.Now()};
  Status s = store_->RecordAttempt(a, u, "sender-b");
  EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition) << s.ToString();
  Delivery d = Deliveries(id)[0];
  EXPECT_EQ(d.status, DeliveryStatus::kDelivering);
  EXPECT_EQ(d.lease_owner, "sender-a");
  EXPECT_EQ(d.attempts, 0);
  EXPECT_TRUE(store_->GetAttempts(claimed[0].id)->empty());

  // A delivery that was never claimed cannot be reported either.
  std::string other = Append(MakeEvent(clock_, random_));
  a.delivery_id = Deliveries(other)[0].id;
  EXPECT_EQ(store_->RecordAttempt(a, u, "sender-a").code(), Status::Code::kFailedPrecondition);
  a.delivery_id = 987654;
  EXPECT_EQ(store_->RecordAttempt(a, u, "sender-a").code(), Status::Code::kNotFound);
}

TEST_P(StoreConformanceTest, RecordAttemptsRecordsEachAndRefusesWhatIsNotLeased) {
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(Append(MakeEvent(clock_, random_)));
  const TimePoint t0 = clock_.Now();
  std::vector<Delivery> claimed = Claim(t0, 3, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 3u);
  const int64_t unclaimed = Deliveries(ids[3])[0].id;
  EXPECT_TRUE(store_->RecordAttempts({}, "s").empty());

  clock_.Advance(milliseconds(7));
  std::vector<AttemptRecord> batch = {
      {{claimed[0].id, 1, t0, 4, 200, std::nullopt, std::nullopt, "ok"},
       {DeliveryStatus::kDelivered, t0}},
      {{unclaimed, 1, t0, 4, 200, std::nullopt, std::nullopt, ""},
       {DeliveryStatus::kDelivered, t0}},
      {{claimed[1].id, 1, t0, 6, 503, std::nullopt, "30", "busy"},
       {DeliveryStatus::kScheduled, t0 + seconds(30), t0 + hours(1), t0, seconds(30),
        "attempt 1 of 5 failed: 503"}},
      {{987654, 1, t0, 1, 200, std::nullopt, std::nullopt, ""}, {DeliveryStatus::kDelivered, t0}},
      {{claimed[2].id, 1, t0, 9, std::nullopt, "timeout", std::nullopt, ""},
       {DeliveryStatus::kFailed, t0, std::nullopt, t0, Duration(0), "gave up: timeout"}},
  };
  std::vector<Status> st = store_->RecordAttempts(batch, "s");
  ASSERT_EQ(st.size(), batch.size());
  EXPECT_TRUE(st[0].ok()) << st[0].ToString();
  EXPECT_EQ(st[1].code(), Status::Code::kFailedPrecondition) << st[1].ToString();
  EXPECT_TRUE(st[2].ok()) << st[2].ToString();
  EXPECT_EQ(st[3].code(), Status::Code::kNotFound) << st[3].ToString();
  EXPECT_TRUE(st[4].ok()) << st[4].ToString();

  Delivery d0 = Deliveries(ids[0])[0];
  EXPECT_EQ(d0.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(d0.attempts, 1);
  EXPECT_FALSE(d0.lease_until.has_value());
  EXPECT_EQ(d0.lease_owner, "");
  EXPECT_EQ(d0.updated_at, clock_.Now());
  Delivery d1 = Deliveries(ids[1])[0];
  EXPECT_EQ(d1.status, DeliveryStatus::kScheduled);
  EXPECT_EQ(d1.next_attempt_at, t0 + seconds(30));
  EXPECT_EQ(d1.deadline, t0 + hours(1));
  EXPECT_EQ(d1.first_failure_at, t0);
  EXPECT_EQ(d1.last_delay, seconds(30));
  EXPECT_EQ(d1.reason, "attempt 1 of 5 failed: 503");
  Delivery d2 = Deliveries(ids[2])[0];
  EXPECT_EQ(d2.status, DeliveryStatus::kFailed);
  EXPECT_EQ(d2.reason, "gave up: timeout");
  // The refused record wrote nothing.
  Delivery d3 = Deliveries(ids[3])[0];
  EXPECT_EQ(d3.status, DeliveryStatus::kScheduled);
  EXPECT_EQ(d3.attempts, 0);
  EXPECT_TRUE(store_->GetAttempts(unclaimed)->empty());

  Result<std::vector<Attempt>> a1 = store_->GetAttempts(claimed[1].id);
  ASSERT_TRUE(a1.ok());
  ASSERT_EQ(a1->size(), 1u);
  EXPECT_EQ((*a1)[0].status_code, 503);
  EXPECT_EQ((*a1)[0].retry_after, "30");
  EXPECT_EQ((*a1)[0].response_snippet, "busy");
  Result<std::vector<Attempt>> a2 = store_->GetAttempts(claimed[2].id);
  ASSERT_TRUE(a2.ok());
  ASSERT_EQ(a2->size(), 1u);
  EXPECT_EQ((*a2)[0].error, "timeout");
  EXPECT_EQ(Count(DeliveryStatus::kDelivering), 0);

  // Leases are gone now: the same batch again is refused record by record.
  st = store_->RecordAttempts({batch[0], batch[2]}, "s");
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(st[1].code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(store_->GetAttempts(claimed[0].id)->size(), 1u);
}

TEST_P(StoreConformanceTest, RecordAttemptsByAnotherOwnerIsRefused) {
  std::string id = Append(MakeEvent(clock_, random_));
  std::vector<Delivery> claimed = Claim(clock_.Now(), 1, seconds(30), "sender-a");
  ASSERT_EQ(claimed.size(), 1u);
  std::vector<Status> st = store_->RecordAttempts(
      {{{claimed[0].id, 1, clock_.Now(), 5, 200, std::nullopt, std::nullopt, ""},
        {DeliveryStatus::kDelivered, clock_.Now()}}},
      "sender-b");
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(Deliveries(id)[0].status, DeliveryStatus::kDelivering);
  EXPECT_TRUE(store_->GetAttempts(claimed[0].id)->empty());
}

TEST_P(StoreConformanceTest, PauseAndResumeDestination) {
  std::string b1 = Append(MakeEvent(clock_, random_, "1", {"billing"}));
  std::string b2 = Append(MakeEvent(clock_, random_, "2", {"billing"}));
  std::string b3 = Append(MakeEvent(clock_, random_, "3", {"billing"}));
  std::string c1 = Append(MakeEvent(clock_, random_, "4", {"crm"}));
  // One billing delivery is in flight: pausing does not touch it.
  NewEvent in_flight = MakeEvent(clock_, random_, "5", {"billing"});
  in_flight.deliveries[0].next_attempt_at = clock_.Now() - seconds(1);
  std::string b4 = Append(in_flight);
  ASSERT_EQ(Claim(clock_.Now(), 1, seconds(30), "s").size(), 1u);

  Result<int64_t> paused = store_->PauseDeliveries("billing", "paused by operator");
  ASSERT_TRUE(paused.ok()) << paused.status().ToString();
  EXPECT_EQ(*paused, 3);
  for (const std::string& id : {b1, b2, b3}) {
    Delivery d = Deliveries(id)[0];
    EXPECT_EQ(d.status, DeliveryStatus::kPaused);
    EXPECT_EQ(d.reason, "paused by operator");
  }
  EXPECT_EQ(Deliveries(b4)[0].status, DeliveryStatus::kDelivering);
  EXPECT_EQ(Deliveries(c1)[0].status, DeliveryStatus::kScheduled);
  EXPECT_EQ(Count(DeliveryStatus::kPaused), 3);
  EXPECT_EQ(*store_->PauseDeliveries("billing", "again"), 0);

  // Paused deliveries are not due, though their time has come.
  std::vector<Delivery> due = Claim(clock_.Now() + seconds(10), 10, seconds(30), "s");
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].event_id, c1);

  const TimePoint resume_at = clock_.Now() + minutes(3);
  Result<int64_t> resumed = store_->ResumeDeliveries("billing", resume_at);
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(*resumed, 3);
  for (const std::string& id : {b1, b2, b3}) {
    Delivery d = Deliveries(id)[0];
    EXPECT_EQ(d.status, DeliveryStatus::kScheduled);
    EXPECT_EQ(d.next_attempt_at, resume_at);
    EXPECT_FALSE(d.reason.has_value());
  }
  EXPECT_EQ(Count(DeliveryStatus::kPaused), 0);
  EXPECT_EQ(*store_->ResumeDeliveries("billing", resume_at), 0);
}

// Undoing a pause (decided on a stale copy of the breaker) keeps each delivery's due time: a
// retry an hour away is not sent now.
TEST_P(StoreConformanceTest, UnpausingKeepsEachDeliverysDueTime) {
  NewEvent retry = MakeEvent(clock_, random_, "1", {"billing"});
  const TimePoint retry_at = clock_.Now() + hours(1);
  retry.deliveries[0].next_attempt_at = retry_at;
  std::string later = Append(retry);
  std::string due_now = Append(MakeEvent(clock_, random_, "2", {"billing"}));
  const TimePoint due_at = Deliveries(due_now)[0].next_attempt_at;
  ASSERT_EQ(*store_->PauseDeliveries("billing", "circuit breaker open"), 2);

  const TimePoint now = clock_.Now() + minutes(1);
  Result<int64_t> unpaused = store_->UnpauseDeliveries("billing", now);
  ASSERT_TRUE(unpaused.ok()) << unpaused.status().ToString();
  EXPECT_EQ(*unpaused, 2);
  for (const auto& [id, at] : {std::pair{later, retry_at}, std::pair{due_now, due_at}}) {
    Delivery d = Deliveries(id)[0];
    EXPECT_EQ(d.status, DeliveryStatus::kScheduled);
    EXPECT_EQ(d.next_attempt_at, at);
    EXPECT_FALSE(d.reason.has_value());
  }
  std::vector<Delivery> claimed = Claim(now, 10, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].event_id, due_now);
  EXPECT_EQ(*store_->UnpauseDeliveries("billing", now), 0);
}

TEST_P(StoreConformanceTest, ReplayStartsNewChains) {
  std::string id = Append(MakeEvent(clock_, random_, "{}", {"billing", "crm"}));
  const TimePoint now = clock_.Now() + hours(2);
  Result<Delivery> r1 = store_->CreateReplay(id, "billing", 3, now);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(r1->event_id, id);
  EXPECT_EQ(r1->destination, "billing");
  EXPECT_EQ(r1->chain, 1);
  EXPECT_EQ(r1->status, DeliveryStatus::kScheduled);
  EXPECT_EQ(r1->attempts, 0);
  EXPECT_EQ(r1->max_attempts, 3);
  EXPECT_EQ(r1->next_attempt_at, now);
  EXPECT_EQ(r1->created_at, now);

  Result<Delivery> r2 = store_->CreateReplay(id, "billing", 3, now);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->chain, 2);
  EXPECT_NE(r2->id, r1->id);
  Result<Delivery> r3 = store_->CreateReplay(id, "crm", 3, now);
  ASSERT_TRUE(r3.ok());
  EXPECT_EQ(r3->chain, 1);

  std::vector<Delivery> all = Deliveries(id);
  ASSERT_EQ(all.size(), 5u);
  int billing_chains = 0;
  for (const Delivery& d : all) {
    if (d.destination == "billing") billing_chains |= 1 << d.chain;
  }
  EXPECT_EQ(billing_chains, 0b111);

  Result<Delivery> missing = store_->CreateReplay("01JNOSUCHEVENT0000000000000", "billing", 3, now);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
}

TEST_P(StoreConformanceTest, ListPagesNewestFirstAndStaysStableWhileEventsArrive) {
  std::vector<std::string> ids;  // oldest first
  for (int i = 0; i < 25; ++i) {
    ids.push_back(Append(MakeEvent(clock_, random_, std::string(i, 'b'))));
    clock_.Advance(seconds(1));
  }
  std::vector<std::string> newest_first(ids.rbegin(), ids.rend());

  Result<EventPage> p1 = store_->ListEvents({}, "", 10);
  ASSERT_TRUE(p1.ok()) << p1.status().ToString();
  ASSERT_EQ(p1->items.size(), 10u);
  EXPECT_FALSE(p1->next_cursor.empty());
  for (const Event& e : p1->items) {
    EXPECT_TRUE(e.body.empty());  // lists do not load bodies
    EXPECT_EQ(e.source, "stripe");
    EXPECT_EQ(e.headers.size(), 2u);
  }
  EXPECT_EQ(p1->items[0].size, 24);
  EXPECT_EQ(p1->items[9].size, 15);

  // Newer events arrive between pages: later pages do not shift.
  for (int i = 0; i < 5; ++i) {
    Append(MakeEvent(clock_, random_));
    clock_.Advance(seconds(1));
  }
  Result<EventPage> p2 = store_->ListEvents({}, p1->next_cursor, 10);
  ASSERT_TRUE(p2.ok());
  ASSERT_EQ(p2->items.size(), 10u);
  Result<EventPage> p3 = store_->ListEvents({}, p2->next_cursor, 10);
  ASSERT_TRUE(p3.ok());
  ASSERT_EQ(p3->items.size(), 5u);
  EXPECT_TRUE(p3->next_cursor.empty());

  std::vector<std::string> seen;
  for (const EventPage* p : {&*p1, &*p2, &*p3}) {
    for (const Event& e : p->items) seen.push_back(e.id);
  }
  EXPECT_EQ(seen, newest_first);

  // A page that ends exactly at the last event has no next cursor.
  Result<EventPage> all = store_->ListEvents({}, "", 30);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->items.size(), 30u);
  EXPECT_TRUE(all->next_cursor.empty());
}

TEST_P(StoreConformanceTest, ListFilters) {
  const TimePoint t0 = clock_.Now();
  std::string e1 = Append(MakeEvent(clock_, random_, "1", {"billing"}, "stripe"));
  clock_.Advance(seconds(1));
  std::string e2 = Append(MakeEvent(clock_, random_, "2", {"crm"}, "github"));
  clock_.Advance(seconds(1));
  std::string e3 = Append(MakeEvent(clock_, random_, "3", {"billing", "crm"}, "stripe"));
  // e1's delivery fails for good.
  std::vector<Delivery> claimed = Claim(t0, 1, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 1u);
  ASSERT_EQ(claimed[0].event_id, e1);
  ASSERT_TRUE(store_
                  ->RecordAttempt({claimed[0].id, 1, t0, 1, 410, std::nullopt, std::nullopt, ""},
                                  {DeliveryStatus::kFailed, t0, {}, t0, {}, "410 Gone"}, "s")
                  .ok());

  using V = std::vector<std::string>;
  EXPECT_EQ(ListIds({}), (V{e3, e2, e1}));
  EXPECT_EQ(ListIds({.source = "github"}), (V{e2}));
  EXPECT_EQ(ListIds({.source = "stripe"}), (V{e3, e1}));
  EXPECT_EQ(ListIds({.destination = "crm"}), (V{e3, e2}));
  EXPECT_EQ(ListIds({.status = DeliveryStatus::kFailed}), (V{e1}));
  EXPECT_EQ(ListIds({.status = DeliveryStatus::kScheduled}), (V{e3, e2}));
  // Status and destination together: one delivery must match both.
  EXPECT_EQ(ListIds({.status = DeliveryStatus::kFailed, .destination = "crm"}), V{});
  EXPECT_EQ(ListIds({.status = DeliveryStatus::kScheduled, .destination = "billing"}), (V{e3}));
  EXPECT_EQ(ListIds({.since = t0 + seconds(1)}), (V{e3, e2}));
  EXPECT_EQ(ListIds({.until = t0 + seconds(1)}), (V{e1}));
  EXPECT_EQ(ListIds({.since = t0 + seconds(1), .until = t0 + seconds(2)}), (V{e2}));
  EXPECT_EQ(ListIds({.source = "stripe", .destination = "billing", .since = t0 + seconds(1)}),
            (V{e3}));

  // Filters hold across pages.
  Result<EventPage> p = store_->ListEvents({.source = "stripe"}, "", 1);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->items.size(), 1u);
  EXPECT_EQ(p->items[0].id, e3);
  p = store_->ListEvents({.source = "stripe"}, p->next_cursor, 1);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->items.size(), 1u);
  EXPECT_EQ(p->items[0].id, e1);
  EXPECT_TRUE(p->next_cursor.empty());

  // The limit is clamped to [1, 1000].
  EXPECT_EQ(ListIds({}, 0).size(), 1u);
  EXPECT_EQ(ListIds({}, -5).size(), 1u);
  EXPECT_EQ(ListIds({}, 100000).size(), 3u);
}

// A delivery's status is that of its latest chain: filters, counts and the list agree on it.
// A replay replaces the chain it supersedes: a chain still waiting for a retry (or paused) is
// stopped, and one in flight is not retried once its attempt is recorded, so the event is not
// delivered twice (the old chain kept retrying beside the replay).
TEST_P(StoreConformanceTest, AReplayStopsTheChainItReplaces) {
  const TimePoint t0 = clock_.Now();
  const std::string waiting = Append(MakeEvent(clock_, random_, "1", {"billing"}));
  ASSERT_TRUE(store_->CreateReplay(waiting, "billing", 3, t0).ok());
  auto chains = store_->GetDeliveries(waiting);
  ASSERT_TRUE(chains.ok());
  ASSERT_EQ(chains->size(), 2u);
  for (const Delivery& d : *chains) {
    if (d.chain == 0) {
      EXPECT_EQ(d.status, DeliveryStatus::kFailed);
      ASSERT_TRUE(d.reason.has_value());
      EXPECT_NE(d.reason->find("replaced by replay chain 1"), std::string::npos) << *d.reason;
    } else {
      EXPECT_EQ(d.status, DeliveryStatus::kScheduled);
    }
  }
  std::vector<Delivery> claimed = Claim(t0, 10, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].chain, 1);

  // In flight when replayed: the attempt is recorded, and its retry is not scheduled.
  clock_.Advance(seconds(1));
  const std::string flying = Append(MakeEvent(clock_, random_, "2", {"crm"}));
  claimed = Claim(clock_.Now(), 10, seconds(30), "s", "crm");
  ASSERT_EQ(claimed.size(), 1u);
  ASSERT_TRUE(store_->CreateReplay(flying, "crm", 3, clock_.Now()).ok());
  const TimePoint retry_at = clock_.Now() + seconds(5);
  ASSERT_TRUE(
      store_
          ->RecordAttempt({claimed[0].id, 1, clock_.Now(), 1, 500, std::nullopt, std::nullopt, ""},
                          {DeliveryStatus::kScheduled, retry_at, {}, clock_.Now(), {}, {}}, "s")
          .ok());
  chains = store_->GetDeliveries(flying);
  ASSERT_TRUE(chains.ok());
  ASSERT_EQ(chains->size(), 2u);
  for (const Delivery& d : *chains) {
    if (d.chain != 0) continue;
    EXPECT_EQ(d.status, DeliveryStatus::kFailed);
    ASSERT_TRUE(d.reason.has_value());
    EXPECT_NE(d.reason->find("replaced by a replay"), std::string::npos) << *d.reason;
  }
  claimed = Claim(retry_at + seconds(1), 10, seconds(30), "s2", "crm");
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].chain, 1);
}

TEST_P(StoreConformanceTest, CurrentStatusIsThatOfTheLatestChain) {
  const TimePoint t0 = clock_.Now();
  const std::string e1 = Append(MakeEvent(clock_, random_, "1", {"billing", "crm"}));
  clock_.Advance(seconds(1));
  const std::string e2 = Append(MakeEvent(clock_, random_, "2", {"billing"}));
  // Both billing deliveries fail for good; e1's crm delivery is delivered.
  std::vector<Delivery> claimed = Claim(clock_.Now(), 10, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 3u);
  for (const Delivery& d : claimed) {
    const bool ok = d.destination == "crm";
    ASSERT_TRUE(
        store_
            ->RecordAttempt({d.id, 1, t0, 1, ok ? 200 : 500, std::nullopt, std::nullopt, ""},
                            {ok ? DeliveryStatus::kDelivered : DeliveryStatus::kFailed,
                             t0,
                             {},
                             t0,
                             {},
                             ok ? std::nullopt : std::optional<std::string>("x")},
                            "s")
            .ok());
  }
  using V = std::vector<std::string>;
  EXPECT_EQ(ListIds({.status = DeliveryStatus::kFailed}), (V{e2, e1}));
  EXPECT_EQ(Count(DeliveryStatus::kFailed), 2);

  // e1 is replayed to billing (one chain), e2 through a bulk batch: both leave the failed list.
  ASSERT_TRUE(store_->CreateReplay(e1, "billing", 3, clock_.Now()).ok());
  ASSERT_EQ(*store_->CreateReplays({{e2, "billing", 3, clock_.Now()}}), 1);
  EXPECT_EQ(ListIds({.status = DeliveryStatus::kFailed}), V{});
  EXPECT_EQ(ListIds({.status = DeliveryStatus::kFailed, .destination = "billing"}), V{});
  EXPECT_EQ(Count(DeliveryStatus::kFailed), 0);
  EXPECT_EQ(ListIds({.status = DeliveryStatus::kScheduled}), (V{e2, e1}));
  EXPECT_EQ(Count(DeliveryStatus::kScheduled), 2);

  // The replays are delivered: listed as delivered only.
  claimed = Claim(clock_.Now(), 10, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 2u);
  for (const Delivery& d : claimed) {
    EXPECT_EQ(d.chain, 1);
    ASSERT_TRUE(store_
                    ->RecordAttempt({d.id, 1, t0, 1, 200, std::nullopt, std::nullopt, ""},
                                    {DeliveryStatus::kDelivered, t0, {}, {}, {}, {}}, "s")
                    .ok());
  }
  EXPECT_EQ(ListIds({.status = DeliveryStatus::kFailed}), V{});
  EXPECT_EQ(ListIds({.status = DeliveryStatus::kDelivered}), (V{e2, e1}));
  EXPECT_EQ(Count(DeliveryStatus::kFailed), 0);
  EXPECT_EQ(Count(DeliveryStatus::kDelivered), 3);  // e1 billing and crm, e2 billing

  // The list carries each destination's current delivery; the history keeps every chain.
  Result<EventPage> page = store_->ListEvents({}, "", 10);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[1].id, e1);
  EXPECT_EQ(page->items[1].current,
            (std::vector<CurrentDelivery>{{"billing", DeliveryStatus::kDelivered, 1},
                                          {"crm", DeliveryStatus::kDelivered, 0}}));
  EXPECT_EQ(page->items[0].current,
            (std::vector<CurrentDelivery>{{"billing", DeliveryStatus::kDelivered, 1}}));
  EXPECT_EQ(Deliveries(e1).size(), 3u);
  Result<std::optional<Event>> got = store_->GetEvent(e1);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_TRUE((*got)->current.empty());

  // A second replay supersedes the first: still one current delivery per destination.
  ASSERT_TRUE(store_->CreateReplay(e1, "billing", 3, clock_.Now()).ok());
  EXPECT_EQ(ListIds({.status = DeliveryStatus::kDelivered}), (V{e2, e1}));  // e1 via crm
  EXPECT_EQ(ListIds({.status = DeliveryStatus::kDelivered, .destination = "billing"}), (V{e2}));
  EXPECT_EQ(Count(DeliveryStatus::kDelivered), 2);
  EXPECT_EQ(Count(DeliveryStatus::kScheduled), 1);
}

TEST_P(StoreConformanceTest, ListsRefuseCursorsTheyDidNotMake) {
  Append(MakeEvent(clock_, random_));
  for (const std::string& bad :
       std::vector<std::string>{"garbage", "01JNOSUCHEVENT", std::string(26, 'z')}) {
    Result<EventPage> events = store_->ListEvents({}, bad, 10);
    ASSERT_FALSE(events.ok()) << bad;
    EXPECT_EQ(events.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(events.status().field(), "cursor");
    Result<ReplayJobPage> jobs = store_->ListReplayJobs(bad, 10);
    ASSERT_FALSE(jobs.ok()) << bad;
    EXPECT_EQ(jobs.status().code(), Status::Code::kInvalidArgument);
  }
  // The oldest event's id is a cursor past every event: an empty page, not an error.
  const std::string oldest = ListIds({}).back();
  Result<EventPage> none = store_->ListEvents({}, oldest, 10);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->items.empty());
}

// Two relays (two data directories) receiving events in the same millisecond give them different
// ids, and neither takes the other's ids: not to fetch (404), not as a cursor (400), not to
// replay. (Ids used to be the millisecond and the sequence alone, so both relays sent the same
// webhook-id, and a receiver dropping repeats by webhook-id lost one of the events.)
TEST_P(StoreConformanceTest, IdsDifferBetweenStoresAndEachRefusesTheOthers) {
  hookrelay::testing::TempDir other_dir;
  Result<std::unique_ptr<Store>> opened = GetParam().open(other_dir.path(), clock_);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Store& other = **opened;
  const std::string a1 = Append(MakeEvent(clock_, random_, "a1"));
  const std::string a2 = Append(MakeEvent(clock_, random_, "a2"));
  Result<AppendResult> b = other.AppendEventSync(MakeEvent(clock_, random_, "b1"));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const std::string b1 = b->id;
  EXPECT_NE(a1, b1);
  EXPECT_NE(a2, b1);
  EXPECT_NE(a1.substr(10), b1.substr(10)) << "the same millisecond, and still different bits";
  // Each store finds its own events.
  Result<std::optional<Event>> got = store_->GetEvent(a1);
  ASSERT_TRUE(got.ok() && got->has_value()) << a1;
  EXPECT_EQ((*got)->body, "a1");
  got = other.GetEvent(b1);
  ASSERT_TRUE(got.ok() && got->has_value()) << b1;
  EXPECT_EQ((*got)->body, "b1");
  // An id of one store is nothing in the other.
  const std::vector<std::pair<Store*, std::string>> foreign = {
      {store_.get(), b1}, {&other, a1}, {&other, a2}};
  for (const auto& [store, id] : foreign) {
    got = store->GetEvent(id);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_FALSE(got->has_value()) << id;
    Result<std::vector<Delivery>> d = store->GetDeliveries(id);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_TRUE(d->empty()) << id;
    Result<EventPage> page = store->ListEvents({}, id, 10);
    ASSERT_FALSE(page.ok()) << id << " was taken as a cursor";
    EXPECT_EQ(page.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(page.status().field(), "cursor");
    Result<Delivery> replay = store->CreateReplay(id, "billing", 3, clock_.Now());
    ASSERT_FALSE(replay.ok()) << id;
    EXPECT_EQ(replay.status().code(), Status::Code::kNotFound);
  }
  // Its own ids are cursors.
  Result<EventPage> page = store_->ListEvents({}, a2, 10);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].id, a1);
  // The same shape with made-up bits (the ids the store gave out before) is no cursor either.
  for (const std::string& made_up :
       {a1.substr(0, 10) + "0000000000000000", a1.substr(0, 10) + "0000000000000001"}) {
    Result<EventPage> p = store_->ListEvents({}, made_up, 10);
    EXPECT_FALSE(p.ok()) << made_up;
    got = store_->GetEvent(made_up);
    ASSERT_TRUE(got.ok());
    EXPECT_FALSE(got->has_value()) << made_up;
  }
}

// An event's received_at is the store's receive time, which never goes back: when the clock
// steps back, events are received at the last time seen until the clock catches up. So since and
// until (a range of keys) select exactly the events with since <= received_at < until, and a new
// delivery is due at its event's received_at.
TEST_P(StoreConformanceTest, TimeRangesMatchReceivedAtAfterTheClockStepsBack) {
  const TimePoint t0 = clock_.Now();
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {  // t0, t0+10s, t0+20s
    ids.push_back(Append(MakeEvent(clock_, random_)));
    clock_.Advance(seconds(10));
  }
  clock_.Set(t0 + seconds(5));   // steps back 25 s
  for (int i = 0; i < 5; ++i) {  // the clock reads t0+5s, +15s, +25s, +35s, +45s
    ids.push_back(Append(MakeEvent(clock_, random_)));
    clock_.Advance(seconds(10));
  }
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]) << i;
  std::vector<TimePoint> received;
  for (const std::string& id : ids) {
    Result<std::optional<Event>> e = store_->GetEvent(id);
    ASSERT_TRUE(e.ok() && e->has_value()) << id;
    received.push_back((*e)->received_at);
    const std::vector<Delivery> d = Deliveries(id);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].next_attempt_at, (*e)->received_at) << id;
  }
  // Held at the last time seen (t0+20s) until the clock passed it.
  EXPECT_EQ(received[3], t0 + seconds(20));
  EXPECT_EQ(received[4], t0 + seconds(20));
  EXPECT_EQ(received[5], t0 + seconds(25));
  for (size_t i = 1; i < received.size(); ++i) EXPECT_LE(received[i - 1], received[i]) << i;
  for (int from = 0; from <= 50; from += 5) {
    for (int to = from; to <= 55; to += 5) {
      const TimePoint since = t0 + seconds(from);
      const TimePoint until = t0 + seconds(to);
      std::vector<std::string> want;
      for (size_t i = ids.size(); i-- > 0;) {
        if (since <= received[i] && received[i] < until) want.push_back(ids[i]);
      }
      EXPECT_EQ(ListIds({.since = since, .until = until}), want) << from << "s.." << to << "s";
    }
  }
}

TEST_P(StoreConformanceTest, PurgeDeletesOldEventsInBatchesWithDeliveriesAndAttempts) {
  const TimePoint t0 = clock_.Now();
  std::vector<std::string> old_ids;
  for (int i = 0; i < 10; ++i) {
    old_ids.push_back(Append(MakeEvent(clock_, random_, "old", {"billing", "crm"})));
    clock_.Advance(seconds(1));
  }
  // Every old delivery gets an attempt: the first eight events end delivered or failed, the last
  // two are still being retried (scheduled) and must survive retention.
  const std::set<std::string> pending(old_ids.end() - 2, old_ids.end());
  std::vector<Delivery> claimed = Claim(clock_.Now(), 20, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 20u);
  int n = 0;
  for (const Delivery& d : claimed) {
    const DeliveryStatus status = pending.count(d.event_id) ? DeliveryStatus::kScheduled
                                                            : (n++ % 2 ? DeliveryStatus::kDelivered
                                                                       : DeliveryStatus::kFailed);
    ASSERT_TRUE(
        store_
            ->RecordAttempt({d.id, 1, clock_.Now(), 1, 500, std::nullopt, std::nullopt, "e"},
                            {status, clock_.Now() + minutes(1)}, "s")
            .ok());
    ASSERT_EQ(store_->GetAttempts(d.id)->size(), 1u);
  }
  clock_.Advance(hours(1));
  std::vector<std::string> new_ids;
  for (int i = 0; i < 3; ++i) new_ids.push_back(Append(MakeEvent(clock_, random_, "new")));

  const TimePoint cutoff = t0 + minutes(30);
  std::vector<int64_t> purged;
  for (int i = 0; i < 3; ++i) {
    Result<int64_t> r = store_->PurgeEventsBefore(cutoff, 4);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    purged.push_back(*r);
  }
  EXPECT_EQ(purged, (std::vector<int64_t>{4, 4, 0}));

  for (const std::string& id : old_ids) {
    const bool kept = pending.count(id) > 0;
    EXPECT_EQ(store_->GetEvent(id)->has_value(), kept) << id;
    EXPECT_EQ(Deliveries(id).size(), kept ? 2u : 0u) << id;
  }
  for (const Delivery& d : claimed) {
    EXPECT_EQ(store_->GetAttempts(d.id)->size(), pending.count(d.event_id) ? 1u : 0u);
  }
  for (const std::string& id : new_ids) {
    EXPECT_TRUE(store_->GetEvent(id)->has_value());
    EXPECT_EQ(Deliveries(id).size(), 1u);
  }
  EXPECT_EQ(ListIds({}).size(), 5u);
  EXPECT_EQ(*store_->PurgeEventsBefore(cutoff, 0), 0);
}

TEST_P(StoreConformanceTest, BreakerRoundTrip) {
  Result<std::optional<policy::BreakerSnapshot>> none = store_->GetBreaker("billing");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  const TimePoint t = clock_.Now();
  policy::BreakerSnapshot open{
      policy::BreakerState::kOpen, 20, 2, t + minutes(30), t - hours(3), false};
  ASSERT_TRUE(store_->PutBreaker("billing", open).ok());
  EXPECT_EQ(**store_->GetBreaker("billing"), open);

  policy::BreakerSnapshot half{
      policy::BreakerState::kHalfOpen, 20, 2, t + minutes(30), std::nullopt, true};
  ASSERT_TRUE(store_->PutBreaker("billing", half).ok());
  EXPECT_EQ(**store_->GetBreaker("billing"), half);

  policy::BreakerSnapshot closed{policy::BreakerState::kClosed, 0, 0, std::nullopt, t, false};
  ASSERT_TRUE(store_->PutBreaker("crm", closed).ok());
  EXPECT_EQ(**store_->GetBreaker("crm"), closed);
  EXPECT_EQ(**store_->GetBreaker("billing"), half);
}

// The shared breaker (issue 15): UpdateBreaker applies the pure transition to the stored row, so
// failures reported in several calls (several nodes) add up, and each transition is returned to
// exactly one call.
TEST_P(StoreConformanceTest, UpdateBreakerAppliesInputsToTheStoredRow) {
  using policy::BreakerInput;
  using policy::BreakerState;
  using policy::BreakerTransition;
  policy::BreakerConfig config;
  config.threshold = 5;
  config.open_periods = {minutes(10), minutes(30)};
  const TimePoint t = clock_.Now();
  EXPECT_EQ(*store_->GetDestinationControl("billing"), DestinationControl{});
  Result<std::vector<policy::BreakerStep>> empty = store_->UpdateBreaker("billing", config, {});
  EXPECT_EQ(empty.status().code(), Status::Code::kInvalidArgument);

  auto update = [&](std::vector<BreakerInputAt> inputs) {
    Result<std::vector<policy::BreakerStep>> r = store_->UpdateBreaker("billing", config, inputs);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r.ok() ? r->size() : 0, inputs.size());
    return r.ok() ? *r : std::vector<policy::BreakerStep>{};
  };
  // Two callers' failures add up: 2 + 2, then the fifth trips it (once).
  std::vector<policy::BreakerStep> s1 =
      update({{BreakerInput::kFailure, t}, {BreakerInput::kFailure, t}});
  EXPECT_EQ(s1[1].after.consecutive_failures, 2);
  EXPECT_EQ(s1[1].transition, BreakerTransition::kNone);
  update({{BreakerInput::kFailure, t}, {BreakerInput::kFailure, t}});
  EXPECT_EQ(store_->GetDestinationControl("billing")->breaker.consecutive_failures, 4);
  std::vector<policy::BreakerStep> trip =
      update({{BreakerInput::kFailure, t}, {BreakerInput::kFailure, t}});
  EXPECT_EQ(trip[0].transition, BreakerTransition::kOpened);
  EXPECT_EQ(trip[1].transition, BreakerTransition::kNone) << "a straggler does not trip it again";
  DestinationControl c = *store_->GetDestinationControl("billing");
  EXPECT_EQ(c.breaker.state, BreakerState::kOpen);
  EXPECT_EQ(c.breaker.trips, 1);
  EXPECT_EQ(c.breaker.consecutive_failures, 6);
  EXPECT_EQ(c.breaker.open_until, t + minutes(10));
  EXPECT_FALSE(c.pause.has_value());
  EXPECT_EQ(**store_->GetBreaker("billing"), c.breaker);  // the same row

  // The probe: refused before open_until, given once at it, again only once given back.
  std::vector<policy::BreakerStep> early = update({{BreakerInput::kProbe, t + minutes(9)}});
  EXPECT_FALSE(early[0].allowed);
  std::vector<policy::BreakerStep> first = update({{BreakerInput::kProbe, t + minutes(10)}});
  EXPECT_TRUE(first[0].allowed);
  EXPECT_EQ(first[0].transition, BreakerTransition::kHalfOpened);
  std::vector<policy::BreakerStep> second = update({{BreakerInput::kProbe, t + minutes(10)}});
  EXPECT_FALSE(second[0].allowed) << "two probes at once";
  update({{BreakerInput::kProbeNotSent, t + minutes(10)}});
  std::vector<policy::BreakerStep> again = update({{BreakerInput::kProbe, t + minutes(11)}});
  EXPECT_TRUE(again[0].allowed);
  EXPECT_EQ(again[0].transition, BreakerTransition::kNone);
  // The probe fails: open for the next period; then a probe succeeds: closed.
  std::vector<policy::BreakerStep> reopen = update({{BreakerInput::kFailure, t + minutes(12)}});
  EXPECT_EQ(reopen[0].transition, BreakerTransition::kOpened);
  EXPECT_EQ(reopen[0].after.open_until, t + minutes(42));
  update({{BreakerInput::kProbe, t + minutes(42)}});
  std::vector<policy::BreakerStep> close = update({{BreakerInput::kSuccess, t + minutes(43)}});
  EXPECT_EQ(close[0].transition, BreakerTransition::kClosed);
  c = *store_->GetDestinationControl("billing");
  EXPECT_EQ(c.breaker.state, BreakerState::kClosed);
  EXPECT_EQ(c.breaker.trips, 2);
  EXPECT_EQ(c.breaker.closed_since, t + minutes(43));
  // The operator's reset; other destinations are untouched throughout.
  update({{BreakerInput::kFailure, t}, {BreakerInput::kReset, t + hours(1)}});
  c = *store_->GetDestinationControl("billing");
  EXPECT_EQ(c.breaker, (policy::BreakerSnapshot{BreakerState::kClosed, 0, 0, std::nullopt,
                                                t + hours(1), false}));
  EXPECT_EQ(*store_->GetDestinationControl("crm"), DestinationControl{});
  Result<std::map<std::string, DestinationControl>> all = store_->ListDestinationControls();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->at("billing"), c);
}

// The probe's lease (policy::kProbeLease) as stored: the grant's time is kept in open_until, so a
// probe whose node died before recording it (nothing more is ever written for it) holds the
// breaker only until the lease ends; then exactly one caller gets a new probe, and the first
// probe's late result still decides.
TEST_P(StoreConformanceTest, UpdateBreakerGrantsTheProbeAgainAfterItsLease) {
  using policy::BreakerInput;
  using policy::BreakerState;
  using policy::kProbeLease;
  policy::BreakerConfig config;
  config.threshold = 1;
  config.open_periods = {minutes(10), minutes(30)};
  const TimePoint t = clock_.Now();
  auto update = [&](BreakerInput input, TimePoint at) {
    Result<std::vector<policy::BreakerStep>> r =
        store_->UpdateBreaker("billing", config, {{input, at}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && !r->empty() ? r->back() : policy::BreakerStep{};
  };
  update(BreakerInput::kFailure, t);
  const TimePoint granted = t + minutes(12);
  policy::BreakerStep first = update(BreakerInput::kProbe, granted);
  ASSERT_TRUE(first.allowed);
  EXPECT_FALSE(first.probe_lease_expired);
  DestinationControl c = *store_->GetDestinationControl("billing");
  EXPECT_EQ(c.breaker.state, BreakerState::kHalfOpen);
  EXPECT_TRUE(c.breaker.probe_in_flight);
  EXPECT_EQ(c.breaker.open_until, granted) << "the probe's grant is stored";
  EXPECT_EQ(**store_->GetBreaker("billing"), c.breaker);
  // The node holding it says nothing more. Within the lease nobody else probes.
  policy::BreakerStep held = update(BreakerInput::kProbe, granted + kProbeLease - milliseconds(1));
  EXPECT_FALSE(held.allowed);
  EXPECT_EQ(store_->GetDestinationControl("billing")->breaker, c.breaker);
  // At its end, four callers at once: exactly one gets the new probe.
  std::atomic<int> probes{0}, expired{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      policy::BreakerStep step = update(BreakerInput::kProbe, granted + kProbeLease);
      probes += step.allowed;
      expired += step.probe_lease_expired;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(probes.load(), 1);
  EXPECT_EQ(expired.load(), 1);
  c = *store_->GetDestinationControl("billing");
  EXPECT_EQ(c.breaker.state, BreakerState::kHalfOpen);
  EXPECT_TRUE(c.breaker.probe_in_flight);
  EXPECT_EQ(c.breaker.open_until, granted + kProbeLease);
  // The first probe's result comes after all (its node was slow, not dead): a failure opens the
  // breaker for the next period; the second probe's success after that changes nothing.
  const TimePoint late = granted + kProbeLease + seconds(1);
  policy::BreakerStep failed = update(BreakerInput::kFailure, late);
  EXPECT_EQ(failed.transition, policy::BreakerTransition::kOpened);
  EXPECT_EQ(failed.after.open_until, late + minutes(30));
  policy::BreakerStep straggler = update(BreakerInput::kSuccess, late + seconds(1));
  EXPECT_EQ(straggler.transition, policy::BreakerTransition::kNone);
  EXPECT_EQ(store_->GetDestinationControl("billing")->breaker, failed.after);
}

// Many callers at once (several nodes; on PostgreSQL, several connections): every failure counts,
// exactly one call trips the breaker, and exactly one gets the half-open probe.
TEST_P(StoreConformanceTest, ConcurrentBreakerUpdatesTripOnceAndProbeOnce) {
  policy::BreakerConfig config;
  config.threshold = 20;
  config.open_periods = {minutes(10)};
  const TimePoint t = clock_.Now();
  constexpr int kThreads = 4, kEach = 10;
  std::atomic<int> opened{0}, probes{0}, errors{0};
  auto run = [&](policy::BreakerInput input, TimePoint at, int times) {
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&] {
        for (int k = 0; k < times; ++k) {
          Result<std::vector<policy::BreakerStep>> r =
              store_->UpdateBreaker("billing", config, {{input, at}});
          if (!r.ok()) {
            errors++;
            continue;
          }
          opened += r->back().transition == policy::BreakerTransition::kOpened;
          probes += r->back().allowed;
        }
      });
    }
    for (auto& th : threads) th.join();
  };
  run(policy::BreakerInput::kFailure, t, kEach);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(opened.load(), 1);
  EXPECT_EQ(store_->GetDestinationControl("billing")->breaker.consecutive_failures,
            kThreads * kEach);
  run(policy::BreakerInput::kProbe, t + minutes(10), 2);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(probes.load(), 1);
}

// The destination's pause is stored (durable, shared by every node): PauseDestination pauses
// its scheduled deliveries in the same transaction, ResumeDestination makes them due again.
TEST_P(StoreConformanceTest, PauseDestinationIsStoredWithItsDeliveries) {
  const std::string b1 = Append(MakeEvent(clock_, random_, "1", {"billing"}));
  const std::string c1 = Append(MakeEvent(clock_, random_, "2", {"crm"}));
  const TimePoint t = clock_.Now();
  Result<int64_t> paused = store_->PauseDestination("billing", "maintenance", t);
  ASSERT_TRUE(paused.ok()) << paused.status().ToString();
  EXPECT_EQ(*paused, 1);
  EXPECT_EQ(Deliveries(b1)[0].status, DeliveryStatus::kPaused);
  EXPECT_EQ(Deliveries(b1)[0].reason, "maintenance");
  EXPECT_EQ(Deliveries(c1)[0].status, DeliveryStatus::kScheduled);
  DestinationControl c = *store_->GetDestinationControl("billing");
  ASSERT_TRUE(c.pause.has_value());
  EXPECT_EQ(*c.pause, (DestinationPause{"maintenance", t}));
  EXPECT_EQ(c.breaker, policy::BreakerSnapshot{});  // a closed breaker
  EXPECT_FALSE(store_->GetDestinationControl("crm")->pause.has_value());

  // Paused again: the new reason, the first `since`. The breaker's changes keep the pause.
  ASSERT_TRUE(store_->PauseDestination("billing", "longer maintenance", t + minutes(1)).ok());
  policy::BreakerConfig config;
  ASSERT_TRUE(store_->UpdateBreaker("billing", config, {{policy::BreakerInput::kFailure, t}}).ok());
  c = *store_->GetDestinationControl("billing");
  EXPECT_EQ(*c.pause, (DestinationPause{"longer maintenance", t}));
  EXPECT_EQ(c.breaker.consecutive_failures, 1);
  EXPECT_EQ(store_->ListDestinationControls()->at("billing"), c);

  const TimePoint resume_at = t + minutes(5);
  Result<int64_t> resumed = store_->ResumeDestination("billing", resume_at);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(*resumed, 1);
  EXPECT_EQ(Deliveries(b1)[0].status, DeliveryStatus::kScheduled);
  EXPECT_EQ(Deliveries(b1)[0].next_attempt_at, resume_at);
  c = *store_->GetDestinationControl("billing");
  EXPECT_FALSE(c.pause.has_value());
  EXPECT_EQ(c.breaker.consecutive_failures, 1) << "resume leaves the breaker alone";
  EXPECT_EQ(*store_->ResumeDestination("billing", resume_at), 0);
  EXPECT_EQ(*store_->ResumeDestination("nobody", resume_at), 0);
}

TEST_P(StoreConformanceTest, NextDueAtIgnoresAllButScheduled) {
  EXPECT_FALSE(store_->NextDueAt()->has_value());
  NewEvent e = MakeEvent(clock_, random_, "{}", {"billing", "crm"});
  e.deliveries[0].status = DeliveryStatus::kPaused;
  e.deliveries[0].next_attempt_at = clock_.Now() - hours(1);
  e.deliveries[1].next_attempt_at = clock_.Now() + minutes(1);
  Append(e);
  EXPECT_EQ(*store_->NextDueAt(), clock_.Now() + minutes(1));
}

TEST_P(StoreConformanceTest, ClaimDueForOneDestinationTakesOnlyItsWork) {
  const TimePoint t0 = clock_.Now();
  // Interleaved due times: billing's work is older and newer than crm's.
  std::vector<std::string> billing, crm;
  for (int i = 0; i < 3; ++i) {
    NewEvent b = MakeEvent(clock_, random_, "{}", {"billing"});
    b.deliveries[0].next_attempt_at = t0 + seconds(2 * i);
    billing.push_back(Append(b));
    NewEvent c = MakeEvent(clock_, random_, "{}", {"crm"});
    c.deliveries[0].next_attempt_at = t0 + seconds(2 * i + 1);
    crm.push_back(Append(c));
  }
  NewEvent paused = MakeEvent(clock_, random_, "{}", {"crm"});
  paused.deliveries[0].status = DeliveryStatus::kPaused;
  paused.deliveries[0].next_attempt_at = t0 - hours(1);
  Append(paused);
  NewEvent later = MakeEvent(clock_, random_, "{}", {"crm"});
  later.deliveries[0].next_attempt_at = t0 + hours(1);
  const std::string later_id = Append(later);

  const TimePoint now = t0 + minutes(1);
  EXPECT_TRUE(Claim(now, 10, hours(3), "s", "nowhere").empty());
  std::vector<Delivery> a = Claim(now, 2, hours(3), "s", "crm");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].event_id, crm[0]);
  EXPECT_EQ(a[1].event_id, crm[1]);
  for (const Delivery& d : a) {
    EXPECT_EQ(d.destination, "crm");
    EXPECT_EQ(d.status, DeliveryStatus::kDelivering);
    EXPECT_EQ(d.lease_until, now + hours(3));
    EXPECT_EQ(d.lease_owner, "s");
  }
  std::vector<Delivery> b = Claim(now, 10, hours(3), "s", "crm");
  ASSERT_EQ(b.size(), 1u);  // neither the paused one nor the one due in an hour
  EXPECT_EQ(b[0].event_id, crm[2]);
  EXPECT_TRUE(Claim(now, 10, hours(3), "s", "crm").empty());
  // billing was untouched and is all still there, oldest first.
  EXPECT_EQ(Count(DeliveryStatus::kScheduled), 3 + 1);
  std::vector<Delivery> c = Claim(now, 10, hours(3), "s", "billing");
  ASSERT_EQ(c.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c[i].event_id, billing[i]);
    EXPECT_EQ(c[i].destination, "billing");
  }
  // The destination-less claim still sees every destination.
  EXPECT_TRUE(Claim(now, 10, hours(3), "s").empty());
  std::vector<Delivery> d = Claim(t0 + hours(2), 10, hours(3), "s");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].event_id, later_id);
}

TEST_P(StoreConformanceTest, ExpiredLeaseIsClaimedAgainOnlyForItsDestination) {
  const TimePoint t0 = clock_.Now();
  std::string billing = Append(MakeEvent(clock_, random_, "{}", {"billing"}));
  std::string crm = Append(MakeEvent(clock_, random_, "{}", {"crm"}));
  ASSERT_EQ(Claim(t0, 10, seconds(30), "sender-a", "billing").size(), 1u);
  ASSERT_EQ(Claim(t0, 10, seconds(30), "sender-a", "crm").size(), 1u);

  const TimePoint expired = t0 + seconds(30);
  EXPECT_TRUE(Claim(t0 + seconds(29), 10, seconds(30), "sender-b", "billing").empty());
  std::vector<Delivery> b = Claim(expired, 10, seconds(30), "sender-b", "billing");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].event_id, billing);
  EXPECT_EQ(b[0].lease_owner, "sender-b");
  EXPECT_EQ(b[0].lease_until, expired + seconds(30));
  // crm's expired lease is still sender-a's until someone claims crm.
  EXPECT_EQ(Deliveries(crm)[0].lease_owner, "sender-a");
  EXPECT_TRUE(Claim(expired, 10, seconds(30), "sender-b", "billing").empty());
  std::vector<Delivery> c = Claim(expired, 10, seconds(30), "sender-b", "crm");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].event_id, crm);
}

TEST_P(StoreConformanceTest, NextDueAtForOneDestination) {
  EXPECT_FALSE(store_->NextDueAt("billing")->has_value());
  const TimePoint t0 = clock_.Now();
  NewEvent e = MakeEvent(clock_, random_, "{}", {"billing", "crm", "erp"});
  e.deliveries[0].next_attempt_at = t0 + minutes(5);
  e.deliveries[1].next_attempt_at = t0 + minutes(1);
  e.deliveries[2].status = DeliveryStatus::kPaused;
  e.deliveries[2].next_attempt_at = t0 - hours(1);
  Append(e);
  NewEvent f = MakeEvent(clock_, random_, "{}", {"billing"});
  f.deliveries[0].next_attempt_at = t0 + minutes(3);
  Append(f);

  EXPECT_EQ(*store_->NextDueAt(), t0 + minutes(1));
  EXPECT_EQ(*store_->NextDueAt("billing"), t0 + minutes(3));
  EXPECT_EQ(*store_->NextDueAt("crm"), t0 + minutes(1));
  EXPECT_FALSE(store_->NextDueAt("erp")->has_value());  // paused only
  EXPECT_FALSE(store_->NextDueAt("nowhere")->has_value());
  // A claimed delivery is no longer waiting.
  ASSERT_EQ(Claim(t0 + minutes(1), 10, seconds(30), "s", "crm").size(), 1u);
  EXPECT_FALSE(store_->NextDueAt("crm")->has_value());
  EXPECT_EQ(*store_->NextDueAt(), t0 + minutes(3));
}

TEST_P(StoreConformanceTest, CountDueAndOldestDueAt) {
  const TimePoint t0 = clock_.Now();
  EXPECT_EQ(*store_->CountDue(t0), 0);
  EXPECT_FALSE(store_->OldestDueAt(t0)->has_value());

  NewEvent e = MakeEvent(clock_, random_, "{}", {"billing", "crm", "erp", "ops"});
  e.deliveries[0].next_attempt_at = t0 - minutes(10);
  e.deliveries[1].next_attempt_at = t0 - minutes(2);
  e.deliveries[2].next_attempt_at = t0 + minutes(5);  // not due yet
  e.deliveries[3].status = DeliveryStatus::kPaused;   // paused: not waiting for a sender
  e.deliveries[3].next_attempt_at = t0 - hours(1);
  std::string id = Append(e);

  EXPECT_EQ(*store_->CountDue(t0), 2);
  EXPECT_EQ(*store_->OldestDueAt(t0), t0 - minutes(10));
  EXPECT_EQ(*store_->CountDue(t0 - minutes(5)), 1);
  EXPECT_EQ(*store_->OldestDueAt(t0 - minutes(5)), t0 - minutes(10));
  EXPECT_EQ(*store_->CountDue(t0 - minutes(11)), 0);
  EXPECT_FALSE(store_->OldestDueAt(t0 - minutes(11))->has_value());
  EXPECT_EQ(*store_->CountDue(t0 + minutes(5)), 3);  // due at exactly now counts

  // Claimed (leased) deliveries are being sent, not waiting.
  std::vector<Delivery> claimed = Claim(t0, 1, seconds(30), "s");
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].destination, "billing");
  EXPECT_EQ(*store_->CountDue(t0), 1);
  EXPECT_EQ(*store_->OldestDueAt(t0), t0 - minutes(2));
}

TEST_P(StoreConformanceTest, CountDueByDestination) {
  const TimePoint t0 = clock_.Now();
  ASSERT_TRUE(store_->CountDueByDestination(t0).ok());
  EXPECT_TRUE(store_->CountDueByDestination(t0)->empty());
  NewEvent a = MakeEvent(clock_, random_, "{}", {"billing", "crm", "ops"});
  a.deliveries[0].next_attempt_at = t0 - minutes(1);
  a.deliveries[1].next_attempt_at = t0 + minutes(5);  // not due yet
  a.deliveries[2].status = DeliveryStatus::kPaused;   // paused: not waiting for a sender
  a.deliveries[2].next_attempt_at = t0 - hours(1);
  Append(a);
  NewEvent b = MakeEvent(clock_, random_, "{}", {"billing", "crm"});
  b.deliveries[0].next_attempt_at = t0;
  b.deliveries[1].next_attempt_at = t0 - minutes(3);
  Append(b);
  auto due = store_->CountDueByDestination(t0);
  ASSERT_TRUE(due.ok()) << due.status().ToString();
  EXPECT_EQ(*due, (std::map<std::string, int64_t>{{"billing", 2}, {"crm", 1}}));
  int64_t total = 0;
  for (const auto& [name, n] : *due) total += n;
  EXPECT_EQ(total, *store_->CountDue(t0)) << "the same deliveries as CountDue, split up";
}

AuditEntry MakeAudit(TimePoint at, std::string action, std::string target, int64_t count) {
  AuditEntry e;
  e.at = at;
  e.actor = "token:ab12cd34";
  e.action = std::move(action);
  e.target = std::move(target);
  e.count = count;
  e.detail = R"({"filter":{"status":"failed"},"rate":"50/s","note":"h\u00e9"})";
  return e;
}

// Strips what the store assigns, so entries compare with what was appended.
AuditEntry WithoutId(AuditEntry e) {
  e.id = 0;
  return e;
}

TEST_P(StoreConformanceTest, AuditListsNewestFirstInStablePages) {
  Result<AuditPage> empty = store_->ListAudit("", 10);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->items.empty());
  EXPECT_TRUE(empty->next_cursor.empty());

  const std::vector<std::string> actions = {"pause", "resume", "replay", "bulk_replay",
                                            "reset_breaker"};
  std::vector<AuditEntry> appended;
  for (size_t i = 0; i < actions.size(); ++i) {
    AuditEntry e = MakeAudit(clock_.Now(), actions[i], "billing", static_cast<int64_t>(i) * 10);
    e.id = 999;  // ignored: the store assigns ids
    ASSERT_TRUE(store_->AppendAudit(e).ok());
    e.id = 0;
    appended.push_back(e);
    clock_.Advance(seconds(1));
  }

  Result<AuditPage> p1 = store_->ListAudit("", 2);
  ASSERT_TRUE(p1.ok()) << p1.status().ToString();
  ASSERT_EQ(p1->items.size(), 2u);
  EXPECT_EQ(WithoutId(p1->items[0]), appended[4]);
  EXPECT_EQ(WithoutId(p1->items[1]), appended[3]);
  EXPECT_GT(p1->items[0].id, p1->items[1].id);
  ASSERT_FALSE(p1->next_cursor.empty());

  // A new entry does not shift the pages already being read.
  ASSERT_TRUE(store_->AppendAudit(MakeAudit(clock_.Now(), "config_change", "routes", 1)).ok());

  Result<AuditPage> p2 = store_->ListAudit(p1->next_cursor, 2);
  ASSERT_TRUE(p2.ok()) << p2.status().ToString();
  ASSERT_EQ(p2->items.size(), 2u);
  EXPECT_EQ(WithoutId(p2->items[0]), appended[2]);
  EXPECT_EQ(WithoutId(p2->items[1]), appended[1]);
  ASSERT_FALSE(p2->next_cursor.empty());

  Result<AuditPage> p3 = store_->ListAudit(p2->next_cursor, 2);
  ASSERT_TRUE(p3.ok()) << p3.status().ToString();
  ASSERT_EQ(p3->items.size(), 1u);
  EXPECT_EQ(WithoutId(p3->items[0]), appended[0]);
  EXPECT_TRUE(p3->next_cursor.empty());

  // The newest is first on a fresh first page; ids are distinct and decrease down the list.
  Result<AuditPage> all = store_->ListAudit("", 100);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->items.size(), 6u);
  EXPECT_EQ(all->items[0].action, "config_change");
  EXPECT_EQ(all->items[0].target, "routes");
  for (size_t i = 1; i < all->items.size(); ++i) {
    EXPECT_LT(all->items[i].id, all->items[i - 1].id);
  }
  EXPECT_TRUE(all->next_cursor.empty());
  // An exact fit has no next page either.
  Result<AuditPage> exact = store_->ListAudit("", 6);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->items.size(), 6u);
  EXPECT_TRUE(exact->next_cursor.empty());
  // The limit is clamped to [1, 1000].
  EXPECT_EQ(store_->ListAudit("", 0)->items.size(), 1u);
  EXPECT_EQ(store_->ListAudit("", -3)->items.size(), 1u);
  EXPECT_EQ(store_->ListAudit("", 100000)->items.size(), 6u);
}

TEST_P(StoreConformanceTest, AuditKeepsEmptyFieldsAndRefusesBadInput) {
  AuditEntry minimal;
  minimal.at = clock_.Now();
  minimal.action = "pause";
  ASSERT_TRUE(store_->AppendAudit(minimal).ok());
  Result<AuditPage> page = store_->ListAudit("", 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(WithoutId(page->items[0]), minimal);

  AuditEntry no_action = MakeAudit(clock_.Now(), "", "billing", 1);
  Status s = store_->AppendAudit(no_action);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_EQ(store_->ListAudit("", 10)->items.size(), 1u);

  for (const std::string cursor : {"x", "12abc", "-1", "0", " 5", "99999999999999999999999"}) {
    Result<AuditPage> bad = store_->ListAudit(cursor, 10);
    EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument) << cursor;
  }
}

TEST_P(StoreConformanceTest, AuditSurvivesEventPurge) {
  Append(MakeEvent(clock_, random_, "{}", {}));  // no deliveries: nothing pending
  ASSERT_TRUE(store_->AppendAudit(MakeAudit(clock_.Now(), "replay", "01J", 1)).ok());
  clock_.Advance(hours(1));
  ASSERT_EQ(*store_->PurgeEventsBefore(clock_.Now(), 100), 1);
  EXPECT_EQ(store_->ListAudit("", 10)->items.size(), 1u);
}

Rejection MakeRejection(const std::string& source, TimePoint at, std::string reason, int64_t size) {
  Rejection r;
  r.source = source;
  r.received_at = at;
  r.reason = std::move(reason);
  r.message = "signature does not match any configured secret";
  // Byte-exact headers: a NUL and bytes that are not UTF-8 come back as written.
  r.headers = {{"Content-Type", "application/json"},
               {"X-Hub-Signature-256", "(redacted)"},
               {"X-Odd", std::string("a\0b\xff", 4)}};
  r.size = size;
  r.sha256 = std::string(64, 'a');
  r.remote_addr = "192.0.2.7";
  return r;
}

Rejection WithoutId(Rejection r) {
  r.id = 0;
  return r;
}

TEST_P(StoreConformanceTest, RejectionsListNewestFirstPerSourceInStablePages) {
  Result<RejectionPage> empty = store_->ListRejections("github", "", 10);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->items.empty());
  EXPECT_TRUE(empty->next_cursor.empty());

  std::vector<Rejection> github;
  for (int i = 0; i < 5; ++i) {
    Rejection r = MakeRejection("github", clock_.Now(),
                                i % 2 ? "signature_mismatch" : "missing_signature", i);
    r.id = 999;  // ignored: the store assigns ids
    github.push_back(r);
    clock_.Advance(seconds(1));
  }
  Rejection other = MakeRejection("stripe", clock_.Now(), "timestamp_outside_tolerance", 7);
  other.remote_addr = "";
  // One call, two sources, in one transaction.
  ASSERT_TRUE(store_->AppendRejections({github[0], github[1], other, github[2]}, 100).ok());
  ASSERT_TRUE(store_->AppendRejections({github[3], github[4]}, 100).ok());
  for (Rejection& r : github) r.id = 0;
  other.id = 0;

  Result<RejectionPage> p1 = store_->ListRejections("github", "", 2);
  ASSERT_TRUE(p1.ok()) << p1.status().ToString();
  ASSERT_EQ(p1->items.size(), 2u);
  EXPECT_EQ(WithoutId(p1->items[0]), github[4]);
  EXPECT_EQ(WithoutId(p1->items[1]), github[3]);
  EXPECT_GT(p1->items[0].id, p1->items[1].id);
  ASSERT_FALSE(p1->next_cursor.empty());
  // A new row does not shift the pages already being read.
  ASSERT_TRUE(
      store_
          ->AppendRejections({MakeRejection("github", clock_.Now(), "signature_mismatch", 9)}, 100)
          .ok());
  Result<RejectionPage> p2 = store_->ListRejections("github", p1->next_cursor, 2);
  ASSERT_TRUE(p2.ok()) << p2.status().ToString();
  ASSERT_EQ(p2->items.size(), 2u);
  EXPECT_EQ(WithoutId(p2->items[0]), github[2]);
  EXPECT_EQ(WithoutId(p2->items[1]), github[1]);
  Result<RejectionPage> p3 = store_->ListRejections("github", p2->next_cursor, 2);
  ASSERT_TRUE(p3.ok()) << p3.status().ToString();
  ASSERT_EQ(p3->items.size(), 1u);
  EXPECT_EQ(WithoutId(p3->items[0]), github[0]);
  EXPECT_TRUE(p3->next_cursor.empty());

  Result<RejectionPage> stripe = store_->ListRejections("stripe", "", 10);
  ASSERT_TRUE(stripe.ok());
  ASSERT_EQ(stripe->items.size(), 1u);
  EXPECT_EQ(WithoutId(stripe->items[0]), other);
  EXPECT_TRUE(store_->ListRejections("nobody", "", 10)->items.empty());
  // The limit is clamped to [1, 1000].
  EXPECT_EQ(store_->ListRejections("github", "", 0)->items.size(), 1u);
  EXPECT_EQ(store_->ListRejections("github", "", 100000)->items.size(), 6u);
  for (const std::string cursor : {"x", "12abc", "-1", "0", " 5", "99999999999999999999999"}) {
    Result<RejectionPage> bad = store_->ListRejections("github", cursor, 10);
    EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument) << cursor;
  }
}

TEST_P(StoreConformanceTest, RejectionsKeepTheNewestPerSourceAndRefuseBadInput) {
  for (int batch = 0; batch < 4; ++batch) {
    std::vector<Rejection> rows;
    for (int i = 0; i < 5; ++i) {
      rows.push_back(MakeRejection("github", clock_.Now(), "signature_mismatch", batch * 5 + i));
    }
    ASSERT_TRUE(store_->AppendRejections(rows, 3).ok());
    ASSERT_TRUE(store_
                    ->AppendRejections(
                        {MakeRejection("shopify", clock_.Now(), "missing_signature", batch)}, 3)
                    .ok());
  }
  Result<RejectionPage> github = store_->ListRejections("github", "", 100);
  ASSERT_TRUE(github.ok());
  ASSERT_EQ(github->items.size(), 3u) << "only the newest 3 of the source are kept";
  EXPECT_EQ(github->items[0].size, 19);
  EXPECT_EQ(github->items[2].size, 17);
  Result<RejectionPage> shopify = store_->ListRejections("shopify", "", 100);
  ASSERT_EQ(shopify->items.size(), 3u) << "each source has its own bound";
  EXPECT_EQ(shopify->items[0].size, 3);

  EXPECT_EQ(store_->AppendRejections({MakeRejection("github", clock_.Now(), "x", 1)}, 0).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(store_->AppendRejections({MakeRejection("", clock_.Now(), "x", 1)}, 3).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(store_
                ->AppendRejections({MakeRejection("github", clock_.Now(), "x", 1),
                                    MakeRejection("github", clock_.Now(), "", 1)},
                                   3)
                .code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(store_->ListRejections("github", "", 100)->items[0].size, 19) << "nothing written";
  EXPECT_TRUE(store_->AppendRejections({}, 3).ok());
}

TEST_P(StoreConformanceTest, RejectionsArePurgedByAgeOldestFirstInBatches) {
  const TimePoint t0 = clock_.Now();
  std::vector<Rejection> rows;
  for (int i = 0; i < 6; ++i)
    rows.push_back(MakeRejection(i % 2 ? "a" : "b", t0 + minutes(i), "signature_mismatch", i));
  ASSERT_TRUE(store_->AppendRejections(rows, 100).ok());
  EXPECT_EQ(*store_->PurgeRejectionsBefore(t0, 100), 0);
  EXPECT_EQ(*store_->PurgeRejectionsBefore(t0 + minutes(4), 0), 0);
  // Four are older than t0 + 4m: two per batch of two.
  EXPECT_EQ(*store_->PurgeRejectionsBefore(t0 + minutes(4), 2), 2);
  EXPECT_EQ(store_->ListRejections("b", "", 10)->items.size(), 2u)
      << "the oldest (0, 2) went first";
  EXPECT_EQ(*store_->PurgeRejectionsBefore(t0 + minutes(4), 2), 2);
  EXPECT_EQ(*store_->PurgeRejectionsBefore(t0 + minutes(4), 2), 0);
  Result<RejectionPage> a = store_->ListRejections("a", "", 10);
  ASSERT_EQ(a->items.size(), 1u);
  EXPECT_EQ(a->items[0].size, 5);
  Result<RejectionPage> b = store_->ListRejections("b", "", 10);
  ASSERT_EQ(b->items.size(), 1u);
  EXPECT_EQ(b->items[0].size, 4);
  // Events are not touched by it, nor rejections by the events' purge.
  Append(MakeEvent(clock_, random_, "{}", {}));  // no deliveries: nothing pending
  clock_.Advance(hours(1));
  EXPECT_EQ(*store_->PurgeEventsBefore(clock_.Now(), 100), 1);
  EXPECT_EQ(store_->ListRejections("a", "", 10)->items.size(), 1u);
}

TEST_P(StoreConformanceTest, CreateReplaysStartsChainsDueWhenToldAndSkipsMissingEvents) {
  const std::string a = Append(MakeEvent(clock_, random_, "{}", {"billing", "crm"}));
  const std::string b = Append(MakeEvent(clock_, random_, "{}", {"billing"}));
  const TimePoint later = clock_.Now() + seconds(5);
  Result<int64_t> created =
      store_->CreateReplays({{a, "billing", 3, later},
                             {"01JNOSUCHEVENT0000000000000", "billing", 3, later},
                             {a, "billing", 3, later + milliseconds(2)},
                             {b, "billing", 2, later + milliseconds(4)}});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(*created, 3);
  auto ds = store_->GetDeliveries(a);
  ASSERT_TRUE(ds.ok());
  std::vector<int> chains;
  for (const Delivery& d : *ds) {
    if (d.destination != "billing") continue;
    chains.push_back(d.chain);
    if (d.chain == 2) {
      EXPECT_EQ(d.status, DeliveryStatus::kScheduled);
      EXPECT_EQ(d.max_attempts, 3);
      EXPECT_EQ(d.attempts, 0);
    } else {
      // Replaced before they were delivered: chain 0 by chain 1, chain 1 by chain 2.
      EXPECT_EQ(d.status, DeliveryStatus::kFailed) << d.chain;
    }
  }
  std::sort(chains.begin(), chains.end());
  EXPECT_EQ(chains, (std::vector<int>{0, 1, 2}));
  // Not due before their time: now only a's delivery to crm, which no replay replaced.
  auto due = store_->ClaimDue(clock_.Now(), 100, seconds(30), "n1");
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ((*due)[0].destination, "crm");
  EXPECT_EQ((*due)[0].chain, 0);
  auto next = store_->NextDueAt("billing");
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next->has_value());
  auto later_due = store_->ClaimDue(later + seconds(1), 100, seconds(30), "n1");
  ASSERT_TRUE(later_due.ok());
  EXPECT_EQ(later_due->size(), 2u);  // a's chain 2 and b's chain 1
  EXPECT_EQ(*store_->CreateReplays({}), 0);
}

// --- Bulk replay jobs ---------------------------------------------------------------------------

ReplayJob MakeReplayJob(const std::string& id, TimePoint created_at) {
  ReplayJob j;
  j.id = id;
  j.created_at = created_at;
  j.filter = R"({"status":"failed","destination":"billing"})";
  j.rate = 12.5;
  return j;
}

TEST_P(StoreConformanceTest, ReplayJobRoundTripsAndIdsAreUnique) {
  ReplayJob j = MakeReplayJob("job-1", clock_.Now());
  ASSERT_TRUE(store_->CreateReplayJob(j).ok());
  EXPECT_EQ(store_->CreateReplayJob(j).code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(store_->CreateReplayJob(MakeReplayJob("", clock_.Now())).code(),
            Status::Code::kInvalidArgument);
  Result<std::optional<ReplayJob>> got = store_->GetReplayJob("job-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  j.updated_at = (*got)->updated_at;
  EXPECT_EQ(**got, j);
  got = store_->GetReplayJob("nope");
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
}

TEST_P(StoreConformanceTest, ReplayJobWaitingIsWrittenWithProgressAndClearedWhenFinal) {
  ASSERT_TRUE(store_->CreateReplayJob(MakeReplayJob("job-w", clock_.Now())).ok());
  Result<std::optional<ReplayJob>> job = store_->ClaimReplayJob(clock_.Now(), seconds(60), "n1");
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_FALSE((*job)->waiting.has_value());
  ReplayJob j = **job;
  j.waiting = R"({"reason":"breaker_open","destination":"billing"})";
  ASSERT_TRUE(store_->UpdateReplayJob(j, "n1").ok());
  EXPECT_EQ((*store_->GetReplayJob("job-w"))->waiting, j.waiting);
  j.waiting.reset();
  ASSERT_TRUE(store_->UpdateReplayJob(j, "n1").ok());
  EXPECT_FALSE((*store_->GetReplayJob("job-w"))->waiting.has_value());
  j.waiting = R"({"reason":"destination_paused","destination":"billing"})";
  ASSERT_TRUE(store_->UpdateReplayJob(j, "n1").ok());
  // A cancelled job waits for nothing.
  Result<std::optional<ReplayJob>> cancelled = store_->CancelReplayJob("job-w", clock_.Now());
  ASSERT_TRUE(cancelled.ok() && cancelled->has_value());
  EXPECT_FALSE((*cancelled)->waiting.has_value());
}

TEST_P(StoreConformanceTest, ReplayJobsAreClaimedOldestFirstAndOnlyOnceWhileLeased) {
  ASSERT_TRUE(store_->CreateReplayJob(MakeReplayJob("b", clock_.Now() + seconds(1))).ok());
  ASSERT_TRUE(store_->CreateReplayJob(MakeReplayJob("a", clock_.Now())).ok());
  auto first = store_->ClaimReplayJob(clock_.Now(), seconds(30), "n1");
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_EQ((*first)->id, "a");
  EXPECT_EQ((*first)->state, ReplayJobState::kRunning);
  EXPECT_EQ((*first)->lease_owner, "n1");
  auto second = store_->ClaimReplayJob(clock_.Now(), seconds(30), "n2");
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ((*second)->id, "b");
  auto none = store_->ClaimReplayJob(clock_.Now(), seconds(30), "n2");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  // n1 dies: once its lease expires another node takes the job over, and n1 can no longer write.
  auto taken = store_->ClaimReplayJob(clock_.Now() + seconds(31), seconds(30), "n2");
  ASSERT_TRUE(taken.ok() && taken->has_value());
  EXPECT_EQ((*taken)->id, "a");
  ReplayJob stale = **first;
  stale.done = 5;
  EXPECT_EQ(store_->UpdateReplayJob(stale, "n1").code(), Status::Code::kFailedPrecondition);
  ReplayJob j = **taken;
  j.total = 10;
  j.done = 4;
  j.failed = 1;
  j.cursor = "c1";
  ASSERT_TRUE(store_->UpdateReplayJob(j, "n2").ok());
  auto got = store_->GetReplayJob("a");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->done, 4);
  EXPECT_EQ((*got)->failed, 1);
  EXPECT_EQ((*got)->total, 10);
  EXPECT_EQ((*got)->cursor, "c1");
  // Done: final, lease cleared, never claimed again.
  j.state = ReplayJobState::kDone;
  Status done_status = store_->UpdateReplayJob(j, "n2");
  ASSERT_TRUE(done_status.ok()) << done_status.ToString();
  got = store_->GetReplayJob("a");
  EXPECT_EQ((*got)->state, ReplayJobState::kDone);
  EXPECT_FALSE((*got)->lease_until.has_value());
  EXPECT_EQ(store_->UpdateReplayJob(j, "n2").code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(store_->UpdateReplayJob(MakeReplayJob("zz", clock_.Now()), "n2").code(),
            Status::Code::kNotFound);
}

TEST_P(StoreConformanceTest, CancelledReplayJobStopsItsRunnerAndFinalJobsStay) {
  ASSERT_TRUE(store_->CreateReplayJob(MakeReplayJob("a", clock_.Now())).ok());
  auto claimed = store_->ClaimReplayJob(clock_.Now(), seconds(30), "n1");
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  auto cancelled = store_->CancelReplayJob("a", clock_.Now());
  ASSERT_TRUE(cancelled.ok() && cancelled->has_value());
  EXPECT_EQ((*cancelled)->state, ReplayJobState::kCancelled);
  EXPECT_EQ(store_->UpdateReplayJob(**claimed, "n1").code(), Status::Code::kFailedPrecondition);
  auto none = store_->ClaimReplayJob(clock_.Now() + hours(1), seconds(30), "n2");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto again = store_->CancelReplayJob("a", clock_.Now());
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((*again)->state, ReplayJobState::kCancelled);
  auto missing = store_->CancelReplayJob("nope", clock_.Now());
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST_P(StoreConformanceTest, ReplayJobsListNewestFirstInStablePages) {
  auto empty = store_->ListReplayJobs("", 10);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->items.empty());
  EXPECT_TRUE(empty->next_cursor.empty());
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ReplayJob job;
    job.id = NewUlid(clock_, random_);
    job.created_at = clock_.Now();
    job.filter = R"({"status":"failed"})";
    job.rate = 10 + i;
    ASSERT_TRUE(store_->CreateReplayJob(job).ok());
    ids.push_back(job.id);
    clock_.Advance(seconds(1));
  }
  auto p1 = store_->ListReplayJobs("", 2);
  ASSERT_TRUE(p1.ok()) << p1.status().ToString();
  ASSERT_EQ(p1->items.size(), 2u);
  EXPECT_EQ(p1->items[0].id, ids[4]);
  EXPECT_EQ(p1->items[1].id, ids[3]);
  EXPECT_EQ(p1->items[0].rate, 14);
  ASSERT_FALSE(p1->next_cursor.empty());
  // A new job does not shift the pages being read.
  ReplayJob later;
  later.id = NewUlid(clock_, random_);
  later.created_at = clock_.Now();
  later.filter = "{}";
  ASSERT_TRUE(store_->CreateReplayJob(later).ok());
  auto p2 = store_->ListReplayJobs(p1->next_cursor, 2);
  ASSERT_TRUE(p2.ok());
  ASSERT_EQ(p2->items.size(), 2u);
  EXPECT_EQ(p2->items[0].id, ids[2]);
  EXPECT_EQ(p2->items[1].id, ids[1]);
  auto p3 = store_->ListReplayJobs(p2->next_cursor, 2);
  ASSERT_TRUE(p3.ok());
  ASSERT_EQ(p3->items.size(), 1u);
  EXPECT_EQ(p3->items[0].id, ids[0]);
  EXPECT_TRUE(p3->next_cursor.empty());
  EXPECT_EQ(store_->ListReplayJobs(std::string(200, 'x'), 2).status().code(),
            Status::Code::kInvalidArgument);
}

CatalogObject MakeCatalogObject(CatalogKind kind, std::string name, std::string spec,
                                std::string origin = "api") {
  return {
      .kind = kind, .name = std::move(name), .spec = std::move(spec), .origin = std::move(origin)};
}

TEST_P(StoreConformanceTest, CatalogKeepsObjectsInFirstWrittenOrderWithTheirAudit) {
  auto empty = store_->ListCatalog();
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->empty());

  const TimePoint t0 = clock_.Now();
  CatalogChange first;
  first.put = {MakeCatalogObject(CatalogKind::kSource, "github", R"({"name":"github"})", "config"),
               MakeCatalogObject(CatalogKind::kDestination, "billing",
                                 R"({"name":"billing","url":"https://b.example/h"})"),
               MakeCatalogObject(CatalogKind::kRoute, "github->billing",
                                 R"({"source":"github","destination":"billing"})")};
  first.audit = MakeAudit(t0, "config_change", "config file", 3);
  ASSERT_TRUE(store_->ApplyCatalogChange(first).ok());
  clock_.Advance(seconds(5));

  // Same name, other kind: a separate object. Rewriting an object keeps its place and
  // created_at; removing an absent one is not an error.
  CatalogChange second;
  second.put = {
      MakeCatalogObject(CatalogKind::kDestination, "github",
                        R"({"name":"github","url":"https://g.example/h"})"),
      MakeCatalogObject(CatalogKind::kSource, "github", R"({"name":"github","max_body":"1MiB"})")};
  second.remove = {{CatalogKind::kRoute, "github->billing"}, {CatalogKind::kSource, "nope"}};
  ASSERT_TRUE(store_->ApplyCatalogChange(second).ok());

  auto listed = store_->ListCatalog();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 3u);
  const CatalogObject& src = (*listed)[0];
  EXPECT_EQ(src.kind, CatalogKind::kSource);
  EXPECT_EQ(src.name, "github");
  EXPECT_EQ(src.spec, R"({"name":"github","max_body":"1MiB"})");
  EXPECT_EQ(src.origin, "api");
  EXPECT_EQ(src.created_at, t0);
  EXPECT_EQ(src.updated_at, t0 + seconds(5));
  EXPECT_EQ((*listed)[1].kind, CatalogKind::kDestination);
  EXPECT_EQ((*listed)[1].name, "billing");
  EXPECT_EQ((*listed)[1].updated_at, t0);
  EXPECT_EQ((*listed)[2].kind, CatalogKind::kDestination);
  EXPECT_EQ((*listed)[2].name, "github");

  auto audit = store_->ListAudit("", 10);
  ASSERT_TRUE(audit.ok());
  ASSERT_EQ(audit->items.size(), 1u);  // only the change that carried an entry
  EXPECT_EQ(audit->items[0].action, "config_change");
  EXPECT_EQ(audit->items[0].count, 3);
}

// Several nodes share the catalog through its version: every change raises it in its own
// transaction; a change made against a version that is no longer current is refused whole.
TEST_P(StoreConformanceTest, CatalogVersionRisesWithEachChangeAndAStaleChangeIsRefused) {
  auto v0 = store_->CatalogVersion();
  ASSERT_TRUE(v0.ok()) << v0.status().ToString();
  EXPECT_EQ(*v0, 0);
  CatalogChange add;
  add.put = {MakeCatalogObject(CatalogKind::kSource, "a", R"({"name":"a"})")};
  add.if_version = 0;
  ASSERT_TRUE(store_->ApplyCatalogChange(add).ok());
  CatalogChange unconditional;
  unconditional.put = {MakeCatalogObject(CatalogKind::kSource, "b", R"({"name":"b"})")};
  ASSERT_TRUE(store_->ApplyCatalogChange(unconditional).ok());
  auto v2 = store_->CatalogVersion();
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(*v2, 2);

  // Validated against version 1 (another node changed it since): nothing written, not audited.
  CatalogChange stale;
  stale.put = {MakeCatalogObject(CatalogKind::kSource, "c", R"({"name":"c"})")};
  stale.audit = MakeAudit(clock_.Now(), "config_change", "source c", 1);
  stale.if_version = 1;
  Status refused = store_->ApplyCatalogChange(stale);
  EXPECT_EQ(refused.code(), Status::Code::kUnavailable) << refused.ToString();
  EXPECT_NE(refused.message().find("changed meanwhile"), std::string::npos) << refused.message();
  auto listed = store_->ListCatalog();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 2u);
  EXPECT_EQ(*store_->CatalogVersion(), 2) << "a refused change raises nothing";
  auto audit = store_->ListAudit("", 10);
  ASSERT_TRUE(audit.ok());
  EXPECT_TRUE(audit->items.empty());

  stale.if_version = 2;
  EXPECT_TRUE(store_->ApplyCatalogChange(stale).ok());
  EXPECT_EQ(*store_->CatalogVersion(), 3);
  // A change refused for another reason raises nothing either.
  CatalogChange bad;
  bad.put = {MakeCatalogObject(CatalogKind::kSource, "", R"({})")};
  EXPECT_EQ(store_->ApplyCatalogChange(bad).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(*store_->CatalogVersion(), 3);
}

TEST_P(StoreConformanceTest, CatalogChangeRefusesBadObjectsAndWritesNothing) {
  CatalogChange bad;
  bad.put = {MakeCatalogObject(CatalogKind::kSource, "a", R"({"name":"a"})"),
             MakeCatalogObject(CatalogKind::kSource, "", R"({})")};
  bad.audit = MakeAudit(clock_.Now(), "config_change", "source a", 1);
  EXPECT_EQ(store_->ApplyCatalogChange(bad).code(), Status::Code::kInvalidArgument);
  bad.put = {MakeCatalogObject(CatalogKind::kSource, "a", "")};
  EXPECT_EQ(store_->ApplyCatalogChange(bad).code(), Status::Code::kInvalidArgument);
  bad.put = {MakeCatalogObject(CatalogKind::kSource, "a", R"({"name":"a"})", "elsewhere")};
  EXPECT_EQ(store_->ApplyCatalogChange(bad).code(), Status::Code::kInvalidArgument);
  bad.put = {MakeCatalogObject(CatalogKind::kSource, "a", R"({"name":"a"})")};
  bad.audit->action = "";
  EXPECT_EQ(store_->ApplyCatalogChange(bad).code(), Status::Code::kInvalidArgument);
  auto listed = store_->ListCatalog();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
  auto audit = store_->ListAudit("", 10);
  ASSERT_TRUE(audit.ok());
  EXPECT_TRUE(audit->items.empty());
}

TEST_P(StoreConformanceTest, CatalogChangeRequiringNoOpenDeliveriesChecksInItsTransaction) {
  CatalogChange add;
  add.put = {MakeCatalogObject(CatalogKind::kDestination, "billing",
                               R"({"name":"billing","url":"https://b.example/h"})")};
  ASSERT_TRUE(store_->ApplyCatalogChange(add).ok());
  Append(MakeEvent(clock_, random_, "{}", {"billing"}));

  CatalogChange del;
  del.remove = {{CatalogKind::kDestination, "billing"}};
  del.audit = MakeAudit(clock_.Now(), "config_change", "destination billing", 1);
  del.require_no_open_deliveries = {"billing"};
  Status refused = store_->ApplyCatalogChange(del);
  EXPECT_EQ(refused.code(), Status::Code::kFailedPrecondition) << refused.ToString();
  EXPECT_NE(refused.message().find("1 deliveries that are not delivered or failed"),
            std::string::npos)
      << refused.message();
  auto listed = store_->ListCatalog();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u) << "nothing removed";
  auto audit = store_->ListAudit("", 10);
  ASSERT_TRUE(audit.ok());
  EXPECT_TRUE(audit->items.empty()) << "nor audited";

  del.require_no_open_deliveries = {"crm"};  // another destination's: nothing open there
  EXPECT_TRUE(store_->ApplyCatalogChange(del).ok());
  listed = store_->ListCatalog();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

// A destination removed from the catalog takes its stored breaker and pause with it: one made
// again under the same name starts closed and unpaused. Rewritten (put), or removed and put in
// one change, it keeps them; other destinations keep theirs.
TEST_P(StoreConformanceTest, RemovingADestinationForgetsItsBreakerAndPause) {
  CatalogChange add;
  for (const char* name : {"billing", "crm"}) {
    add.put.push_back(MakeCatalogObject(
        CatalogKind::kDestination, name,
        std::string(R"({"name":")") + name + R"(","url":"https://b.example/h"})"));
  }
  ASSERT_TRUE(store_->ApplyCatalogChange(add).ok());
  const TimePoint t = clock_.Now();
  policy::BreakerConfig config;
  config.threshold = 1;
  for (const char* name : {"billing", "crm"}) {
    ASSERT_TRUE(store_->PauseDestination(name, "maintenance", t).ok());
    ASSERT_TRUE(store_->UpdateBreaker(name, config, {{policy::BreakerInput::kFailure, t}}).ok());
    ASSERT_EQ(store_->GetDestinationControl(name)->breaker.state, policy::BreakerState::kOpen);
  }
  // Rewritten, and removed and put again in one change: kept.
  ASSERT_TRUE(store_->ApplyCatalogChange(add).ok());
  CatalogChange replace;
  replace.remove = {{CatalogKind::kDestination, "billing"}};
  replace.put = {add.put[0]};
  ASSERT_TRUE(store_->ApplyCatalogChange(replace).ok());
  DestinationControl kept = *store_->GetDestinationControl("billing");
  EXPECT_EQ(kept.breaker.state, policy::BreakerState::kOpen);
  EXPECT_TRUE(kept.pause.has_value());

  CatalogChange del;
  del.remove = {{CatalogKind::kDestination, "billing"}};
  ASSERT_TRUE(store_->ApplyCatalogChange(del).ok());
  ASSERT_TRUE(store_->ApplyCatalogChange(replace).ok());  // made again
  DestinationControl fresh = *store_->GetDestinationControl("billing");
  EXPECT_EQ(fresh.breaker, policy::BreakerSnapshot{});
  EXPECT_FALSE(fresh.pause.has_value());
  EXPECT_EQ(store_->ListDestinationControls()->count("billing"), 0u);
  DestinationControl other = *store_->GetDestinationControl("crm");
  EXPECT_EQ(other.breaker.state, policy::BreakerState::kOpen);
  EXPECT_TRUE(other.pause.has_value());
}

// The deliveries require_no_open_deliveries counts: those not final (scheduled, delivering,
// paused), of that destination only.
// Ordered delivery: a delivery with an order key is claimed only as the head of its (destination,
// key) queue (the oldest one not final); keys proceed independently; unordered deliveries are not
// held; a retry keeps the head, a final state (delivered, failed for good) lets the next one go.
TEST_P(StoreConformanceTest, OrderedDeliveriesAreClaimedOnlyAsTheHeadOfTheirKey) {
  // key: A, B, A, none, B, A (in that order)
  std::vector<std::optional<std::string>> keys = {"A", "B", "A", std::nullopt, "B", "A"};
  std::vector<std::string> ids;
  for (const auto& k : keys) {
    NewEvent e = MakeEvent(clock_, random_, "{}", {"shop"});
    e.deliveries[0].order_key = k;
    ids.push_back(Append(e));
    clock_.Advance(milliseconds(1));
  }
  EXPECT_EQ(Deliveries(ids[0])[0].order_key, std::optional<std::string>("A"));
  EXPECT_FALSE(Deliveries(ids[3])[0].order_key.has_value());

  const TimePoint now = clock_.Now();
  auto event_ids = [](const std::vector<Delivery>& ds) {
    std::set<std::string> out;
    for (const Delivery& d : ds) out.insert(d.event_id);
    return out;
  };
  std::vector<Delivery> first = Claim(now, 10, hours(1), "s", "shop");
  EXPECT_EQ(event_ids(first), (std::set<std::string>{ids[0], ids[1], ids[3]}));
  // The heads are in flight: nothing else of A or B is claimable, by this owner or another.
  EXPECT_TRUE(Claim(now, 10, hours(1), "s", "shop").empty());
  EXPECT_TRUE(Claim(now, 10, hours(1), "other").empty());

  auto by_event = [&](const std::vector<Delivery>& ds, const std::string& id) {
    for (const Delivery& d : ds) {
      if (d.event_id == id) return d;
    }
    ADD_FAILURE() << "no delivery of " << id;
    return Delivery{};
  };
  // A's head fails and is scheduled for a retry in a minute: A stays held behind it.
  const Delivery a1 = by_event(first, ids[0]);
  ASSERT_TRUE(store_
                  ->RecordAttempt({a1.id, 1, now, 5, 500, std::nullopt, std::nullopt, "no"},
                                  {DeliveryStatus::kScheduled, now + minutes(1)}, "s")
                  .ok());
  EXPECT_TRUE(Claim(now, 10, hours(1), "s", "shop").empty());
  Result<std::optional<Delivery>> head = store_->OrderHead("shop", "A");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  ASSERT_TRUE(head->has_value());
  EXPECT_EQ((*head)->event_id, ids[0]);
  // B's head is delivered: B's next goes.
  const Delivery b1 = by_event(first, ids[1]);
  ASSERT_TRUE(store_
                  ->RecordAttempt({b1.id, 1, now, 5, 200, std::nullopt, std::nullopt, "ok"},
                                  {DeliveryStatus::kDelivered, now}, "s")
                  .ok());
  std::vector<Delivery> second = Claim(now, 10, hours(1), "s", "shop");
  EXPECT_EQ(event_ids(second), (std::set<std::string>{ids[4]}));

  // A's retry comes due: the head again, and only it.
  std::vector<Delivery> retry = Claim(now + minutes(1), 10, hours(1), "s", "shop");
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry[0].event_id, ids[0]);
  // It fails for good: skipped, the next of A goes (the one after it still waits).
  ASSERT_TRUE(store_
                  ->RecordAttempt({retry[0].id, 2, now, 5, 500, std::nullopt, std::nullopt, "no"},
                                  {DeliveryStatus::kFailed, now, std::nullopt, std::nullopt,
                                   Duration(0), "gave up"},
                                  "s")
                  .ok());
  std::vector<Delivery> third = Claim(now + minutes(1), 10, hours(1), "s");
  EXPECT_EQ(event_ids(third), (std::set<std::string>{ids[2]}));
  head = store_->OrderHead("shop", "A");
  ASSERT_TRUE(head.ok() && head->has_value());
  EXPECT_EQ((*head)->event_id, ids[2]);
  EXPECT_EQ((*head)->status, DeliveryStatus::kDelivering);
  head = store_->OrderHead("shop", "nothing");
  ASSERT_TRUE(head.ok());
  EXPECT_FALSE(head->has_value());
}

// GetEventDetail (the event page's one read): the event with its body, each delivery in creation
// order with its attempts, and for an ordered delivery that waits the head it waits for; none for
// the head itself, for an unordered delivery, or for an id that is no event.
TEST_P(StoreConformanceTest, GetEventDetailReadsTheEventDeliveriesAttemptsAndHeads) {
  NewEvent head_event = MakeEvent(clock_, random_, "{\"n\": 1}", {"shop", "billing"});
  head_event.deliveries[0].order_key = "A";
  const std::string head_id = Append(head_event);
  clock_.Advance(milliseconds(1));
  NewEvent waiting_event = MakeEvent(clock_, random_, "{\"n\": 2}", {"shop"});
  waiting_event.deliveries[0].order_key = "A";
  const std::string waiting_id = Append(waiting_event);

  const TimePoint now = clock_.Now();
  std::vector<Delivery> claimed = Claim(now, 10, hours(1), "s", "shop");
  ASSERT_EQ(claimed.size(), 1u);
  ASSERT_EQ(claimed[0].event_id, head_id);
  ASSERT_TRUE(store_
                  ->RecordAttempt({claimed[0].id, 1, now, 7, 503, std::nullopt, "30", "busy"},
                                  {DeliveryStatus::kScheduled, now + minutes(1)}, "s")
                  .ok());

  Result<std::optional<EventDetail>> head = store_->GetEventDetail(head_id);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  ASSERT_TRUE(head->has_value());
  EXPECT_EQ((*head)->event.id, head_id);
  EXPECT_EQ((*head)->event.body, "{\"n\": 1}");
  ASSERT_EQ((*head)->deliveries.size(), 2u);
  const DeliveryDetail& shop = (*head)->deliveries[0];
  EXPECT_EQ(shop.delivery.destination, "shop");
  EXPECT_EQ(shop.delivery.status, DeliveryStatus::kScheduled);
  EXPECT_EQ(shop.delivery.attempts, 1);
  ASSERT_EQ(shop.attempts.size(), 1u);
  EXPECT_EQ(shop.attempts[0].status_code, 503);
  EXPECT_EQ(shop.attempts[0].retry_after, "30");
  EXPECT_EQ(shop.attempts[0].response_snippet, "busy");
  EXPECT_FALSE(shop.held_behind.has_value());  // it is the head
  const DeliveryDetail& billing = (*head)->deliveries[1];
  EXPECT_EQ(billing.delivery.destination, "billing");
  EXPECT_TRUE(billing.attempts.empty());
  EXPECT_FALSE(billing.held_behind.has_value());  // not ordered

  Result<std::optional<EventDetail>> waiting = store_->GetEventDetail(waiting_id);
  ASSERT_TRUE(waiting.ok()) << waiting.status().ToString();
  ASSERT_TRUE(waiting->has_value());
  ASSERT_EQ((*waiting)->deliveries.size(), 1u);
  const DeliveryDetail& behind = (*waiting)->deliveries[0];
  EXPECT_TRUE(behind.attempts.empty());
  ASSERT_TRUE(behind.held_behind.has_value());
  EXPECT_EQ(behind.held_behind->event_id, head_id);
  EXPECT_EQ(behind.held_behind->attempts, 1);

  Result<std::optional<EventDetail>> none = store_->GetEventDetail("01JNOSUCHEVENT0000000000000");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->has_value());
  // The reads ended their transactions: the pooled reader reads on.
  Result<std::optional<EventDetail>> again = store_->GetEventDetail(head_id);
  ASSERT_TRUE(again.ok() && again->has_value());
}

// Issue 27: an event's type, whether a route took it and the routes that did not are stored and
// read back; the event list filters by type (exact, or a prefix with '*', counted in bytes) and
// by routed; an attempt made by a transform keeps what it sent.
TEST_P(StoreConformanceTest, TypesRouteMissesAndTransformedAttemptsRoundTrip) {
  NewEvent paid = MakeEvent(clock_, random_, "{}", {"billing"});
  paid.type = "invoice.paid";
  paid.route_misses = {{"stripe:crm", "crm", "type invoice.paid is not in [customer.*]"}};
  const std::string paid_id = Append(paid);
  clock_.Advance(milliseconds(1));
  NewEvent unrouted = MakeEvent(clock_, random_, "{}", {});
  unrouted.type = "invoice.é";  // a multi-byte type
  unrouted.routed = false;
  unrouted.route_misses = {{"stripe:billing", "billing", "x"}, {"stripe:crm", "crm", "y"}};
  const std::string unrouted_id = Append(unrouted);
  clock_.Advance(milliseconds(1));
  NewEvent untyped = MakeEvent(clock_, random_, "{}", {"billing"});
  const std::string untyped_id = Append(untyped);

  Result<std::optional<EventDetail>> d = store_->GetEventDetail(unrouted_id);
  ASSERT_TRUE(d.ok() && d->has_value()) << d.status().ToString();
  EXPECT_EQ((*d)->event.type, "invoice.é");
  EXPECT_FALSE((*d)->event.routed);
  EXPECT_EQ((*d)->event.route_misses, unrouted.route_misses);
  Result<std::optional<Event>> e = store_->GetEvent(untyped_id);
  ASSERT_TRUE(e.ok() && e->has_value());
  EXPECT_FALSE((*e)->type.has_value());
  EXPECT_TRUE((*e)->routed);
  EXPECT_TRUE((*e)->route_misses.empty());

  EXPECT_EQ(ListIds({.type = "invoice.*"}), (std::vector<std::string>{unrouted_id, paid_id}));
  EXPECT_EQ(ListIds({.type = "invoice.paid"}), (std::vector<std::string>{paid_id}));
  EXPECT_TRUE(ListIds({.type = "invoice.é*"}).empty());  // '*' is one or more more bytes
  EXPECT_EQ(ListIds({.type = "*"}), (std::vector<std::string>{unrouted_id, paid_id}));
  EXPECT_EQ(ListIds({.routed = false}), (std::vector<std::string>{unrouted_id}));
  EXPECT_EQ(ListIds({.type = "invoice.*", .routed = true}), (std::vector<std::string>{paid_id}));

  const TimePoint now = clock_.Now();
  std::vector<Delivery> claimed = Claim(now, 10, hours(1), "s", "billing");
  ASSERT_FALSE(claimed.empty());
  Attempt a{claimed[0].id, 1, now, 7, 200, std::nullopt, std::nullopt, ""};
  a.transformed = Attempt::Transformed{59, std::string(64, 'a'), "x-relayed-by"};
  ASSERT_TRUE(store_->RecordAttempt(a, {DeliveryStatus::kDelivered, now}, "s").ok());
  Result<std::optional<EventDetail>> sent = store_->GetEventDetail(claimed[0].event_id);
  ASSERT_TRUE(sent.ok() && sent->has_value());
  ASSERT_EQ((*sent)->deliveries[0].attempts.size(), 1u);
  EXPECT_EQ((*sent)->deliveries[0].attempts[0].transformed, a.transformed);
}

// Issue 28: a scoped token's reach (EventFilter::within) lists the events of its sources and those
// with a delivery to its destinations, with the other filters and across pages.
TEST_P(StoreConformanceTest, TheEventListKeepsToAReach) {
  std::vector<std::string> ids;
  auto append = [&](std::string source, std::vector<std::string> destinations) {
    const std::string id =
        Append(MakeEvent(clock_, random_, "{}", std::move(destinations), std::move(source)));
    clock_.Advance(milliseconds(1));
    return id;
  };
  const std::string to_billing = append("github", {"billing", "crm"});
  append("github", {"crm"});
  const std::string from_plain = append("plain", {});
  const std::string both = append("plain", {"billing"});
  append("odd\"name", {"crm"});
  const EventFilter::Reach reach{{"plain", "a\"quote"}, {"billing"}};
  EXPECT_EQ(ListIds({.within = reach}), (std::vector<std::string>{both, from_plain, to_billing}));
  EXPECT_EQ(ListIds({.source = "github", .within = reach}), (std::vector<std::string>{to_billing}));
  EXPECT_EQ(ListIds({.destination = "crm", .within = reach}),
            (std::vector<std::string>{to_billing}));
  EXPECT_TRUE(ListIds({.within = EventFilter::Reach{{}, {"nowhere"}}}).empty());
  EXPECT_EQ(ListIds({.within = EventFilter::Reach{{"odd\"name"}, {}}}).size(), 1u);
  // Two pages of two and one.
  Result<EventPage> first = store_->ListEvents({.within = reach}, "", 2);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->items.size(), 2u);
  Result<EventPage> second = store_->ListEvents({.within = reach}, first->next_cursor, 2);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_EQ(second->items.size(), 1u);
  EXPECT_EQ(second->items[0].id, to_billing);
  EXPECT_TRUE(second->next_cursor.empty());
}

// Issue 28: the wrapped data keys. The first is added only to an empty table; one per master key;
// never the last one deleted.
TEST_P(StoreConformanceTest, DataKeysAreAddedOncePerMasterKeyAndTheLastIsKept) {
  Result<std::vector<WrappedDataKey>> none = store_->ListDataKeys();
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
  const WrappedDataKey a{"aaaa", "wrapped-by-a", clock_.Now()};
  clock_.Advance(milliseconds(5));
  const WrappedDataKey b{"bbbb", "wrapped-by-b", clock_.Now()};
  ASSERT_TRUE(*store_->AddDataKey(a, /*only_if_none=*/true));
  EXPECT_FALSE(*store_->AddDataKey(b, /*only_if_none=*/true)) << "the table is not empty";
  EXPECT_FALSE(*store_->AddDataKey({"aaaa", "other", clock_.Now()}, false)) << "a's row exists";
  ASSERT_TRUE(*store_->AddDataKey(b, false));
  Result<std::vector<WrappedDataKey>> both = store_->ListDataKeys();
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(*both, (std::vector<WrappedDataKey>{a, b}));
  EXPECT_FALSE(*store_->DeleteDataKey("cccc"));
  ASSERT_TRUE(*store_->DeleteDataKey("aaaa"));
  Result<bool> last = store_->DeleteDataKey("bbbb");
  ASSERT_FALSE(last.ok());
  EXPECT_EQ(last.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(*store_->ListDataKeys(), (std::vector<WrappedDataKey>{b}));
  EXPECT_TRUE(store_->EraseOldCopies().ok());
  EXPECT_EQ(*store_->ListDataKeys(), (std::vector<WrappedDataKey>{b})) << "kept by erasing";
}

// The same key on two destinations is two queues; a lease that expires leaves the head the head.
TEST_P(StoreConformanceTest, OrderedQueuesArePerDestinationAndSurviveAnExpiredLease) {
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    NewEvent e = MakeEvent(clock_, random_, "{}", {"one", "two"});
    for (NewDelivery& d : e.deliveries) d.order_key = "";
    ids.push_back(Append(e));
    clock_.Advance(milliseconds(1));
  }
  const TimePoint now = clock_.Now();
  std::vector<Delivery> claimed = Claim(now, 10, seconds(30), "a");
  ASSERT_EQ(claimed.size(), 2u);  // the first event, once to each destination
  for (const Delivery& d : claimed) EXPECT_EQ(d.event_id, ids[0]);
  // The sender died: after its lease the head is claimed again, still not the one behind it.
  std::vector<Delivery> again = Claim(now + seconds(30), 10, seconds(30), "b", "one");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].event_id, ids[0]);
  ASSERT_TRUE(store_
                  ->RecordAttempt({again[0].id, 1, now, 5, 200, std::nullopt, std::nullopt, "ok"},
                                  {DeliveryStatus::kDelivered, now}, "b")
                  .ok());
  std::vector<Delivery> next = Claim(now + seconds(30), 10, seconds(30), "b", "one");
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].event_id, ids[1]);
  // "two"'s queue is its own: its head's lease expired too, and only that head is taken again.
  std::vector<Delivery> two = Claim(now + seconds(30), 10, seconds(30), "b", "two");
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0].event_id, ids[0]);
}

// The destination's held queues: those whose head has deliveries waiting behind it, longest
// waiting first, with the head (in flight when claimed, paused when paused), how many wait and
// since when; queues of one delivery, unordered deliveries and other destinations are not listed.
TEST_P(StoreConformanceTest, ListHeldQueuesNamesTheQueuesWaitingForTheirHead) {
  auto append = [&](const std::string& destination, std::optional<std::string> key) {
    NewEvent e = MakeEvent(clock_, random_, "{}", {destination});
    e.deliveries[0].order_key = std::move(key);
    const std::string id = Append(e);
    clock_.Advance(seconds(1));
    return id;
  };
  const TimePoint t0 = clock_.Now();
  // shop: A A A, B, C C (C's second arrives last), one unordered; other: A A; whole: "" "".
  const std::string a1 = append("shop", "A");
  append("shop", "A");  // t0 + 1 s: the oldest waiting delivery of A
  append("shop", "A");
  append("shop", "B");
  const std::string c1 = append("shop", "C");
  append("shop", std::nullopt);
  append("shop", "C");  // t0 + 6 s
  append("other", "A");
  append("other", "A");
  const std::string w1 = append("whole", "");
  append("whole", "");

  auto held = [&](const std::string& destination, int limit) {
    Result<HeldQueues> h = store_->ListHeldQueues(destination, limit);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    return h.ok() ? *h : HeldQueues{};
  };
  HeldQueues shop = held("shop", 10);
  EXPECT_EQ(shop.total, 2);
  ASSERT_EQ(shop.queues.size(), 2u);
  EXPECT_EQ(shop.queues[0].order_key, "A");
  EXPECT_EQ(shop.queues[0].head.event_id, a1);
  EXPECT_EQ(shop.queues[0].head.status, DeliveryStatus::kScheduled);
  EXPECT_EQ(shop.queues[0].head.destination, "shop");
  EXPECT_EQ(shop.queues[0].waiting, 2);
  EXPECT_EQ(shop.queues[0].waiting_since, t0 + seconds(1));
  EXPECT_EQ(shop.queues[1].order_key, "C");
  EXPECT_EQ(shop.queues[1].head.event_id, c1);
  EXPECT_EQ(shop.queues[1].waiting, 1);
  EXPECT_EQ(shop.queues[1].waiting_since, t0 + seconds(6));
  // The limit cuts the list, not the total.
  HeldQueues one = held("shop", 1);
  EXPECT_EQ(one.total, 2);
  ASSERT_EQ(one.queues.size(), 1u);
  EXPECT_EQ(one.queues[0].order_key, "A");
  HeldQueues whole = held("whole", 10);
  ASSERT_EQ(whole.queues.size(), 1u);
  EXPECT_EQ(whole.queues[0].order_key, "");
  EXPECT_EQ(whole.queues[0].head.event_id, w1);
  EXPECT_EQ(held("nowhere", 10).total, 0);
  EXPECT_TRUE(held("nowhere", 10).queues.empty());

  // A's and C's heads go out: listed in flight. A's is delivered: A holds one, since its third.
  const TimePoint now = clock_.Now();
  std::vector<Delivery> heads = Claim(now, 10, hours(1), "s", "shop");
  ASSERT_EQ(heads.size(), 4u);  // A, B, C's heads and the unordered one
  shop = held("shop", 10);
  ASSERT_EQ(shop.queues.size(), 2u);
  EXPECT_EQ(shop.queues[0].head.status, DeliveryStatus::kDelivering);
  for (const Delivery& d : heads) {
    if (d.event_id != a1) continue;
    ASSERT_TRUE(store_
                    ->RecordAttempt({d.id, 1, now, 5, 200, std::nullopt, std::nullopt, "ok"},
                                    {DeliveryStatus::kDelivered, now}, "s")
                    .ok());
  }
  shop = held("shop", 10);
  EXPECT_EQ(shop.total, 2);
  ASSERT_EQ(shop.queues.size(), 2u);
  EXPECT_EQ(shop.queues[0].order_key, "A");
  EXPECT_NE(shop.queues[0].head.event_id, a1);
  EXPECT_EQ(shop.queues[0].waiting, 1);
  EXPECT_EQ(shop.queues[0].waiting_since, t0 + seconds(2));

  // A paused destination's queues are still held, by a paused head once it is back.
  ASSERT_TRUE(store_->PauseDestination("whole", "operator", now).ok());
  whole = held("whole", 10);
  ASSERT_EQ(whole.queues.size(), 1u);
  EXPECT_EQ(whole.queues[0].head.status, DeliveryStatus::kPaused);
  EXPECT_EQ(whole.queues[0].waiting, 1);
}

// A delivery held behind its ordered queue's head is not due: NextDueAt and OldestDueAt (the
// stall alert's age) look past it, new or resumed, while CountDue still counts it as waiting.
TEST_P(StoreConformanceTest, DeliveriesHeldBehindTheirHeadAreNotDue) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    NewEvent e = MakeEvent(clock_, random_, "{}", {"shop"});
    e.deliveries[0].order_key = "A";
    ids.push_back(Append(e));
    clock_.Advance(seconds(1));
  }
  TimePoint now = clock_.Now();
  auto oldest = [&]() {
    Result<std::optional<TimePoint>> t = store_->OldestDueAt(now);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? *t : std::nullopt;
  };
  auto next = [&]() {
    Result<std::optional<TimePoint>> t = store_->NextDueAt("shop");
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? *t : std::nullopt;
  };
  ASSERT_EQ(oldest(), std::optional<TimePoint>(now - seconds(3)));  // the head, due since received
  std::vector<Delivery> head = Claim(now, 10, hours(1), "s", "shop");
  ASSERT_EQ(head.size(), 1u);
  EXPECT_EQ(head[0].event_id, ids[0]);
  // The head in flight: the two behind it are not due, though still counted as waiting.
  EXPECT_EQ(oldest(), std::nullopt);
  EXPECT_EQ(next(), std::nullopt);
  EXPECT_EQ(*store_->CountDue(now), 2);
  // It fails, retry in a minute: that is the next due time.
  ASSERT_TRUE(store_
                  ->RecordAttempt({head[0].id, 1, now, 5, 503, std::nullopt, std::nullopt, "no"},
                                  {DeliveryStatus::kScheduled, now + minutes(1)}, "s")
                  .ok());
  EXPECT_EQ(oldest(), std::nullopt);
  EXPECT_EQ(next(), std::optional<TimePoint>(now + minutes(1)));
  // An unordered delivery is due as ever.
  NewEvent plain = MakeEvent(clock_, random_, "{}", {"shop"});
  Append(plain);
  EXPECT_EQ(oldest(), std::optional<TimePoint>(now));
  ASSERT_EQ(Claim(now, 10, hours(1), "s", "shop").size(), 1u);
  EXPECT_EQ(oldest(), std::nullopt);

  // Paused and resumed: all three of A are due at the resume, but only the head may go.
  clock_.Advance(seconds(5));
  now = clock_.Now();
  ASSERT_TRUE(store_->PauseDestination("shop", "operator", now).ok());
  ASSERT_TRUE(store_->ResumeDestination("shop", now).ok());
  EXPECT_EQ(oldest(), std::optional<TimePoint>(now));
  head = Claim(now, 10, hours(1), "s", "shop");
  ASSERT_EQ(head.size(), 1u);
  EXPECT_EQ(head[0].event_id, ids[0]);
  EXPECT_EQ(oldest(), std::nullopt);
  EXPECT_EQ(next(), std::nullopt);
}

// A replay of an ordered delivery keeps its key and queues at the key's tail; paused and resumed
// deliveries keep their order.
TEST_P(StoreConformanceTest, OrderedReplaysQueueAtTheTailAndResumeKeepsTheOrder) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    NewEvent e = MakeEvent(clock_, random_, "{}", {"shop"});
    e.deliveries[0].order_key = "k";
    ids.push_back(Append(e));
    clock_.Advance(milliseconds(1));
  }
  TimePoint now = clock_.Now();
  ASSERT_TRUE(store_->PauseDestination("shop", "operator", now).ok());
  ASSERT_TRUE(store_->ResumeDestination("shop", now).ok());
  Result<Delivery> replay = store_->CreateReplay(ids[0], "shop", 5, now);
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_EQ(replay->order_key, std::optional<std::string>("k"));
  // The replay superseded chain 0 of ids[0] (failed as replaced): ids[1] is the head now, and
  // the replay comes after ids[2].
  std::vector<std::string> order;
  for (int round = 0; round < 3; ++round) {
    std::vector<Delivery> c = Claim(now, 10, seconds(30), "s", "shop");
    ASSERT_EQ(c.size(), 1u) << "round " << round;
    order.push_back(c[0].event_id + "/" + std::to_string(c[0].chain));
    ASSERT_TRUE(store_
                    ->RecordAttempt({c[0].id, 1, now, 5, 200, std::nullopt, std::nullopt, "ok"},
                                    {DeliveryStatus::kDelivered, now}, "s")
                    .ok());
  }
  EXPECT_EQ(order, (std::vector<std::string>{ids[1] + "/0", ids[2] + "/0", ids[0] + "/1"}));
  EXPECT_TRUE(Claim(now, 10, seconds(30), "s", "shop").empty());
}

TEST_P(StoreConformanceTest, OpenDeliveriesAreThoseNotFinal) {
  // The count a change requiring none would refuse with (0 when it is accepted).
  auto open = [&](const std::string& destination) -> int64_t {
    CatalogChange check;
    check.require_no_open_deliveries = {destination};
    Status st = store_->ApplyCatalogChange(check);
    if (st.ok()) return 0;
    EXPECT_EQ(st.code(), Status::Code::kFailedPrecondition) << st.ToString();
    const std::string prefix = "destination \"" + destination + "\" has ";
    EXPECT_EQ(st.message().rfind(prefix, 0), 0u) << st.message();
    return std::stoll(st.message().substr(prefix.size()));
  };
  EXPECT_EQ(open("billing"), 0);
  for (int i = 0; i < 3; ++i) Append(MakeEvent(clock_, random_, "{}", {"billing", "crm"}));
  EXPECT_EQ(open("billing"), 3);
  // Delivered and failed ones are final; paused and delivering ones are not.
  std::vector<Delivery> claimed = Claim(clock_.Now(), 2, seconds(30), "n1", "billing");
  ASSERT_EQ(claimed.size(), 2u);
  EXPECT_EQ(open("billing"), 3);
  for (size_t i = 0; i < claimed.size(); ++i) {
    Attempt a;
    a.delivery_id = claimed[i].id;
    a.n = 1;
    a.started_at = clock_.Now();
    a.status_code = i == 0 ? 200 : 404;
    DeliveryUpdate u;
    u.status = i == 0 ? DeliveryStatus::kDelivered : DeliveryStatus::kFailed;
    u.next_attempt_at = clock_.Now();
    ASSERT_TRUE(store_->RecordAttempt(a, u, "n1").ok());
  }
  EXPECT_EQ(open("billing"), 1);
  ASSERT_TRUE(store_->PauseDeliveries("billing", "maintenance").ok());
  EXPECT_EQ(open("billing"), 1);
  EXPECT_EQ(open("crm"), 3);
  EXPECT_EQ(open("nope"), 0);
}

// ---------------------------------------------------------------------------------------------
// API tokens (TokenStore)

// A token with every field set (revoked included), named `name`.
ApiToken FullToken(const std::string& name, TimePoint at) {
  ApiToken t;
  t.name = name;
  t.hash = std::string(64, 'a');
  t.role = "operator";
  t.scope = R"({"sources": ["stripe", "gh \"x\""], "destinations": ["crm"]})";
  t.created_at = at;
  t.expires_at = at + hours(24 * 90);
  t.created_by = "token:bootstrap \xc3\xa9";
  t.last_used_at = at + seconds(1);
  t.last_used_addr = "2001:db8::7";
  t.revoked = true;
  return t;
}

// A token with only what it must have: no expiry, no use, empty strings.
ApiToken BareToken(const std::string& name, TimePoint at) {
  ApiToken t;
  t.name = name;
  t.role = "admin";
  t.created_at = at;
  return t;
}

std::vector<ApiToken> ListedTokens(Store& store) {
  Result<std::vector<ApiToken>> all = store.ListTokens();
  EXPECT_TRUE(all.ok()) << all.status().ToString();
  return all.ok() ? *all : std::vector<ApiToken>{};
}

TEST_P(StoreConformanceTest, TokensRoundTripEveryFieldSetOrUnset) {
  EXPECT_TRUE(ListedTokens(*store_).empty());
  const ApiToken full = FullToken("ci-replays", clock_.Now());
  const ApiToken bare = BareToken("bootstrap", clock_.Now() + milliseconds(3));
  ASSERT_TRUE(store_->CreateToken(full).ok());
  ASSERT_TRUE(store_->CreateToken(bare).ok());
  EXPECT_EQ(ListedTokens(*store_), (std::vector<ApiToken>{bare, full}));
}

TEST_P(StoreConformanceTest, ATokenNameIsTakenOnce) {
  const ApiToken first = BareToken("ci", clock_.Now());
  ASSERT_TRUE(store_->CreateToken(first).ok());
  ApiToken second = FullToken("ci", clock_.Now() + seconds(1));
  second.revoked = false;
  Status clash = store_->CreateToken(second);
  EXPECT_EQ(clash.code(), Status::Code::kAlreadyExists) << clash.ToString();
  EXPECT_EQ(clash.field(), "name") << clash.ToString();
  EXPECT_NE(clash.message().find("a token named \"ci\" exists"), std::string::npos)
      << clash.ToString();
  EXPECT_EQ(ListedTokens(*store_), (std::vector<ApiToken>{first})) << "the first one is kept";
}

TEST_P(StoreConformanceTest, EnsureTokenAddsOnceAndThenChangesNothing) {
  const ApiToken bootstrap = BareToken("bootstrap", clock_.Now());
  Result<bool> added = store_->EnsureToken(bootstrap);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_TRUE(*added);
  // Another node (or the next start) ensures its own version: the stored row stays as it is.
  added = store_->EnsureToken(FullToken("bootstrap", clock_.Now() + hours(1)));
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_FALSE(*added);
  // A row created (not ensured) counts too.
  const ApiToken created = BareToken("ci", clock_.Now());
  ASSERT_TRUE(store_->CreateToken(created).ok());
  added = store_->EnsureToken(BareToken("ci", clock_.Now() + hours(2)));
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_FALSE(*added);
  EXPECT_EQ(ListedTokens(*store_), (std::vector<ApiToken>{bootstrap, created}));
}

TEST_P(StoreConformanceTest, DeleteTokenSaysWhetherThereWasOne) {
  const ApiToken ci = FullToken("ci", clock_.Now());
  const ApiToken keep = BareToken("keep", clock_.Now());
  ASSERT_TRUE(store_->CreateToken(ci).ok());
  ASSERT_TRUE(store_->CreateToken(keep).ok());
  Result<bool> deleted = store_->DeleteToken("ci");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_TRUE(*deleted);
  deleted = store_->DeleteToken("ci");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_FALSE(*deleted);
  deleted = store_->DeleteToken("nobody");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_FALSE(*deleted);
  EXPECT_EQ(ListedTokens(*store_), (std::vector<ApiToken>{keep}));
  // The name is free again.
  EXPECT_TRUE(store_->CreateToken(ci).ok());
}

TEST_P(StoreConformanceTest, ARevokedTokenStaysListed) {
  ApiToken bootstrap = BareToken("bootstrap", clock_.Now());
  bootstrap.last_used_at = clock_.Now();
  bootstrap.last_used_addr = "192.0.2.1";
  const ApiToken other = BareToken("other", clock_.Now());
  ASSERT_TRUE(store_->CreateToken(bootstrap).ok());
  ASSERT_TRUE(store_->CreateToken(other).ok());
  Result<bool> revoked = store_->RevokeToken("bootstrap");
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  EXPECT_TRUE(*revoked);
  revoked = store_->RevokeToken("bootstrap");
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  EXPECT_FALSE(*revoked) << "revoked already";
  revoked = store_->RevokeToken("nobody");
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  EXPECT_FALSE(*revoked);
  // Only `revoked` changed.
  bootstrap.revoked = true;
  EXPECT_EQ(ListedTokens(*store_), (std::vector<ApiToken>{bootstrap, other}));
  // A token stored revoked is not revoked again.
  ASSERT_TRUE(store_->CreateToken(FullToken("stored-revoked", clock_.Now())).ok());
  revoked = store_->RevokeToken("stored-revoked");
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  EXPECT_FALSE(*revoked);
}

TEST_P(StoreConformanceTest, TouchTokenMovesTheLastUseOnlyForward) {
  ApiToken ci = BareToken("ci", clock_.Now());
  const ApiToken other = BareToken("other", clock_.Now());
  ASSERT_TRUE(store_->CreateToken(ci).ok());
  ASSERT_TRUE(store_->CreateToken(other).ok());
  auto listed_ci = [&] {
    std::vector<ApiToken> all = ListedTokens(*store_);
    return all.empty() ? ApiToken{} : all[0];
  };
  // The first use is recorded.
  const TimePoint t = clock_.Now() + seconds(10);
  Status st = store_->TouchToken("ci", t, "192.0.2.1");
  ASSERT_TRUE(st.ok()) << st.ToString();
  ci.last_used_at = t;
  ci.last_used_addr = "192.0.2.1";
  EXPECT_EQ(listed_ci(), ci);
  // An earlier use (reported late by another node) and one at the same time change nothing.
  st = store_->TouchToken("ci", t - seconds(5), "198.51.100.2");
  ASSERT_TRUE(st.ok()) << st.ToString();
  st = store_->TouchToken("ci", t, "198.51.100.3");
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(listed_ci(), ci);
  // A later one replaces it.
  st = store_->TouchToken("ci", t + milliseconds(1), "::1");
  ASSERT_TRUE(st.ok()) << st.ToString();
  ci.last_used_at = t + milliseconds(1);
  ci.last_used_addr = "::1";
  EXPECT_EQ(listed_ci(), ci);
  // An unknown name is no error and adds nothing; the other token was never touched.
  st = store_->TouchToken("nobody", t + hours(1), "::1");
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(ListedTokens(*store_), (std::vector<ApiToken>{ci, other}));
}

TEST_P(StoreConformanceTest, ListTokensIsSortedByName) {
  const std::vector<std::string> names = {"zeta", "b", "a_b", "B", "bootstrap", "ab", "a-b", "a"};
  for (const std::string& name : names) {
    ASSERT_TRUE(store_->CreateToken(BareToken(name, clock_.Now())).ok()) << name;
  }
  std::vector<std::string> listed;
  for (const ApiToken& t : ListedTokens(*store_)) listed.push_back(t.name);
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());  // bytes: "B" < "a" < "a-b" < "a_b" < "ab" < "b"
  EXPECT_EQ(listed, sorted);
}

#ifdef HOOKRELAY_CONFORMANCE_POSTGRES
// A fresh database in the test binary's private cluster (tests/support/pg_cluster.h) for each
// store opened; `dir` is not used.
Result<std::unique_ptr<Store>> OpenPostgres(const std::string& /*dir*/, const Clock& clock) {
  std::string error;
  hookrelay::testing::PgCluster* cluster = hookrelay::testing::SharedPgCluster(&error);
  if (cluster == nullptr) return Status::Unavailable(error);
  const std::string url = cluster->CreateDatabase(&error);
  if (url.empty()) return Status::Unavailable(error);
  Result<StoreAddress> address = ParseStoreAddress(url);
  if (!address.ok()) return address.status();
  return OpenPostgresStore({.url = url, .display = address->display}, clock);
}

#else
Result<std::unique_ptr<Store>> OpenSqlite(const std::string& dir, const Clock& clock) {
  return OpenSqliteStore({.dir = dir}, clock);
}

// The wrapper with no faults armed must be indistinguishable from what it wraps.
Result<std::unique_ptr<Store>> OpenHealedFaultInjector(const std::string& dir, const Clock& clock) {
  Result<std::unique_ptr<Store>> s = OpenSqliteStore({.dir = dir}, clock);
  if (!s.ok()) return s.status();
  return std::unique_ptr<Store>(new FaultInjectingStore(std::move(*s)));
}

#endif

std::string FactoryName(const ::testing::TestParamInfo<StoreFactory>& info) {
  return info.param.name;
}

// The same suite is built twice (tests/conformance/CMakeLists.txt): store_conformance_test with
// the embedded store, each test a ctest test of its own, and store_conformance_postgres_test,
// which runs all its tests in one process, so that the one cluster it starts serves them all.
#ifdef HOOKRELAY_CONFORMANCE_POSTGRES
INSTANTIATE_TEST_SUITE_P(Stores, StoreConformanceTest,
                         ::testing::Values(StoreFactory{"postgres", OpenPostgres}), FactoryName);
#else
INSTANTIATE_TEST_SUITE_P(Stores, StoreConformanceTest,
                         ::testing::Values(StoreFactory{"sqlite", OpenSqlite},
                                           StoreFactory{"sqlite_behind_fault_injector",
                                                        OpenHealedFaultInjector}),
                         FactoryName);
#endif

}  // namespace
}  // namespace hookrelay::store
