// hookrelay's own crashes (issue 14): the real binary under mixed ingest and delivery load, killed
// with SIGKILL five times in a row on the same data directory, or stopped with SIGTERM mid-load;
// then a last run delivers what is left and the counts at the sink and in the store are
// reconciled: every acknowledged event is stored and delivered at least once, every copy the sink
// received carries the event's one webhook-id, and every copy beyond an event's recorded attempts
// is an attempt in flight at a kill (it arrived during a run that was killed; at most one per
// event and kill). After SIGTERM there are none.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "integration/integration_util.h"
#include "store/store.h"
#include "support/config_builder.h"
#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/integration_test.h"
#include "support/process.h"
#include "support/sink.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using testing::HookrelayServer;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::Sink;
using testing::SinkResponse;
using testing::TempDir;

const std::string kToken = "crash-test-admin-token-0123";
using Steady = std::chrono::steady_clock::time_point;
constexpr int kMaxConcurrency = 8;

// Ingest load from two threads until stopped: each event's body names it uniquely; the ids of
// the events acknowledged (202) are kept. Errors (the server was killed) end nothing: the
// threads reconnect until stopped.
class IngestLoad {
 public:
  IngestLoad(uint16_t port, std::string tag) {
    for (int t = 0; t < 2; ++t) {
      threads_.emplace_back([this, port, tag, t] {
        std::unique_ptr<HttpConnection> conn;
        for (int i = 0; !stop_.load(); ++i) {
          try {
            if (!conn) conn = std::make_unique<HttpConnection>(port, "127.0.0.1", 5s);
            HttpResponse r = conn->Send("POST", "/in/src", {{"Content-Type", "application/json"}},
                                        "{\"run\":\"" + tag + "\",\"thread\":" + std::to_string(t) +
                                            ",\"i\":" + std::to_string(i) + "}");
            if (r.status == 202) {
              std::lock_guard lock(mu_);
              acked_.push_back(std::string(json::parse(r.body).at("id").as_string()));
            }
          } catch (const std::exception&) {
            conn.reset();
            if (stop_.load()) break;
            std::this_thread::sleep_for(5ms);  // the server is gone; wait for the test to stop us
          }
          std::this_thread::sleep_for(2ms);  // a steady load, not a flood
        }
      });
    }
  }
  ~IngestLoad() { Stop(); }
  void Stop() {
    stop_.store(true);
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  size_t acked() const {
    std::lock_guard lock(mu_);
    return acked_.size();
  }
  std::vector<std::string> ids() const {
    std::lock_guard lock(mu_);
    return acked_;
  }

 private:
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<std::string> acked_;  // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

class CrashTest : public testing::IntegrationTest {
 protected:
  void SetUp() override {
    admin_token_ = kToken;
    // Every answer takes a little while (attempts are in flight when the server dies); each run
    // starts with some 503s (retries), see LoadUntil.
    sink_.SetDefault(SinkResponse::Status(200).WithDelay(5ms));
  }

  void Start() {
    StartServer(testing::Config()
                    .Set("delivery.lease_margin", "1s")
                    .Set("delivery.poll_interval", "100ms")
                    .Source("src")
                    .Destination("d", sink_.url("/hooks"),
                                 {{"max_concurrency", kMaxConcurrency},
                                  {"breaker", testing::TomlInline({{"threshold", 1000}})},
                                  {"policy", testing::TomlInline({{"strategy", "exponential"},
                                                                  {"jitter", "none"},
                                                                  {"base", "20ms"},
                                                                  {"cap", "100ms"},
                                                                  {"max_attempts", 20},
                                                                  {"max_duration", "10m"},
                                                                  {"timeout", "5s"}})}})
                    .Route("src", "d"));
  }

  // Runs load until the sink got `deliveries` more requests and `acks` events were acknowledged
  // in this run; returns the load (still running).
  std::unique_ptr<IngestLoad> LoadUntil(const std::string& tag, size_t deliveries, size_t acks) {
    for (int i = 0; i < 20; ++i) sink_.Enqueue(SinkResponse::Status(503).WithDelay(5ms));
    const size_t before = sink_.RequestCount();
    auto load = std::make_unique<IngestLoad>(server_->port(), tag);
    (void)test::WaitFor(
        [&] { return sink_.RequestCount() >= before + deliveries && load->acked() >= acks; }, 30s,
        10ms);
    EXPECT_GE(sink_.RequestCount(), before + deliveries);
    EXPECT_GE(load->acked(), acks);
    return load;
  }

  // A last run without load: waits until nothing is due or in flight (every acknowledged event's
  // delivery is final), then stops the server with SIGTERM.
  void DrainAndStop(const std::vector<std::string>& acked) {
    Start();
    const auto deadline = std::chrono::steady_clock::now() + 120s;  // for all of them
    for (const std::string& id : acked) {
      std::string status;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      (void)test::WaitFor(
          [&] {
            HttpConnection conn(server_->port());
            HttpResponse r =
                conn.Send("GET", "/api/v1/events/" + id, {{"Authorization", "Bearer " + kToken}});
            if (r.status != 200) return false;
            const json::value doc = json::parse(r.body);
            const json::array& ds = doc.at("deliveries").as_array();
            status = ds.size() == 1 ? std::string(ds[0].at("status").as_string()) : "";
            return status == "delivered";
          },
          std::max(left, std::chrono::milliseconds(0)), 20ms);
      ASSERT_EQ(status, "delivered") << id;
    }
    ASSERT_EQ(server_->Stop(), 0) << server_->output();
    server_.reset();
  }

  // Returns the copies beyond the recorded attempts (sent, never recorded). `killed_runs` holds
  // the [start, kill] times of the runs that were killed: each copy beyond an event's recorded
  // attempts must come from one of them (an attempt in flight at a kill), at most one per run
  // (a delivery has one attempt out at a time).
  int64_t Reconcile(const std::vector<std::string>& acked,
                    const std::vector<std::pair<Steady, Steady>>& killed_runs = {}) {
    auto store = testing::OpenStoreAt(data_dir());
    EXPECT_NE(store, nullptr);
    if (!store) return -1;
    // The sink's copies per webhook-id; all copies of one body carry one webhook-id.
    std::map<std::string, int64_t> copies;
    std::map<std::string, std::set<size_t>> killed_runs_of;
    std::map<std::string, std::set<std::string>> ids_of_body;
    for (const auto& r : sink_.Requests()) {
      const std::string id = r.Header("webhook-id").value_or("");
      copies[id]++;
      ids_of_body[r.body].insert(id);
      for (size_t k = 0; k < killed_runs.size(); ++k) {
        // A request the server sent just before it died may be read by the sink just after.
        if (r.arrived_steady >= killed_runs[k].first &&
            r.arrived_steady <= killed_runs[k].second + 1s) {
          killed_runs_of[id].insert(k);
        }
      }
    }
    for (const auto& [body, ids] : ids_of_body) {
      EXPECT_EQ(ids.size(), 1u) << "copies of " << body << " with different webhook-ids";
    }
    std::set<std::string> acked_set(acked.begin(), acked.end());
    EXPECT_EQ(acked_set.size(), acked.size()) << "an id acknowledged twice";
    int64_t extra = 0;
    for (const std::string& id : acked) {
      auto event = store->GetEvent(id);
      EXPECT_TRUE(event.ok() && event->has_value()) << "acknowledged event lost: " << id;
      auto deliveries = store->GetDeliveries(id);
      EXPECT_TRUE(deliveries.ok() && deliveries->size() == 1) << id;
      if (!deliveries.ok() || deliveries->size() != 1) continue;
      const store::Delivery& d = (*deliveries)[0];
      EXPECT_EQ(d.status, store::DeliveryStatus::kDelivered) << id;
      EXPECT_GE(copies[id], 1) << "acknowledged event never delivered: " << id;
      auto attempts = store->GetAttempts(d.id);
      EXPECT_TRUE(attempts.ok());
      const int64_t recorded = attempts.ok() ? static_cast<int64_t>(attempts->size()) : 0;
      EXPECT_EQ(recorded, d.attempts) << id;
      // Every recorded attempt reached the sink; the sink may have seen more (unrecorded ones),
      // each from a run that was killed.
      EXPECT_GE(copies[id], recorded) << id;
      EXPECT_LE(copies[id] - recorded, static_cast<int64_t>(killed_runs_of[id].size()))
          << id << ": a copy beyond the recorded attempts that no kill explains";
      extra += copies[id] - recorded;
    }
    // Events the sink saw that were never acknowledged were stored, but their 202 was lost with
    // the kill. Every webhook-id the sink saw is a stored event.
    for (const auto& [id, n] : copies) {
      if (acked_set.count(id)) continue;
      auto event = store->GetEvent(id);
      EXPECT_TRUE(event.ok() && event->has_value()) << "the sink got an unknown event " << id;
    }
    return extra;
  }
};

// kill -9 five times in a row under load, on one data directory.
TEST_F(CrashTest, FiveKillsInARowLoseNothingAcknowledged) {
  std::vector<std::string> acked;
  std::vector<std::pair<Steady, Steady>> killed_runs;
  constexpr int kKills = 5;
  for (int run = 0; run < kKills; ++run) {
    const Steady started = std::chrono::steady_clock::now();
    Start();
    auto load = LoadUntil("kill" + std::to_string(run), 150, 150);
    server_->Kill();
    killed_runs.emplace_back(started, std::chrono::steady_clock::now());
    load->Stop();
    server_.reset();
    for (auto& id : load->ids()) acked.push_back(id);
  }
  ASSERT_GE(acked.size(), 750u);
  DrainAndStop(acked);
  const int64_t extra = Reconcile(acked, killed_runs);
  EXPECT_GE(extra, 0);
  RecordProperty("events_acknowledged", static_cast<int>(acked.size()));
  RecordProperty("copies_beyond_recorded_attempts", static_cast<int>(extra));
}

// SIGTERM mid-load: exit 0, and what was in flight was recorded (no copy beyond the recorded
// attempts); nothing acknowledged is lost.
TEST_F(CrashTest, SigtermMidLoadExitsCleanlyAndLosesNothing) {
  Start();
  auto load = LoadUntil("term", 150, 150);
  EXPECT_EQ(server_->Stop(), 0) << server_->output();
  load->Stop();
  server_.reset();
  const std::vector<std::string> acked = load->ids();
  DrainAndStop(acked);
  EXPECT_EQ(Reconcile(acked), 0);
}

}  // namespace
}  // namespace hookrelay
