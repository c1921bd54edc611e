// The delivery engine with a scripted sender and a fake clock (issue 13): a real SQLite store in
// a temp directory, the real scheduler, claimer and recorder; the HTTP side is a RequestSender
// that records each request and answers it when the test says. Time moves only when the test
// moves the FakeClock: the scheduler sleeps through the clock, so moving it to the scheduler's
// deadline (FakeClock::NextDeadline) wakes it. The tests wait for conditions with a deadline,
// never for a fixed time.
#include "delivery/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "alerts/alert.h"
#include "common/clock.h"
#include "common/random.h"
#include "conformance/store_test_util.h"
#include "delivery/kinds/http/http_sender.h"
#include "delivery/request_sender.h"
#include "model/registry.h"
#include "policy/retry_policy.h"
#include "store/sqlite/open.h"
#include "store/store.h"
#include "support/fake_alert_sink.h"
#include "support/fault_injecting_store.h"
#include "support/log_capture.h"
#include "support/process.h"
#include "support/wait.h"

namespace hookrelay::delivery {
namespace {

using namespace std::chrono_literals;

// A RequestSender that keeps every request until the test answers it (or answers at once with
// an automatic status, when one is set).
class ScriptedSender final : public RequestSender {
 public:
  explicit ScriptedSender(const Clock& clock) : clock_(clock) {}

  void Send(SendRequest request, Callback done) override {
    std::optional<int> auto_status;
    size_t index;
    {
      std::lock_guard lock(mu_);
      index = sent_.size();
      sent_.push_back({std::move(request), clock_.Now(), std::move(done), false});
      outstanding_++;
      max_outstanding_ = std::max(max_outstanding_, outstanding_);
      auto_status = auto_status_;
    }
    cv_.notify_all();
    if (auto_status) Answer(index, *auto_status);
  }
  int InFlight() const override {
    std::lock_guard lock(mu_);
    return outstanding_;
  }

  // Answers request `i` (in the order sent) with an HTTP status (and Retry-After), or with a
  // transport error when `error` is set. The callback runs on the calling thread.
  void Answer(size_t i, int status, std::optional<std::string> retry_after = std::nullopt,
              policy::TransportError error = policy::TransportError::kNone) {
    Callback done;
    SendResult r;
    {
      std::lock_guard lock(mu_);
      Sent& s = sent_.at(i);
      ASSERT_FALSE(s.answered) << "request " << i << " answered twice";
      s.answered = true;
      outstanding_--;
      done = std::move(s.done);
      r.tag = s.request.tag;
      r.started_at = s.at;
    }
    r.duration = 7ms;
    r.outcome.status_code = status;
    r.outcome.error = error;
    r.outcome.retry_after = std::move(retry_after);
    if (error != policy::TransportError::kNone) r.error_detail = "scripted transport error";
    done(std::move(r));
  }
  // From now on, every request (and every one waiting) is answered with `status` at once.
  void AnswerAllWith(int status) {
    std::vector<size_t> waiting;
    {
      std::lock_guard lock(mu_);
      auto_status_ = status;
      for (size_t i = 0; i < sent_.size(); ++i) {
        if (!sent_[i].answered) waiting.push_back(i);
      }
    }
    for (size_t i : waiting) Answer(i, status);
  }

  size_t sent() const {
    std::lock_guard lock(mu_);
    return sent_.size();
  }
  bool WaitForSent(size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return sent_.size() >= n; });
  }
  TimePoint sent_at(size_t i) const {
    std::lock_guard lock(mu_);
    return sent_.at(i).at;
  }
  uint64_t tag(size_t i) const {
    std::lock_guard lock(mu_);
    return sent_.at(i).request.tag;
  }
  std::string header(size_t i, const std::string& name) const {
    std::lock_guard lock(mu_);
    for (const auto& [k, v] : sent_.at(i).request.headers) {
      if (k == name) return v;
    }
    return "";
  }
  int outstanding() const { return InFlight(); }
  int max_outstanding() const {
    std::lock_guard lock(mu_);
    return max_outstanding_;
  }

 private:
  struct Sent {
    SendRequest request;
    TimePoint at;  // the clock's time when it was sent
    Callback done;
    bool answered = false;
  };
  const Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Sent> sent_;  // GUARDED_BY(mu_)
  int outstanding_ = 0;     // GUARDED_BY(mu_)
  int max_outstanding_ = 0;
  std::optional<int> auto_status_;
};

