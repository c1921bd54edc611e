#include "ingest/rejection_recorder.h"

#include <gtest/gtest.h>

#include "common/clock.h"
#include "common/crypto.h"
#include "store/sqlite/sqlite_store.h"
#include "support/process.h"

namespace hookrelay::ingest {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

model::Source Github() {
  model::Source s;
  s.name = "gh";
  s.verify = model::VerifyConfig{};
  s.verify->scheme = model::VerifyScheme::kGithub;
  s.verify->secrets = {"secret"};
  return s;
}

http::Request BadRequest(std::string body = "the body") {
  http::Request r;
  r.method = "POST";
  r.remote_address = "192.0.2.1";
  r.headers = {{"Content-Type", "application/json"},
               {"X-Hub-Signature-256", "sha256=0000"},
               {"Authorization", "Bearer t0ken"},
               {"Connection", "keep-alive"},
               {"X-Api-Key", "k3y"}};
  r.body = std::move(body);
  return r;
}

TEST(DescribeRejectionTest, KeepsShapeNotSecretsNorBody) {
  FakeClock clock;
  store::Rejection r = DescribeRejection(Github(), RejectReason::kSignatureMismatch,
                                         "signature does not match", BadRequest(), clock.Now());
  EXPECT_EQ(r.source, "gh");
  EXPECT_EQ(r.reason, "signature_mismatch");
  EXPECT_EQ(r.message, "signature does not match");
  EXPECT_EQ(r.size, 8);
  EXPECT_EQ(r.sha256, HexEncode(Sha256("the body")));
  EXPECT_EQ(r.remote_addr, "192.0.2.1");
  EXPECT_EQ(r.received_at, clock.Now());
  EXPECT_EQ(r.headers, (std::vector<store::Header>{{"Content-Type", "application/json"},
                                                   {"X-Hub-Signature-256", "(redacted)"},
                                                   {"Authorization", "(redacted)"},
                                                   {"X-Api-Key", "(redacted)"}}));
}

TEST(DescribeRejectionTest, RedactsTheConfiguredHeaderAndBoundsTheRest) {
  model::Source s = Github();
  s.verify->scheme = model::VerifyScheme::kHmac;
  s.verify->header = "X-Plain";  // no credential-like word in it
  http::Request req;
  req.headers.push_back({"X-Plain", "mac-value"});
  req.headers.push_back({"X-Long", std::string(10000, 'v')});
  req.headers.push_back({std::string(1000, 'N'), "x"});
  for (int i = 0; i < 100; ++i) req.headers.push_back({"X-" + std::to_string(i), "y"});
  store::Rejection r =
      DescribeRejection(s, RejectReason::kSignatureMismatch, "m", req, FakeClock().Now());
  ASSERT_EQ(r.headers.size(), kMaxRejectionHeaders);
  EXPECT_EQ(r.headers[0].value, "(redacted)");
  EXPECT_EQ(r.headers[1].value.substr(0, kMaxRejectionHeaderValue),
            std::string(kMaxRejectionHeaderValue, 'v'));
  EXPECT_LE(r.headers[1].value.size(), kMaxRejectionHeaderValue + 3);
  EXPECT_LE(r.headers[2].name.size(), kMaxRejectionHeaderName + 3);
  EXPECT_EQ(r.size, 0);
  EXPECT_EQ(r.sha256, HexEncode(Sha256("")));
}

class RejectionRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::SqliteStore::Open({.dir = dir_.path()}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  size_t Stored(const std::string& source) {
    auto page = store_->ListRejections(source, "", 1000);
    EXPECT_TRUE(page.ok());
    return page.ok() ? page->items.size() : 0;
  }

  hookrelay::testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
};

// Every rejection is counted; rows are written at most rows_per_second per source and second.
TEST_F(RejectionRecorderTest, CountsEveryOneAndWritesAtMostTheRatePerSecond) {
  RejectionOptions options;
  options.rows_per_second = 5;
  RejectionRecorder recorder(*store_, clock_, options);
  model::Source gh = Github();
  model::Source other = Github();
  other.name = "other";
  for (int i = 0; i < 12; ++i) {
    recorder.Record(gh, i % 3 ? RejectReason::kSignatureMismatch : RejectReason::kMissingSignature,
                    "m", BadRequest(), clock_.Now());
  }
  recorder.Record(other, RejectReason::kMalformedSignature, "m", BadRequest(), clock_.Now());
  EXPECT_EQ(Stored("gh"), 0u) << "nothing written before a flush: the request path never waits";
  ASSERT_TRUE(recorder.Flush().ok());
  EXPECT_EQ(Stored("gh"), 5u);
  EXPECT_EQ(Stored("other"), 1u) << "each source has its own rate";
  RejectionCounts c = recorder.Counts("gh");
  EXPECT_EQ(c.total, 12);
  EXPECT_EQ(c.not_recorded, 7);
  EXPECT_EQ(c.by_reason[0], 4);  // kMissingSignature
  EXPECT_EQ(c.by_reason[3], 8);  // kSignatureMismatch
  EXPECT_EQ(c.last_at, clock_.Now());

  clock_.Advance(milliseconds(999));  // the same second (FakeClock starts on a whole second)
  recorder.Record(gh, RejectReason::kSignatureMismatch, "m", BadRequest(), clock_.Now());
  EXPECT_EQ(recorder.Counts("gh").not_recorded, 8);
  clock_.Advance(milliseconds(1));  // the next one
  for (int i = 0; i < 6; ++i) {
    recorder.Record(gh, RejectReason::kSignatureMismatch, "m", BadRequest(), clock_.Now());
  }
  ASSERT_TRUE(recorder.Flush().ok());
  EXPECT_EQ(Stored("gh"), 10u);
  EXPECT_EQ(recorder.Counts("gh").total, 19);
  EXPECT_EQ(recorder.Counts("gh").not_recorded, 9);
  EXPECT_EQ(recorder.Counts("nobody").total, 0);
  EXPECT_EQ(recorder.AllCounts().size(), 2u);
}

TEST_F(RejectionRecorderTest, TheQueueAndTheStoreAreBounded) {
  RejectionOptions options;
  options.rows_per_second = 1000;
  options.queue_rows = 3;
  options.keep_per_source = 4;
  RejectionRecorder recorder(*store_, clock_, options);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 10; ++i) {
      recorder.Record(Github(), RejectReason::kSignatureMismatch, "m", BadRequest(), clock_.Now());
    }
    ASSERT_TRUE(recorder.Flush().ok());
  }
  EXPECT_EQ(recorder.Counts("gh").total, 30);
  EXPECT_EQ(recorder.Counts("gh").not_recorded, 21) << "3 queued per round";
  EXPECT_EQ(Stored("gh"), 4u) << "the store keeps the newest 4";
}

// The writer thread flushes on its own; Stop() writes what is left.
TEST_F(RejectionRecorderTest, TheThreadWritesAndStopFlushes) {
  RejectionOptions options;
  options.flush_interval = seconds(3600);
  RejectionRecorder recorder(*store_, clock_, options);
  recorder.Start();
  recorder.Record(Github(), RejectReason::kSignatureMismatch, "m", BadRequest(), clock_.Now());
  recorder.Stop();
  EXPECT_EQ(Stored("gh"), 1u);
  recorder.Stop();  // idempotent
}

}  // namespace
}  // namespace hookrelay::ingest
