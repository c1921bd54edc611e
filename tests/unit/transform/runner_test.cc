#include "transform/runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <vector>

namespace hookrelay::transform {
namespace {

Request Simple() {
  Request r;
  r.method = "POST";
  r.path = "/in";
  r.body = R"({"a":1})";
  return r;
}

std::unique_ptr<Runner> MustStart(Runner::Options options = {}) {
  Result<std::unique_ptr<Runner>> r = Runner::Start(options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(*r) : nullptr;
}

TEST(RunnerTest, RunSyncGivesTheResult) {
  std::unique_ptr<Runner> runner = MustStart();
  ASSERT_NE(runner, nullptr);
  Result<Outcome> r =
      runner->RunSync("function transform(r) { r.json.b = 2; return r; }", Simple());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->request->body, R"({"a":1,"b":2})");
}

TEST(RunnerTest, ALoopingCallDoesNotHoldUpAnotherOnTheSecondWorker) {
  Runner::Options options;
  options.threads = 2;
  options.default_limits.cpu = std::chrono::milliseconds(1000);
  std::unique_ptr<Runner> runner = MustStart(options);
  ASSERT_NE(runner, nullptr);
  std::promise<Result<Outcome>> looped;
  const auto start = std::chrono::steady_clock::now();
  runner->Run("function transform(r) { while (true) {} }", Simple(), std::nullopt,
              [&](Result<Outcome> r) { looped.set_value(std::move(r)); });
  // Run returned at once; the other worker answers while the first loops.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  Result<Outcome> quick = runner->RunSync("function transform(r) { return null; }", Simple());
  const auto quick_done = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(quick.ok()) << quick.status().ToString();
  EXPECT_LT(quick_done, std::chrono::milliseconds(900));
  std::future<Result<Outcome>> f = looped.get_future();
  Result<Outcome> slow = f.get();
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().message(), "exceeded 1000 ms of CPU time");
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
}

TEST(RunnerTest, LimitsAboveTheMaximumAreRefused) {
  std::unique_ptr<Runner> runner = MustStart();
  ASSERT_NE(runner, nullptr);
  Result<Outcome> r = runner->RunSync("function transform(r) { return r; }", Simple(),
                                      Limits{std::chrono::milliseconds(5000)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "cpu 5000 ms is above the server's maximum of 1000 ms");
  EXPECT_EQ(r.status().field(), "limits.cpu");
  Result<Outcome> big = runner->RunSync("function transform(r) { return r; }", Simple(),
                                        Limits{std::chrono::milliseconds(50), size_t{1} << 30});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(), "memory 1024 MiB is above the server's maximum of 64 MiB");
}

TEST(RunnerTest, ManyCallsFromManyThreadsAllAnswer) {
  std::unique_ptr<Runner> runner = MustStart();
  ASSERT_NE(runner, nullptr);
  std::atomic<int> ok{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        Result<Outcome> r = runner->RunSync(
            "function transform(r) { return {headers: {n: '" + std::to_string(t) + "'}}; }",
            Simple());
        if (r.ok() && r->request->headers.size() == 1) ok++;
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(ok.load(), 100);
}

TEST(RunnerTest, StoppingFailsWhatIsStillQueued) {
  Runner::Options options;
  options.threads = 1;
  std::unique_ptr<Runner> runner = MustStart(options);
  ASSERT_NE(runner, nullptr);
  std::promise<Status> first, second;
  runner->Run("function transform(r) { while (true) {} }", Simple(), std::nullopt,
              [&](Result<Outcome> r) { first.set_value(r.status()); });
  runner->Run("function transform(r) { return r; }", Simple(), std::nullopt,
              [&](Result<Outcome> r) { second.set_value(r.ok() ? Status::Ok() : r.status()); });
  // Wait until the first call has started (the queue holds only the second).
  for (int i = 0; i < 200 && runner->Queued() != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  runner.reset();
  EXPECT_EQ(first.get_future().get().message(), "exceeded 50 ms of CPU time");
  EXPECT_EQ(second.get_future().get().code(), Status::Code::kUnavailable);
}

// A batch's results come back together and in order; a call asking too much is refused alone;
// a batch that loops holds one worker, and a call on the other answers meanwhile.
TEST(RunnerTest, ABatchAnswersInOrderAndALoopingOneHoldsOnlyItsWorker) {
  Runner::Options options;
  options.threads = 2;
  std::unique_ptr<Runner> runner = MustStart(options);
  ASSERT_NE(runner, nullptr);
  auto call = [](std::string script, Limits limits = Limits()) {
    return Runner::Call{std::move(script), Simple(), limits, "billing"};
  };
  Limits too_much;
  too_much.cpu = std::chrono::milliseconds(5000);
  std::vector<Runner::Call> calls;
  calls.push_back(call("function transform(r) { return {path: '/one'}; }"));
  calls.push_back(call("function transform(r) { return r; }", too_much));
  calls.push_back(call("function transform(r) { return null; }"));
  calls.push_back(call("function transform(r) { return {path: '/four'}; }"));
  std::promise<std::vector<Result<Outcome>>> answered;
  runner->RunBatch(std::move(calls),
                   [&](std::vector<Result<Outcome>> r) { answered.set_value(std::move(r)); });
  std::vector<Result<Outcome>> results = answered.get_future().get();
  ASSERT_EQ(results.size(), 4u);
  ASSERT_TRUE(results[0].ok()) << results[0].status().ToString();
  EXPECT_EQ(results[0]->request->path, "/one");
  EXPECT_EQ(results[1].status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(results[1].status().field(), "limits.cpu") << results[1].status().ToString();
  ASSERT_TRUE(results[2].ok());
  EXPECT_FALSE(results[2]->request.has_value());
  ASSERT_TRUE(results[3].ok());
  EXPECT_EQ(results[3]->request->path, "/four");

  std::vector<Runner::Call> looping;
  Limits second;
  second.cpu = std::chrono::milliseconds(1000);
  looping.push_back(call("function transform(r) { while (true) {} }", second));
  looping.push_back(call("function transform(r) { return r; }"));
  std::promise<std::vector<Result<Outcome>>> looped;
  const auto start = std::chrono::steady_clock::now();
  runner->RunBatch(std::move(looping),
                   [&](std::vector<Result<Outcome>> r) { looped.set_value(std::move(r)); });
  Result<Outcome> quick = runner->RunSync("function transform(r) { return null; }", Simple());
  ASSERT_TRUE(quick.ok()) << quick.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
  std::vector<Result<Outcome>> slow = looped.get_future().get();
  ASSERT_EQ(slow.size(), 2u);
  EXPECT_EQ(slow[0].status().message(), "exceeded 1000 ms of CPU time");
  EXPECT_TRUE(slow[1].ok()) << slow[1].status().ToString();
}

}  // namespace
}  // namespace hookrelay::transform