using Alerts = hookrelay::testing::FakeAlertSink;

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::OpenSqliteStore({.dir = dir_.path()}, clock_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(*opened);
  }
  void TearDown() override {
    if (engine_) engine_->Stop(0ms);
  }

  // A destination with a deterministic policy: retries after 10 s, 20 s, 40 s (no jitter).
  static model::Destination Dest(const std::string& name) {
    model::Destination d;
    d.name = name;
    d.url = "http://hooks.example.test/" + name;
    d.policy = *policy::PresetPolicy("default");
    d.policy.strategy = policy::Strategy::kLadder;
    d.policy.jitter = policy::Jitter::kNone;
    d.policy.ladder = {10s, 20s, 40s};
    d.policy.max_attempts = 4;
    d.policy.max_duration = 1h;
    d.breaker.threshold = 1000;
    d.max_concurrency = 4;
    return d;
  }
  void SetDestinations(const std::vector<model::Destination>& ds) {
    model::Catalog catalog;
    for (const auto& d : ds) catalog.destinations.emplace(d.name, d);
    ASSERT_TRUE(registry_.Replace(std::move(catalog)).ok());
  }
  // Stores an event routed to `destination` and wakes the engine (as ingest does).
  std::string Append(const std::string& destination) {
    auto e = store_->AppendEventSync(store::test::MakeEvent(clock_, random_, "{}", {destination}));
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    if (engine_) engine_->Wake();
    return e.ok() ? e->id : "";
  }
  store::Delivery DeliveryOf(const std::string& event_id) {
    auto ds = store_->GetDeliveries(event_id);
    EXPECT_TRUE(ds.ok() && ds->size() == 1);
    return ds.ok() && !ds->empty() ? (*ds)[0] : store::Delivery{};
  }
  // A destination sending one request at a time whose breaker opens after 3 failures, for 60 s.
  static model::Destination BreakerDest(const std::string& name) {
    model::Destination d = Dest(name);
    d.breaker.threshold = 3;
    d.breaker.open_periods = {60s};
    d.max_concurrency = 1;
    return d;
  }

  // Answers the first `n` requests 500 as they come, then waits until `destination`'s breaker is
  // open and its alert raised.
  ::testing::AssertionResult FailUntilOpen(size_t n, const std::string& destination) {
    for (size_t i = 0; i < n; ++i) {
      if (!sender_.WaitForSent(i + 1)) return ::testing::AssertionFailure() << "request " << i;
      sender_.Answer(i, 500);
    }
    if (!test::WaitFor([&] {
          return engine_->Destinations()[destination].breaker.state ==
                     policy::BreakerState::kOpen &&
                 alerts_.count(alerts::Alert::Kind::kBreakerOpened) == 1;
        })) {
      return ::testing::AssertionFailure() << "the breaker of " << destination << " is not open";
    }
    return ::testing::AssertionSuccess();
  }

  bool WaitForStatus(const std::string& event_id, store::DeliveryStatus status, int attempts = -1) {
    return test::WaitFor([&] {
      store::Delivery d = DeliveryOf(event_id);
      return d.status == status && (attempts < 0 || d.attempts == attempts);
    });
  }
  size_t AttemptsOf(int64_t delivery_id) {
    auto a = store_->GetAttempts(delivery_id);
    return a.ok() ? a->size() : 0;
  }

  // The store wrapped so a test can hold its claims; it outlives the engine (declared before it).
  store::FaultInjectingStore& Faulty() {
    if (!faulty_) faulty_ = std::make_unique<store::FaultInjectingStore>(store_.get());
    return *faulty_;
  }

  // Starts the engine on `store` (default: store_) with `sender`; every claim is logged (claims_).
  void StartEngine(RequestSender& sender, store::Store* store = nullptr,
                   Duration poll_interval = 50ms) {
    EngineOptions options;
    options.node_id = "n1";
    options.poll_interval = poll_interval;
    options.on_claim = [this](const std::string& destination, TimePoint now, int got) {
      {
        std::lock_guard lock(claims_mu_);
        claims_.push_back({destination, now, got});
      }
      claims_cv_.notify_all();
    };
    engine_ = std::make_unique<DeliveryEngine>(store ? *store : *store_, registry_, sender,
                                               &alerts_, clock_, random_, options);
    engine_->Start();
  }
  // How many deliveries the claims logged so far took, over all destinations.
  int Claimed() {
    std::lock_guard lock(claims_mu_);
    int n = 0;
    for (const Claim& c : claims_) n += c.got;
    return n;
  }
  // Waits until `destination` was claimed at `at` or later (the engine has looked at it then).
  bool WaitForClaimAt(const std::string& destination, TimePoint at) {
    std::unique_lock lock(claims_mu_);
    return claims_cv_.wait_for(lock, 10s, [&] {
      return std::any_of(claims_.begin(), claims_.end(), [&](const Claim& c) {
        return c.destination == destination && c.now >= at;
      });
    });
  }

  // One whole pass of the scheduler after now: it is asleep (the only thread waiting through
  // the clock here), the clock moves to its deadline, and it is asleep again.
  ::testing::AssertionResult SchedulerPass() {
    // (A scheduler woken by a Wake meanwhile is asleep again at once: then move on its next
    // deadline.)
    bool advanced = false;
    for (int i = 0; i < 100 && !advanced; ++i) {
      if (!clock_.AwaitWaiters(1)) return ::testing::AssertionFailure() << "scheduler not asleep";
      advanced = clock_.AdvanceToNextDeadline().has_value();
    }
    if (!advanced) return ::testing::AssertionFailure() << "no deadline";
    if (!clock_.AwaitWaiters(1)) return ::testing::AssertionFailure() << "no pass";
    return ::testing::AssertionSuccess();
  }

  // Moves simulated time to `t`, which the test has just seen as the scheduler's deadline
  // (NextDeadline() == t). Not AdvanceToNextDeadline(): between that check and the move the
  // scheduler may be woken by something else (the recorder's notify after a commit) and be
  // re-computing its sleep, so for a moment nobody waits; on a slow machine (ASan) the move then
  // found no deadline and the test failed. Moving to `t` itself is the same step either way: a
  // waiter that registers `t` again afterwards finds it due at once.
  void MoveClockTo(TimePoint t) {
    ASSERT_GE(t, clock_.Now());
    clock_.Advance(t - clock_.Now());
  }

  struct Claim {
    std::string destination;
    TimePoint now;
    int got;
  };

  hookrelay::testing::TempDir dir_;
  FakeClock clock_;
  SeededRandom random_{13};
  std::unique_ptr<store::Store> store_;
  model::Registry registry_;
  ScriptedSender sender_{clock_};
  Alerts alerts_;
  std::mutex claims_mu_;
  std::condition_variable claims_cv_;
  std::vector<Claim> claims_;  // GUARDED_BY(claims_mu_)
  std::unique_ptr<store::FaultInjectingStore> faulty_;
  std::unique_ptr<DeliveryEngine> engine_;  // destroyed first: it calls into everything above
};

