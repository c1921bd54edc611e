#include "alerts/alert_batcher.h"

#include <gtest/gtest.h>

namespace hookrelay::alerts {
namespace {

using K = Alert::Kind;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

const TimePoint kT0 = FromUnixMillis(1'700'000'000'000);
const Duration kWindow = minutes(5);

Alert Make(K kind, std::string destination, TimePoint at, std::string reason = "r") {
  Alert a;
  a.kind = kind;
  a.destination = std::move(destination);
  a.at = at;
  a.reason = std::move(reason);
  return a;
}

// Adds an alert that happened at `now`.
std::vector<Alert> AddAt(AlertBatcher& b, K kind, const std::string& destination, TimePoint now,
                         std::string reason = "r") {
  return b.Add(Make(kind, destination, now, std::move(reason)), now);
}

std::vector<K> Kinds(const std::vector<Alert>& alerts) {
  std::vector<K> out;
  for (const auto& a : alerts) out.push_back(a.kind);
  return out;
}

TEST(AlertBatcherTest, TenThousandFailuresInOneWindowAreOneAlert) {
  AlertBatcher b(kWindow);
  for (int i = 0; i < 10000; ++i) {
    TimePoint now = kT0 + milliseconds(i * 20);  // spread over 200 s, inside the window
    auto out = AddAt(b, K::kDeliveriesFailed, "billing", now,
                     "404 Not Found is not retried (" + std::to_string(i % 5) + ")");
    ASSERT_TRUE(out.empty()) << i;
  }
  EXPECT_EQ(b.NextDue(), kT0 + kWindow);
  EXPECT_TRUE(b.Due(kT0 + kWindow - milliseconds(1)).empty());
  auto out = b.Due(kT0 + kWindow);
  ASSERT_EQ(out.size(), 1u);
  const Alert& a = out[0];
  EXPECT_EQ(a.kind, K::kDeliveriesFailed);
  EXPECT_EQ(a.destination, "billing");
  EXPECT_EQ(a.count, 10000);
  EXPECT_EQ(a.at, kT0);                                     // the first failure
  EXPECT_EQ(a.reason, "404 Not Found is not retried (4)");  // the latest
  EXPECT_EQ(a.sample_reasons, (std::vector<std::string>{"404 Not Found is not retried (0)",
                                                        "404 Not Found is not retried (1)",
                                                        "404 Not Found is not retried (2)"}));
  EXPECT_EQ(b.folded(), 9999);
  EXPECT_FALSE(b.NextDue().has_value());
  EXPECT_TRUE(b.Due(kT0 + hours(1)).empty());
}

TEST(AlertBatcherTest, SampleReasonsAreDistinct) {
  AlertBatcher b(kWindow);
  AddAt(b, K::kDeliveriesFailed, "d", kT0, "a");
  AddAt(b, K::kDeliveriesFailed, "d", kT0, "a");
  AddAt(b, K::kDeliveriesFailed, "d", kT0, "");
  AddAt(b, K::kDeliveriesFailed, "d", kT0, "b");
  auto out = b.Due(kT0 + kWindow);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].count, 4);
  EXPECT_EQ(out[0].sample_reasons, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(out[0].reason, "b");  // an empty reason does not replace a known one
}

TEST(AlertBatcherTest, CountsOfRaisedAlertsAddUp) {
  AlertBatcher b(kWindow);
  Alert a = Make(K::kDeliveriesFailed, "d", kT0);
  a.count = 40;
  b.Add(a, kT0);
  a.count = 2;
  b.Add(a, kT0 + seconds(1));
  a.count = 0;  // treated as 1
  b.Add(a, kT0 + seconds(2));
  auto out = b.Due(kT0 + kWindow);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].count, 43);
}

TEST(AlertBatcherTest, TwoDestinationsTwoAlerts) {
  AlertBatcher b(kWindow);
  for (int i = 0; i < 100; ++i) {
    AddAt(b, K::kDeliveriesFailed, "billing", kT0 + seconds(i));
    AddAt(b, K::kDeliveriesFailed, "crm", kT0 + seconds(10 + i));
  }
  EXPECT_EQ(b.NextDue(), kT0 + kWindow);
  auto first = b.Due(kT0 + kWindow);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].destination, "billing");
  EXPECT_EQ(first[0].count, 100);
  EXPECT_EQ(b.NextDue(), kT0 + seconds(10) + kWindow);
  auto second = b.Due(kT0 + seconds(10) + kWindow);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].destination, "crm");
  EXPECT_EQ(second[0].count, 100);
}

