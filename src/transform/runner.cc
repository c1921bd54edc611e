#include "transform/runner.h"

#include <future>
#include <string>
#include <utility>

#include "common/thread_name.h"

namespace hookrelay::transform {

Runner::Runner(Options options) : options_(std::move(options)) {}

Result<std::unique_ptr<Runner>> Runner::Start(Options options) {
  if (options.threads == 0) return Status::InvalidArgument("threads must be at least 1", "threads");
  std::unique_ptr<Runner> runner(new Runner(std::move(options)));
  HR_RETURN_IF_ERROR(
      runner->CheckLimits(runner->options_.default_limits).WithFieldPrefix("default_limits"));
  Status failed = Status::Ok();
  for (size_t i = 0; i < runner->options_.threads; ++i) {
    std::promise<Status> started;
    std::future<Status> ready = started.get_future();
    runner->workers_.emplace_back([r = runner.get(), i, &started] { r->Work(i, &started); });
    Status s = ready.get();
    if (!s.ok() && failed.ok()) failed = s;
  }
  if (!failed.ok()) return failed;  // the destructor joins the workers that did start
  return runner;
}

Runner::~Runner() {
  std::deque<Job> dropped;
  {
    MutexLock lock(mu_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  for (Job& job : dropped) Fail(std::move(job), Status::Unavailable("transform runner stopped"));
}

Status Runner::CheckLimits(const Limits& limits) const {
  const Limits& max = options_.max_limits;
  if (limits.cpu.count() <= 0) return Status::InvalidArgument("cpu must be positive", "cpu");
  if (limits.cpu > max.cpu) {
    return Status::InvalidArgument("cpu " + std::to_string(limits.cpu.count()) +
                                       " ms is above the server's maximum of " +
                                       std::to_string(max.cpu.count()) + " ms",
                                   "cpu");
  }
  if (limits.memory_bytes < (size_t{1} << 20)) {
    return Status::InvalidArgument("memory must be at least 1 MiB", "memory");
  }
  if (limits.memory_bytes > max.memory_bytes) {
    return Status::InvalidArgument("memory " + FormatBytes(limits.memory_bytes) +
                                       " is above the server's maximum of " +
                                       FormatBytes(max.memory_bytes),
                                   "memory");
  }
  return Status::Ok();
}

void Runner::Run(std::string script, Request request, std::optional<Limits> limits, Callback done,
                 std::string scope) {
  const Limits l = limits.value_or(options_.default_limits);
  if (Status s = CheckLimits(l); !s.ok()) {
    done(s.WithFieldPrefix("limits"));
    return;
  }
  std::vector<Call> calls;
  calls.push_back(Call{std::move(script), std::move(request), l, std::move(scope)});
  Enqueue(Job{std::move(calls), [done = std::move(done)](std::vector<Result<Outcome>> results) {
                done(std::move(results.front()));
              }});
}

void Runner::RunBatch(std::vector<Call> calls, BatchCallback done) {
  if (calls.empty()) {
    done({});
    return;
  }
  Enqueue(Job{std::move(calls), std::move(done)});
}

void Runner::Enqueue(Job job) {
  {
    MutexLock lock(mu_);
    if (!stopping_) {
      queue_.push_back(std::move(job));
      lock.unlock();
      cv_.notify_one();
      return;
    }
  }
  Fail(std::move(job), Status::Unavailable("transform runner stopped"));
}

void Runner::Fail(Job job, const Status& why) {
  std::vector<Result<Outcome>> results(job.calls.size(), Result<Outcome>(why));
  job.done(std::move(results));
}

Result<Outcome> Runner::RunSync(std::string script, Request request, std::optional<Limits> limits) {
  std::promise<Result<Outcome>> promise;
  std::future<Result<Outcome>> future = promise.get_future();
  Run(std::move(script), std::move(request), limits,
      [&promise](Result<Outcome> r) { promise.set_value(std::move(r)); });
  return future.get();
}

Status Runner::CheckSync(std::string script) {
  std::promise<Status> promise;
  std::future<Status> future = promise.get_future();
  std::vector<Call> calls;
  calls.push_back(Call{std::move(script), Request{}, options_.default_limits, {}});
  Enqueue(Job{std::move(calls),
              [&promise](std::vector<Result<Outcome>> r) { promise.set_value(r.front().status()); },
              /*check_only=*/true});
  return future.get();
}

size_t Runner::Queued() const {
  MutexLock lock(mu_);
  return queue_.size();
}

void Runner::Work(size_t index, std::promise<Status>* started) {
  NameThisThread(("hr-js-" + std::to_string(index)).c_str());
  Result<std::unique_ptr<Sandbox>> sandbox = Sandbox::Create(watchdog_, options_.sandbox);
  started->set_value(sandbox.ok() ? Status::Ok() : sandbox.status());
  if (!sandbox.ok()) return;
  for (;;) {
    Job job;
    {
      MutexLock lock(mu_);
      cv_.wait(lock, [this]() REQUIRES(mu_) { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    std::vector<Result<Outcome>> results;
    results.reserve(job.calls.size());
    for (Call& call : job.calls) {
      if (job.check_only) {
        Status checked = (*sandbox)->Check(call.script, call.limits);
        results.push_back(checked.ok() ? Result<Outcome>(Outcome{}) : Result<Outcome>(checked));
      } else if (Status s = CheckLimits(call.limits); !s.ok()) {
        results.push_back(s.WithFieldPrefix("limits"));
      } else {
        results.push_back((*sandbox)->Call(call.script, call.request, call.limits, call.scope));
      }
    }
    job.done(std::move(results));
  }
}

}  // namespace hookrelay::transform