// Attempt 2 leaves at next_attempt_at on the engine's clock: not a millisecond before (the
// engine has looked and found nothing due), and as soon as the clock passes it. Retry-After
// (120 s, longer than the ladder's 10 s) sets the time.
TEST_F(EngineTest, RetryIsSentWhenTheClockReachesItsTimeAndNotBefore) {
  SetDestinations({Dest("a")});
  const std::string event = Append("a");
  StartEngine(sender_);
  ASSERT_TRUE(sender_.WaitForSent(1));
  const TimePoint failed_at = clock_.Now();
  sender_.Answer(0, 503, "120");
  ASSERT_TRUE(WaitForStatus(event, store::DeliveryStatus::kScheduled, 1));
  const TimePoint due = DeliveryOf(event).next_attempt_at;
  EXPECT_EQ(due, failed_at + 120s);

  clock_.Set(due - 1ms);
  engine_->Wake();
  ASSERT_TRUE(WaitForClaimAt("a", due - 1ms));
  EXPECT_EQ(sender_.sent(), 1u) << "attempt 2 left before its time";

  clock_.Set(due);
  engine_->Wake();
  ASSERT_TRUE(sender_.WaitForSent(2));
  EXPECT_GE(sender_.sent_at(1), due);
  EXPECT_EQ(sender_.tag(1), sender_.tag(0));  // the same delivery…
  EXPECT_EQ(sender_.header(1, "webhook-id"), sender_.header(0, "webhook-id"));  // …same id
  sender_.Answer(1, 200);
  ASSERT_TRUE(WaitForStatus(event, store::DeliveryStatus::kDelivered, 2));
  EXPECT_EQ(AttemptsOf(DeliveryOf(event).id), 2u);
  EXPECT_EQ(sender_.sent(), 2u);
}

// Simulated time, no Wake: the scheduler sleeps through its clock exactly until the retry is
// due (poll_interval is an hour, so nothing else wakes it), and moving the clock to that deadline
// sends attempt 2 at next_attempt_at, without any real time passing.
// What serve's watchdog reads (issue 29): none before Start, then each round of the scheduler
// (here woken by Wake, the clock standing still) is a newer one.
TEST_F(EngineTest, LastRoundSaysWhenTheSchedulerLastBeganARound) {
  SetDestinations({Dest("a")});
  EngineOptions options;
  engine_ = std::make_unique<DeliveryEngine>(*store_, registry_, sender_, &alerts_, clock_, random_,
                                             options);
  EXPECT_FALSE(engine_->LastRound().has_value());
  StartEngine(sender_, nullptr, 1h);
  ASSERT_TRUE(test::WaitFor([&] { return engine_->LastRound().has_value(); }));
  const auto first = *engine_->LastRound();
  ASSERT_TRUE(test::WaitFor([&] {
    engine_->Wake();
    return *engine_->LastRound() > first;
  }));
}

TEST_F(EngineTest, SchedulerSleepsUntilTheRetryIsDueOnSimulatedTime) {
  SetDestinations({Dest("a")});
  const std::string event = Append("a");
  StartEngine(sender_, nullptr, 1h);
  ASSERT_TRUE(sender_.WaitForSent(1));
  const TimePoint failed_at = clock_.Now();
  sender_.Answer(0, 503);  // the ladder's first step: 10 s
  ASSERT_TRUE(WaitForStatus(event, store::DeliveryStatus::kScheduled, 1));
  const TimePoint due = DeliveryOf(event).next_attempt_at;
  EXPECT_EQ(due, failed_at + 10s);
  ASSERT_TRUE(test::WaitFor([&] { return clock_.NextDeadline() == due; }))
      << "the scheduler does not sleep until the retry is due";
  EXPECT_EQ(sender_.sent(), 1u);

  MoveClockTo(due);
  ASSERT_TRUE(sender_.WaitForSent(2));
  EXPECT_EQ(sender_.sent_at(1), due);
  sender_.Answer(1, 200);
  ASSERT_TRUE(WaitForStatus(event, store::DeliveryStatus::kDelivered, 2));
  EXPECT_EQ(sender_.sent(), 2u);
}