TEST(AlertBatcherTest, DueTogetherAreOrderedByTime) {
  AlertBatcher b(kWindow);
  AddAt(b, K::kDeliveriesFailed, "zeta", kT0);
  AddAt(b, K::kDeliveriesFailed, "alpha", kT0 + seconds(1));
  auto out = b.Due(kT0 + hours(1));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].destination, "zeta");
  EXPECT_EQ(out[1].destination, "alpha");
}

TEST(AlertBatcherTest, FailureAfterTheWindowStartsANewBatch) {
  AlertBatcher b(kWindow);
  AddAt(b, K::kDeliveriesFailed, "billing", kT0);
  AddAt(b, K::kDeliveriesFailed, "billing", kT0 + minutes(4));
  // The batch is due; adding another failure first hands it over, then opens a new batch.
  auto out = AddAt(b, K::kDeliveriesFailed, "billing", kT0 + minutes(6));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].count, 2);
  EXPECT_EQ(b.NextDue(), kT0 + minutes(6) + kWindow);
  auto next = b.Due(kT0 + minutes(11));
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].count, 1);
  EXPECT_EQ(next[0].at, kT0 + minutes(6));
}

TEST(AlertBatcherTest, FailureRightAtTheWindowEndStartsANewBatch) {
  AlertBatcher b(kWindow);
  AddAt(b, K::kDeliveriesFailed, "billing", kT0);
  auto out = AddAt(b, K::kDeliveriesFailed, "billing", kT0 + kWindow);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].count, 1);
  EXPECT_EQ(b.NextDue(), kT0 + 2 * kWindow);
}

TEST(AlertBatcherTest, StateChangesGoOutAtOnce) {
  AlertBatcher b(kWindow);
  for (K kind : {K::kBreakerOpened, K::kBreakerClosed, K::kDestinationPaused,
                 K::kDestinationResumed, K::kStalled}) {
    auto out = AddAt(b, kind, "billing", kT0);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].kind, kind);
    EXPECT_EQ(out[0].count, 1);
  }
  EXPECT_FALSE(b.NextDue().has_value());
}

TEST(AlertBatcherTest, RepeatWithinTheWindowIsHeldAndCounted) {
  AlertBatcher b(kWindow);
  ASSERT_EQ(AddAt(b, K::kStalled, "billing", kT0, "first").size(), 1u);
  EXPECT_TRUE(AddAt(b, K::kStalled, "billing", kT0 + minutes(1), "second").empty());
  EXPECT_TRUE(AddAt(b, K::kStalled, "billing", kT0 + minutes(2), "third").empty());
  EXPECT_EQ(b.folded(), 2);
  EXPECT_EQ(b.NextDue(), kT0 + kWindow);
  EXPECT_TRUE(b.Due(kT0 + kWindow - milliseconds(1)).empty());
  auto out = b.Due(kT0 + kWindow);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].count, 2);
  EXPECT_EQ(out[0].reason, "third");
  EXPECT_EQ(out[0].at, kT0 + minutes(2));
  // A new window started when it went out: a repeat now is held again ...
  EXPECT_TRUE(AddAt(b, K::kStalled, "billing", kT0 + kWindow + minutes(1)).empty());
  EXPECT_EQ(b.NextDue(), kT0 + 2 * kWindow);
  ASSERT_EQ(b.Due(kT0 + 2 * kWindow).size(), 1u);
  // ... and after a quiet window, the next one goes out at once.
  EXPECT_EQ(AddAt(b, K::kStalled, "billing", kT0 + 3 * kWindow).size(), 1u);
}

TEST(AlertBatcherTest, RepeatAfterTheWindowGoesOutAtOnce) {
  AlertBatcher b(kWindow);
  ASSERT_EQ(AddAt(b, K::kBreakerOpened, "billing", kT0).size(), 1u);
  auto out = AddAt(b, K::kBreakerOpened, "billing", kT0 + kWindow);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].count, 1);
}

TEST(AlertBatcherTest, RepeatsAreKeptApartByDestinationAndKind) {
  AlertBatcher b(kWindow);
  EXPECT_EQ(AddAt(b, K::kBreakerOpened, "billing", kT0).size(), 1u);
  EXPECT_EQ(AddAt(b, K::kBreakerOpened, "crm", kT0).size(), 1u);
  EXPECT_EQ(AddAt(b, K::kStalled, "billing", kT0).size(), 1u);
  EXPECT_EQ(AddAt(b, K::kDestinationPaused, "billing", kT0).size(), 1u);
  EXPECT_TRUE(AddAt(b, K::kBreakerOpened, "crm", kT0 + seconds(1)).empty());
}

