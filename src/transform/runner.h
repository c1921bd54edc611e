#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"
#include "common/thread_annotations.h"
#include "transform/sandbox.h"
#include "transform/transform.h"
#include "transform/watchdog.h"

namespace hookrelay::transform {

// Runs transforms off the caller's thread: a few worker threads, each with its own Sandbox
// (SpiderMonkey context), take calls from one queue, and one Watchdog stops any call past its CPU
// budget. A call that loops for its whole budget holds one worker; the others keep going, and the
// caller (the delivery engine's event loop) never waits.
//
// Thread-safe. Destroying the Runner finishes the calls already running, fails the queued ones
// with Unavailable, and joins the workers.
class Runner {
 public:
  struct Options {
    size_t threads = 2;
    Limits default_limits;  // 50 ms, 16 MiB
    // The most any call may ask for; a call asking for more is refused (InvalidArgument).
    Limits max_limits{std::chrono::milliseconds(1000), size_t{64} << 20};
    Sandbox::Options sandbox;
  };
  using Callback = std::function<void(Result<Outcome>)>;
  // One call of a batch (RunBatch).
  struct Call {
    std::string script;
    Request request;
    Limits limits;
    std::string scope;  // as Run's
  };
  using BatchCallback = std::function<void(std::vector<Result<Outcome>>)>;

  // Starts the workers; an error when SpiderMonkey cannot start on them.
  static Result<std::unique_ptr<Runner>> Start(Options options);
  ~Runner() EXCLUDES(mu_);
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Queues transform(request) of `script` within `limits` (Options::default_limits when nullopt)
  // and returns at once. `done` runs once, on a worker thread, with Sandbox::Call's result (or
  // InvalidArgument for limits above the maximum, at once on the calling thread; or Unavailable
  // when the runner stops first). `done` must be quick: it holds a worker.
  // `scope` names whose calls may share a kept realm (Sandbox::Call): the delivery engine passes
  // the destination's name; empty runs the call in a fresh realm.
  void Run(std::string script, Request request, std::optional<Limits> limits, Callback done,
           std::string scope = {}) EXCLUDES(mu_);

  // Queues `calls` as one job: one worker runs them one after the other, then `done` gets their
  // results in order, at once (a call whose limits are above the maximum gets InvalidArgument
  // without running). For a burst of one destination's deliveries: their requests reach the
  // sender together, and a call that loops holds up only the calls of its own batch. Keep batches
  // small (the delivery engine sends up to 16), so the other workers share a burst.
  void RunBatch(std::vector<Call> calls, BatchCallback done) EXCLUDES(mu_);

  // Run, waiting for the result: for the test/preview API and tests, never for deliveries.
  Result<Outcome> RunSync(std::string script, Request request,
                          std::optional<Limits> limits = std::nullopt) EXCLUDES(mu_);

  // Sandbox::Check on a worker, waiting for it: whether `script` compiles, runs its top level
  // within the default limits and defines function transform (for the catalog, when a transform
  // is saved). Its errors are InvalidArgument / ResourceExhausted with the script's message.
  Status CheckSync(std::string script) EXCLUDES(mu_);

  // Calls queued and not yet started.
  size_t Queued() const EXCLUDES(mu_);

  // OK when `limits` are within the maximum and large enough to run anything.
  Status CheckLimits(const Limits& limits) const;
  // Options::default_limits: what a call without limits of its own gets.
  const Limits& default_limits() const { return options_.default_limits; }

 private:
  struct Job {
    std::vector<Call> calls;
    BatchCallback done;
    bool check_only = false;  // one call: Sandbox::Check
  };
  explicit Runner(Options options);
  // Queues `job`, or fails it with Unavailable at once when the runner is stopping.
  void Enqueue(Job job) EXCLUDES(mu_);
  // Calls `job`'s callback with `why` for each of its calls.
  static void Fail(Job job, const Status& why);
  void Work(size_t index, std::promise<Status>* started) EXCLUDES(mu_);

  const Options options_;
  Watchdog watchdog_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::deque<Job> queue_ GUARDED_BY(mu_);
  std::vector<std::thread> workers_;
};

}  // namespace hookrelay::transform