// The breaker's timers on simulated time: open after the failure, the scheduler sleeps until the
// open period ends, sends exactly one probe then; a failed probe opens it for the next period
// (120 s), and the next probe goes at its end. Nothing leaves in between.
TEST_F(EngineTest, BreakerPauseAndProbeFollowTheSimulatedClock) {
  model::Destination d = Dest("b");
  d.breaker.threshold = 1;
  d.breaker.open_periods = {60s, 120s};
  d.max_concurrency = 1;
  SetDestinations({d});
  const std::string event = Append("b");
  StartEngine(sender_, nullptr, 1h);
  ASSERT_TRUE(sender_.WaitForSent(1));
  const TimePoint t0 = clock_.Now();
  sender_.Answer(0, 500);
  // The attempt is recorded before simulated time moves on: a jump past its lease while the
  // recorder is still behind (a loaded machine) would let the probe's claim take the delivery
  // from under it.
  ASSERT_TRUE(test::WaitFor([&] { return DeliveryOf(event).attempts == 1; }));
  ASSERT_TRUE(test::WaitFor([&] { return clock_.NextDeadline() == t0 + 60s; }))
      << "the scheduler does not sleep until the breaker half-opens";
  EXPECT_EQ(engine_->Destinations()["b"].breaker.state, policy::BreakerState::kOpen);
  EXPECT_EQ(sender_.sent(), 1u);

  MoveClockTo(t0 + 60s);
  ASSERT_TRUE(sender_.WaitForSent(2));  // the probe
  EXPECT_EQ(sender_.sent_at(1), t0 + 60s);
  EXPECT_EQ(sender_.outstanding(), 1);
  sender_.Answer(1, 500);  // the probe fails: open again, for 120 s (and is not counted)
  ASSERT_TRUE(test::WaitFor([&] { return AttemptsOf(DeliveryOf(event).id) == 2; }));
  EXPECT_EQ(DeliveryOf(event).attempts, 1);
  ASSERT_TRUE(test::WaitFor([&] { return clock_.NextDeadline() == t0 + 180s; }));
  EXPECT_EQ(sender_.sent(), 2u);

  MoveClockTo(t0 + 180s);
  ASSERT_TRUE(sender_.WaitForSent(3));
  EXPECT_EQ(sender_.sent_at(2), t0 + 180s);
  sender_.Answer(2, 200);
  ASSERT_TRUE(WaitForStatus(event, store::DeliveryStatus::kDelivered, 2));
  ASSERT_TRUE(test::WaitFor(
      [&] { return engine_->Destinations()["b"].breaker.state == policy::BreakerState::kClosed; }));
  EXPECT_EQ(sender_.sent(), 3u);
  EXPECT_EQ(sender_.max_outstanding(), 1);
}

// Issue 32.2: the breaker trips again and again, and each time the same delivery (the first due)
// is the half-open probe. The probe is the breaker's question, not the delivery's: its failures
// are recorded as attempts marked as probes, but spend none of the delivery's max_attempts (4),
// so it is not "failed for good" by the sixth probe while the delivery behind it waits; once a
// probe succeeds both are delivered, the probed one on its 2nd counted attempt.
TEST_F(EngineTest, FailedProbesSpendNoneOfTheProbedDeliverysAttempts) {
  model::Destination d = Dest("b");
  d.breaker.threshold = 1;
  d.breaker.open_periods = {60s};
  d.max_concurrency = 1;
  SetDestinations({d});
  const std::string first = Append("b");
  const std::string behind = Append("b");
  const int64_t first_id = DeliveryOf(first).id;
  StartEngine(sender_, nullptr, 1h);
  ASSERT_TRUE(sender_.WaitForSent(1));
  ASSERT_EQ(sender_.tag(0), static_cast<uint64_t>(first_id));
  sender_.Answer(0, 500);  // attempt 1 of 4 fails: the breaker opens
  ASSERT_TRUE(test::WaitFor([&] { return AttemptsOf(first_id) == 1; }));
  constexpr size_t kFailedProbes = 6;
  for (size_t k = 0; k < kFailedProbes; ++k) {
    std::optional<TimePoint> open_until;
    ASSERT_TRUE(test::WaitFor([&] {
      open_until = engine_->Destinations()["b"].breaker.open_until;
      return engine_->Destinations()["b"].breaker.state == policy::BreakerState::kOpen &&
             open_until && clock_.NextDeadline() == *open_until;
    })) << "probe "
        << k;
    MoveClockTo(*open_until);
    ASSERT_TRUE(sender_.WaitForSent(k + 2)) << "probe " << k;
    EXPECT_EQ(sender_.tag(k + 1), static_cast<uint64_t>(first_id)) << "probe " << k;
    sender_.Answer(k + 1, 503);
    // Recorded before the clock moves on (as in the test above).
    ASSERT_TRUE(test::WaitFor([&] { return AttemptsOf(first_id) == k + 2; })) << "probe " << k;
    store::Delivery probed = DeliveryOf(first);
    EXPECT_NE(probed.status, store::DeliveryStatus::kFailed)
        << "probe " << k << " failed the delivery: " << probed.reason.value_or("");
    EXPECT_EQ(probed.attempts, 1) << "probe " << k;
  }
  EXPECT_EQ(sender_.sent(), 1 + kFailedProbes);
  EXPECT_NE(DeliveryOf(behind).status, store::DeliveryStatus::kFailed);
  EXPECT_EQ(DeliveryOf(behind).attempts, 0);

  // The next probe succeeds: the breaker closes and both are delivered.
  std::optional<TimePoint> open_until;
  ASSERT_TRUE(test::WaitFor([&] {
    open_until = engine_->Destinations()["b"].breaker.open_until;
    return open_until && clock_.NextDeadline() == *open_until;
  }));
  MoveClockTo(*open_until);
  sender_.AnswerAllWith(200);
  ASSERT_TRUE(WaitForStatus(first, store::DeliveryStatus::kDelivered, 2));
  ASSERT_TRUE(WaitForStatus(behind, store::DeliveryStatus::kDelivered, 1));
  auto attempts = store_->GetAttempts(first_id);
  ASSERT_TRUE(attempts.ok());
  ASSERT_EQ(attempts->size(), kFailedProbes + 2);
  EXPECT_FALSE((*attempts)[0].probe);
  EXPECT_TRUE((*attempts)[0].counted);
  for (size_t k = 1; k <= kFailedProbes; ++k) {
    EXPECT_EQ((*attempts)[k].n, static_cast<int>(k + 1));
    EXPECT_TRUE((*attempts)[k].probe) << k;
    EXPECT_FALSE((*attempts)[k].counted) << k;
  }
  EXPECT_TRUE(attempts->back().probe);  // the probe that closed the breaker counts
  EXPECT_TRUE(attempts->back().counted);
  EXPECT_EQ(DeliveryOf(first).uncounted_attempts, static_cast<int>(kFailedProbes));
}