TEST(AlertBatcherTest, OppositeKindFlushesAHeldRepeatFirst) {
  // Opened, opened again (held), then closed: the operator must end up reading "closed".
  AlertBatcher b(kWindow);
  ASSERT_EQ(AddAt(b, K::kBreakerOpened, "billing", kT0).size(), 1u);
  ASSERT_TRUE(AddAt(b, K::kBreakerOpened, "billing", kT0 + minutes(1)).empty());
  auto out = AddAt(b, K::kBreakerClosed, "billing", kT0 + minutes(2));
  EXPECT_EQ(Kinds(out), (std::vector<K>{K::kBreakerOpened, K::kBreakerClosed}));
  EXPECT_EQ(out[0].at, kT0 + minutes(1));
  EXPECT_FALSE(b.NextDue().has_value());
}

TEST(AlertBatcherTest, FlappingEndsWithTheLatestState) {
  AlertBatcher b(kWindow);
  EXPECT_EQ(Kinds(AddAt(b, K::kBreakerOpened, "billing", kT0)),
            (std::vector<K>{K::kBreakerOpened}));
  EXPECT_EQ(Kinds(AddAt(b, K::kBreakerClosed, "billing", kT0 + minutes(1))),
            (std::vector<K>{K::kBreakerClosed}));
  EXPECT_TRUE(AddAt(b, K::kBreakerOpened, "billing", kT0 + minutes(2)).empty());
  EXPECT_TRUE(AddAt(b, K::kBreakerClosed, "billing", kT0 + minutes(3)).empty());
  EXPECT_TRUE(AddAt(b, K::kBreakerOpened, "billing", kT0 + minutes(4)).empty());
  // The opened repeats fall due first and take the held "closed" along, in order: the last
  // message says the breaker is open, which it is.
  auto out = b.Due(kT0 + kWindow);
  ASSERT_EQ(Kinds(out), (std::vector<K>{K::kBreakerClosed, K::kBreakerOpened}));
  EXPECT_EQ(out[0].count, 1);
  EXPECT_EQ(out[1].count, 2);
  EXPECT_EQ(out[1].at, kT0 + minutes(4));
  EXPECT_FALSE(b.NextDue().has_value());
  EXPECT_TRUE(b.Due(kT0 + minutes(6)).empty());
}

TEST(AlertBatcherTest, PausedAndResumedArePaired) {
  AlertBatcher b(kWindow);
  AddAt(b, K::kDestinationPaused, "d", kT0);
  EXPECT_TRUE(AddAt(b, K::kDestinationPaused, "d", kT0 + minutes(1)).empty());
  EXPECT_EQ(Kinds(AddAt(b, K::kDestinationResumed, "d", kT0 + minutes(2))),
            (std::vector<K>{K::kDestinationPaused, K::kDestinationResumed}));
}

TEST(AlertBatcherTest, AddAlsoReturnsWhatIsDue) {
  AlertBatcher b(kWindow);
  AddAt(b, K::kDeliveriesFailed, "billing", kT0);
  auto out = AddAt(b, K::kBreakerOpened, "crm", kT0 + minutes(10));
  EXPECT_EQ(Kinds(out), (std::vector<K>{K::kDeliveriesFailed, K::kBreakerOpened}));
}

TEST(AlertBatcherTest, FlushReturnsEverythingWaiting) {
  AlertBatcher b(kWindow);
  AddAt(b, K::kDeliveriesFailed, "billing", kT0);
  AddAt(b, K::kDeliveriesFailed, "billing", kT0 + seconds(1));
  AddAt(b, K::kStalled, "crm", kT0);
  AddAt(b, K::kStalled, "crm", kT0 + seconds(2));
  auto out = b.Flush();
  ASSERT_EQ(Kinds(out), (std::vector<K>{K::kDeliveriesFailed, K::kStalled}));
  EXPECT_EQ(out[0].count, 2);
  EXPECT_EQ(out[1].count, 1);
  EXPECT_FALSE(b.NextDue().has_value());
  EXPECT_TRUE(b.Flush().empty());
}

TEST(AlertBatcherTest, NextDueIsTheEarliest) {
  AlertBatcher b(kWindow);
  EXPECT_FALSE(b.NextDue().has_value());
  AddAt(b, K::kDeliveriesFailed, "a", kT0 + minutes(2));
  AddAt(b, K::kStalled, "b", kT0);
  EXPECT_EQ(b.NextDue(), kT0 + minutes(2) + kWindow);  // nothing held for "b" yet
  AddAt(b, K::kStalled, "b", kT0 + minutes(1));
  EXPECT_EQ(b.NextDue(), kT0 + kWindow);
}

}  // namespace
}  // namespace hookrelay::alerts