// Threshold 3: exactly three requests reach the sender, then none while the breaker is open
// (the engine looks, and shows new work as paused), then one probe once the clock passes the
// open period, and after the probe's success everything is delivered.
TEST_F(EngineTest, BreakerOpensWithNoRequestAfterTheFailureThatOpensIt) {
  SetDestinations({BreakerDest("b")});
  std::vector<std::string> events;
  for (int i = 0; i < 6; ++i) events.push_back(Append("b"));
  StartEngine(sender_);
  // Recorded, and acted on (the waiting deliveries shown as paused, then the alert).
  ASSERT_TRUE(FailUntilOpen(3, "b"));
  EXPECT_EQ(engine_->Stats().retries_scheduled, 3);
  const TimePoint open_until = *engine_->Destinations()["b"].breaker.open_until;
  // New work while open: the scheduler looks (a second later) and shows it as paused.
  const std::string late = Append("b");
  events.push_back(late);
  clock_.Advance(1s);
  engine_->Wake();
  ASSERT_TRUE(WaitForStatus(late, store::DeliveryStatus::kPaused));
  EXPECT_EQ(sender_.sent(), 3u) << "a request left while the breaker was open";

  clock_.Set(open_until);
  engine_->Wake();
  ASSERT_TRUE(sender_.WaitForSent(4));
  EXPECT_GE(sender_.sent_at(3), open_until);
  EXPECT_EQ(engine_->Destinations()["b"].breaker.state, policy::BreakerState::kHalfOpen);
  EXPECT_EQ(sender_.outstanding(), 1);  // exactly one probe
  // Half-open made the paused deliveries due now; the probe's success closes the breaker.
  sender_.AnswerAllWith(200);
  for (const std::string& e : events) {
    ASSERT_TRUE(WaitForStatus(e, store::DeliveryStatus::kDelivered)) << e;
  }
  EXPECT_EQ(sender_.sent(), 3u + events.size());  // three failures, then one success each
  EXPECT_EQ(sender_.max_outstanding(), 1);
}

// One node on SQLite whose process dies while its half-open probe is out: the breaker row
// survives, half-open with the probe out. The restarted engine sends nothing until the probe's
// lease (policy::kProbeLease) ends, then probes again; its success closes the breaker and the
// backlog (the lost probe's delivery too) is delivered.
TEST_F(EngineTest, AProbeLostInARestartIsSentAgainAfterItsLease) {
  SetDestinations({BreakerDest("b")});
  std::vector<std::string> events;
  for (int i = 0; i < 3; ++i) events.push_back(Append("b"));
  StartEngine(sender_);
  ASSERT_TRUE(FailUntilOpen(3, "b"));
  const TimePoint open_until = *engine_->Destinations()["b"].breaker.open_until;
  clock_.Set(open_until);
  engine_->Wake();
  ASSERT_TRUE(sender_.WaitForSent(4));  // the probe: never answered
  const std::string lost_id = sender_.header(3, "webhook-id");
  engine_->Stop(0ms);
  engine_.reset();
  store_.reset();
  auto reopened = store::OpenSqliteStore({.dir = dir_.path()}, clock_);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  store_ = std::move(*reopened);
  Result<std::optional<policy::BreakerSnapshot>> row = store_->GetBreaker("b");
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ((*row)->state, policy::BreakerState::kHalfOpen);
  EXPECT_TRUE((*row)->probe_in_flight);
  EXPECT_EQ((*row)->open_until, open_until) << "when the probe was let through";

  // (sender_ keeps the lost request unanswered: its callback belonged to the stopped engine.)
  StartEngine(sender_);
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  clock_.Set(open_until + policy::kProbeLease - 1s);
  ASSERT_TRUE(clock_.AwaitWaiters(1));  // a pass within the lease: nothing sent
  EXPECT_EQ(sender_.sent(), 4u) << "a probe within the lease";
  EXPECT_EQ(engine_->Destinations()["b"].breaker.state, policy::BreakerState::kHalfOpen);
  clock_.Set(open_until + policy::kProbeLease);
  ASSERT_TRUE(sender_.WaitForSent(5));
  EXPECT_EQ(sender_.outstanding(), 2) << "the lost one and exactly one new probe";
  sender_.Answer(4, 200);
  for (size_t i = 5; i < 7; ++i) {
    ASSERT_TRUE(sender_.WaitForSent(i + 1));
    sender_.Answer(i, 200);
  }
  for (const std::string& e : events) {
    ASSERT_TRUE(WaitForStatus(e, store::DeliveryStatus::kDelivered)) << e;
  }
  EXPECT_EQ(engine_->Destinations()["b"].breaker.state, policy::BreakerState::kClosed);
  // (The close is alerted once its record is written; the backlog's may be written first.)
  ASSERT_TRUE(
      test::WaitFor([&] { return alerts_.count(alerts::Alert::Kind::kBreakerClosed) >= 1; }));
  EXPECT_EQ(alerts_.count(alerts::Alert::Kind::kBreakerClosed), 1);
  int lost_sent = 0;
  for (size_t i = 0; i < sender_.sent(); ++i)
    lost_sent += sender_.header(i, "webhook-id") == lost_id;
  EXPECT_EQ(lost_sent, 3) << "the lost probe's event: failed, lost, delivered";
  EXPECT_EQ(sender_.sent(), 7u);
}

// A destination whose attempt may outlast a half-open probe's lease is named in a warning when
// the engine first serves it (a slow probe may then be joined by a second one); others are not.
TEST_F(EngineTest, ATimeoutLongerThanTheProbesLeaseIsWarnedOf) {
  hookrelay::testing::LogCapture log;
  model::Destination slow = Dest("slow");
  slow.policy.timeout = 10min;
  SetDestinations({Dest("a"), slow});
  StartEngine(sender_);
  ASSERT_TRUE(WaitForClaimAt("slow", clock_.Now()));  // the engine serves both
  ASSERT_TRUE(WaitForClaimAt("a", clock_.Now()));
  engine_->Stop(0ms);  // nothing logs while the capture ends
  const std::string text = log.text();
  EXPECT_NE(text.find("destination slow: attempt timeout 10m plus lease margin 30s is not shorter "
                      "than a half-open probe's lease (10m)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("destination a:"), std::string::npos) << text;
}

// Nothing is sent while a destination is paused, not even what arrives meanwhile; resume sends.
TEST_F(EngineTest, PausedDestinationSendsNothingUntilResumed) {
  SetDestinations({Dest("p")});
  StartEngine(sender_);
  // Paused once the engine's first look has claimed (nothing); a claim under way across Pause is
  // AClaimUnderWayWhenPausedSendsNothing.
  ASSERT_TRUE(WaitForClaimAt("p", clock_.Now()));
  ASSERT_TRUE(engine_->Pause("p", "maintenance").ok());
  const std::string e1 = Append("p");
  const std::string e2 = Append("p");
  // The scheduler looks (a second later on its clock) and shows the new work as paused.
  clock_.Advance(1s);
  engine_->Wake();
  ASSERT_TRUE(WaitForStatus(e1, store::DeliveryStatus::kPaused));
  ASSERT_TRUE(WaitForStatus(e2, store::DeliveryStatus::kPaused));
  EXPECT_EQ(DeliveryOf(e1).reason.value_or(""), "maintenance");
  EXPECT_EQ(sender_.sent(), 0u);
  EXPECT_TRUE(engine_->Destinations()["p"].paused);

  ASSERT_TRUE(engine_->Resume("p").ok());
  ASSERT_TRUE(sender_.WaitForSent(1));  // slow start: one first
  sender_.AnswerAllWith(200);
  ASSERT_TRUE(WaitForStatus(e1, store::DeliveryStatus::kDelivered, 1));
  ASSERT_TRUE(WaitForStatus(e2, store::DeliveryStatus::kDelivered, 1));
  EXPECT_FALSE(engine_->Destinations()["p"].paused);
  EXPECT_EQ(sender_.sent(), 2u);
}

// A destination paused in the catalog: its deliveries are swept to paused and the engine's one
// view of the destination says who paused it.
TEST_F(EngineTest, TheDestinationsViewSaysACatalogPause) {
  model::Destination d = Dest("p");
  d.paused = true;
  SetDestinations({d});
  StartEngine(sender_);
  const std::string e1 = Append("p");
  // The pause sweep runs at most once a second on the clock: the engine's first pass may have
  // swept before the append, so the next sweep needs the (fake) clock a second on.
  clock_.Set(clock_.Now() + std::chrono::seconds(1));
  engine_->Wake();
  ASSERT_TRUE(WaitForStatus(e1, store::DeliveryStatus::kPaused));
  // One view of every pause: the catalog's too, not only the stored one (the metrics and replay
  // read it from here).
  const DestinationState state = engine_->Destinations()["p"];
  EXPECT_TRUE(state.paused);
  EXPECT_EQ(state.paused_by, PausedBy::kConfig);
  EXPECT_EQ(state.paused_reason, kConfigPauseReason);
  EXPECT_EQ(sender_.sent(), 0u);
}

// The pause is in the store: a restarted node (a new engine on the reopened data directory)
// still obeys it, shows it with its reason, and resumes when told. (Before, the pause lived in the
// engine's memory: after a restart the destination read as not paused, new events were sent, its
// paused deliveries stayed paused, and the API's resume answered "not paused" without resuming
// them.)
TEST_F(EngineTest, APauseSurvivesARestart) {
  SetDestinations({Dest("p")});
  StartEngine(sender_);
  ASSERT_TRUE(WaitForClaimAt("p", clock_.Now()));
  ASSERT_TRUE(engine_->Pause("p", "maintenance").ok());
  const std::string e1 = Append("p");
  engine_->Stop(0ms);
  engine_.reset();
  store_.reset();
  auto reopened = store::OpenSqliteStore({.dir = dir_.path()}, clock_);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  store_ = std::move(*reopened);

  StartEngine(sender_);
  const std::string e2 = Append("p");
  clock_.Advance(1s);
  engine_->Wake();
  ASSERT_TRUE(WaitForStatus(e1, store::DeliveryStatus::kPaused));
  ASSERT_TRUE(WaitForStatus(e2, store::DeliveryStatus::kPaused));
  EXPECT_EQ(DeliveryOf(e2).reason.value_or(""), "maintenance");
  EXPECT_TRUE(engine_->Destinations()["p"].paused);
  EXPECT_EQ(engine_->Destinations()["p"].paused_reason, "maintenance");
  EXPECT_EQ(sender_.sent(), 0u);

  ASSERT_TRUE(engine_->Resume("p").ok());
  ASSERT_TRUE(sender_.WaitForSent(1));
  sender_.AnswerAllWith(200);
  ASSERT_TRUE(WaitForStatus(e1, store::DeliveryStatus::kDelivered, 1));
  ASSERT_TRUE(WaitForStatus(e2, store::DeliveryStatus::kDelivered, 1));
  EXPECT_FALSE(engine_->Destinations()["p"].paused);
}

// A claim already under way when the destination is paused takes an event appended after the
// pause: the engine sends none of it, gives the claim back, and the event shows as paused until
// Resume sends it.
TEST_F(EngineTest, AClaimUnderWayWhenPausedSendsNothing) {
  store::FaultInjectingStore& store = Faulty();
  SetDestinations({Dest("p")});
  store.HoldClaims(true);
  StartEngine(sender_, &store);
  ASSERT_TRUE(test::WaitFor([&] { return store.held_claims() == 1; }));  // the claim is under way
  ASSERT_TRUE(engine_->Pause("p", "maintenance").ok());
  const std::string e1 = Append("p");
  store.HoldClaims(false);  // the claim reaches the store and takes e1...
  ASSERT_TRUE(test::WaitFor([&] { return Claimed() == 1; }));
  // ...and gives it back (a leased delivery reads as delivering).
  ASSERT_TRUE(
      test::WaitFor([&] { return DeliveryOf(e1).status != store::DeliveryStatus::kDelivering; }));
  clock_.Advance(1s);  // the scheduler's pause sweep shows it as paused
  engine_->Wake();
  ASSERT_TRUE(WaitForStatus(e1, store::DeliveryStatus::kPaused));
  EXPECT_EQ(DeliveryOf(e1).reason.value_or(""), "maintenance");
  EXPECT_EQ(sender_.sent(), 0u);
  EXPECT_EQ(engine_->Destinations()["p"].in_flight, 0);

  ASSERT_TRUE(engine_->Resume("p").ok());
  ASSERT_TRUE(sender_.WaitForSent(1));
  sender_.AnswerAllWith(200);
  ASSERT_TRUE(WaitForStatus(e1, store::DeliveryStatus::kDelivered, 1));
  EXPECT_EQ(sender_.sent(), 1u);
}

// A claim whose events cannot be read (the store lost its connection between the claim and the
// read: a PostgreSQL restart or failover): nothing is sent, recorded or failed. The claim is
// given back and a later claim sends the delivery, once, as its first attempt. (Before, the
// delivery failed for good with "cannot read the event", and its acknowledged event was never
// delivered.)
TEST_F(EngineTest, AClaimWhoseEventsCannotBeReadIsGivenBackNotFailed) {
  store::FaultInjectingStore& store = Faulty();
  SetDestinations({Dest("a")});
  const std::string e1 = Append("a");
  store.FailEventReads(1, Status::Unavailable("PostgreSQL at postgres://db/hr: connection lost"));
  StartEngine(sender_, &store);
  // The first claim's read fails; a later one (after the poll interval) sends it.
  ASSERT_TRUE(test::WaitFor([&] {
    if (sender_.sent() >= 1) return true;
    clock_.Advance(50ms);
    engine_->Wake();
    return false;
  }));
  EXPECT_GE(Claimed(), 2);
  sender_.AnswerAllWith(200);
  ASSERT_TRUE(WaitForStatus(e1, store::DeliveryStatus::kDelivered, 1))
      << DeliveryOf(e1).reason.value_or("");
  EXPECT_EQ(AttemptsOf(DeliveryOf(e1).id), 1u);
  EXPECT_EQ(sender_.sent(), 1u);
  EXPECT_EQ(engine_->Destinations()["a"].in_flight, 0);
}

// max_concurrency 3 with ten due: three go out, and each answer lets exactly one more go; never
// a fourth at once.
TEST_F(EngineTest, NeverMoreThanMaxConcurrencyOutstanding) {
  model::Destination d = Dest("c");
  d.max_concurrency = 3;
  SetDestinations({d});
  std::vector<std::string> events;
  for (int i = 0; i < 10; ++i) events.push_back(Append("c"));
  StartEngine(sender_);
  ASSERT_TRUE(sender_.WaitForSent(3));
  // The engine has looked again since (a claim answered with its three) and claimed no more.
  engine_->Wake();
  ASSERT_TRUE(test::WaitFor([&] { return engine_->Destinations()["c"].in_flight == 3; }));
  EXPECT_EQ(sender_.outstanding(), 3);
  for (size_t i = 0; i < events.size(); ++i) {
    sender_.Answer(i, 200);
    const size_t expect_sent = std::min(events.size(), i + 4);
    ASSERT_TRUE(sender_.WaitForSent(expect_sent)) << i;
    EXPECT_LE(sender_.outstanding(), 3);
  }
  for (const std::string& e : events) {
    ASSERT_TRUE(WaitForStatus(e, store::DeliveryStatus::kDelivered, 1)) << e;
  }
  EXPECT_EQ(sender_.max_outstanding(), 3);
  EXPECT_EQ(sender_.sent(), events.size());
}

// A claim waits for the store (on the embedded store, for the writer's current batch). While one
// is out, the slots freed meanwhile go out in a second claim rather than waiting for the first
// to answer (before, the destination's requests could run out between claims); never a third,
// and never beyond max_concurrency.
TEST_F(EngineTest, ASecondClaimGoesOutWhileOneWaitsForTheStore) {
  store::FaultInjectingStore& store = Faulty();
  model::Destination d = Dest("p");
  d.max_concurrency = 8;
  SetDestinations({d});
  std::vector<std::string> events;
  for (int i = 0; i < 40; ++i) events.push_back(Append("p"));
  StartEngine(sender_, &store);
  ASSERT_TRUE(sender_.WaitForSent(8));
  // The next claims wait in the store.
  store.HoldClaims(true);
  sender_.Answer(0, 200);
  ASSERT_TRUE(test::WaitFor([&] { return store.held_claims() == 1; }));
  // Two more slots free (a quarter of 8): a second claim goes out, though the first waits.
  for (size_t i = 1; i < 3; ++i) sender_.Answer(i, 200);
  ASSERT_TRUE(test::WaitFor([&] { return store.held_claims() == 2; }));
  // More freed slots wait for those two: no third claim.
  for (size_t i = 3; i < 8; ++i) sender_.Answer(i, 200);
  engine_->Wake();
  // Two whole passes of the scheduler on its clock: a third claim would be held by then.
  ASSERT_TRUE(SchedulerPass());
  ASSERT_TRUE(SchedulerPass());
  EXPECT_EQ(store.held_claims(), 2);
  store.HoldClaims(false);
  ASSERT_TRUE(sender_.WaitForSent(16));
  EXPECT_LE(sender_.outstanding(), 8);
  sender_.AnswerAllWith(200);
  for (const std::string& e : events) {
    ASSERT_TRUE(WaitForStatus(e, store::DeliveryStatus::kDelivered, 1)) << e;
  }
  EXPECT_EQ(sender_.max_outstanding(), 8);
  EXPECT_EQ(sender_.sent(), events.size());
}

// Stop with three requests out: one answered before, one during the grace period, one never.
// Stop returns after its grace; the first two are recorded once; the third stays leased (its
// late answer is not recorded), and once its lease expires a new engine sends it again and
// records it once.
TEST_F(EngineTest, StopWithRequestsInFlightLosesNothingAndRecordsNothingTwice) {
  model::Destination d = Dest("s");
  d.max_concurrency = 3;
  SetDestinations({d});
  const std::vector<std::string> events = {Append("s"), Append("s"), Append("s")};
  StartEngine(sender_);
  ASSERT_TRUE(sender_.WaitForSent(3));
  const auto index_of = [&](const std::string& event) {
    const auto id = static_cast<uint64_t>(DeliveryOf(event).id);
    for (size_t i = 0; i < 3; ++i) {
      if (sender_.tag(i) == id) return i;
    }
    ADD_FAILURE() << "not sent: " << event;
    return size_t{0};
  };
  sender_.Answer(index_of(events[0]), 200);
  ASSERT_TRUE(WaitForStatus(events[0], store::DeliveryStatus::kDelivered, 1));

  const auto stop_started = std::chrono::steady_clock::now();
  std::thread stopper([&] { engine_->Stop(700ms); });
  sender_.Answer(index_of(events[1]), 200);  // before or during the grace: recorded
  stopper.join();
  // The grace is real time (it bounds a shutdown, whatever the clock): a lower bound only,
  // which no load can break.
  const auto stop_took = std::chrono::steady_clock::now() - stop_started;
  EXPECT_GE(stop_took, 650ms) << "Stop did not wait for the request still out";
  EXPECT_EQ(DeliveryOf(events[1]).status, store::DeliveryStatus::kDelivered);

  // The last answer comes after Stop: not recorded; the delivery keeps its lease.
  sender_.Answer(index_of(events[2]), 200);
  const store::Delivery left = DeliveryOf(events[2]);
  EXPECT_EQ(left.status, store::DeliveryStatus::kDelivering);
  EXPECT_EQ(left.attempts, 0);
  EXPECT_EQ(AttemptsOf(left.id), 0u);
  engine_.reset();

  // A new engine takes it over once the lease (timeout 30 s + margin 30 s) expires.
  ScriptedSender again(clock_);
  again.AnswerAllWith(200);
  clock_.Advance(61s);
  StartEngine(again);
  ASSERT_TRUE(WaitForStatus(events[2], store::DeliveryStatus::kDelivered, 1));
  EXPECT_EQ(again.sent(), 1u);
  EXPECT_EQ(again.tag(0), static_cast<uint64_t>(left.id));
  for (const std::string& e : events) {
    EXPECT_EQ(AttemptsOf(DeliveryOf(e).id), 1u) << e;
    EXPECT_EQ(DeliveryOf(e).attempts, 1) << e;
  }
  engine_->Stop(0ms);
  engine_.reset();  // before `again`
}

}  // namespace
}  // namespace hookrelay::delivery
