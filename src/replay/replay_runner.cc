#include "replay/replay_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/json.hpp>
#include <map>

#include "common/thread_name.h"
#include "common/time_format.h"
#include "pacing/replay_pacer.h"

namespace hookrelay::replay {

std::vector<std::string> ReplayTargets(const std::vector<store::Delivery>& deliveries,
                                       const ReplayFilter& filter) {
  std::vector<std::string> order;
  std::map<std::string, const store::Delivery*> latest;
  for (const store::Delivery& d : deliveries) {
    auto [it, inserted] = latest.emplace(d.destination, &d);
    if (inserted) order.push_back(d.destination);
    if (d.chain > it->second->chain) it->second = &d;
  }
  std::vector<std::string> targets;
  for (const std::string& name : order) {
    if (filter.destination && *filter.destination != name) continue;
    if (latest[name]->status != filter.status) continue;
    targets.push_back(name);
  }
  return targets;
}

std::string WaitingToJson(const Waiting& w) {
  boost::json::object o;
  o["reason"] = w.reason;
  o["destination"] = w.destination;
  o["until"] = w.until ? boost::json::value(FormatRfc3339(*w.until, false)) : nullptr;
  std::string message;
  if (w.reason == "breaker_open") {
    message = "breaker open on " + w.destination;
    if (w.until) message += " until " + FormatRfc3339(*w.until, false);
  } else {
    message = "destination " + w.destination + " is paused";
    if (!w.detail.empty()) message += " (" + w.detail + ")";
  }
  o["message"] = message;
  return boost::json::serialize(o);
}

Result<int64_t> CountReplayable(store::Store& store, const ReplayFilter& filter, int page_size) {
  const store::EventFilter events = ToEventFilter(filter);
  int64_t total = 0;
  std::string cursor;
  do {
    Result<store::EventPage> page = store.ListEvents(events, cursor, page_size);
    if (!page.ok()) return page.status();
    for (const store::Event& e : page->items) {
      Result<std::vector<store::Delivery>> ds = store.GetDeliveries(e.id);
      if (!ds.ok()) return ds.status();
      if (!ReplayTargets(*ds, filter).empty()) ++total;
    }
    cursor = page->next_cursor;
  } while (!cursor.empty());
  return total;
}

ReplayRunner::ReplayRunner(store::Store& store, const model::Registry& registry, const Clock& clock,
                           Random& random, std::function<void()> wake, ReplayRunnerOptions options)
    : store_(store),
      registry_(registry),
      clock_(clock),
      wake_(std::move(wake)),
      options_(std::move(options)),
      random_(random) {}

ReplayRunner::~ReplayRunner() { Stop(); }

void ReplayRunner::Start() { thread_ = std::thread(&ReplayRunner::Loop, this); }

void ReplayRunner::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ReplayRunner::Notify() {
  {
    std::lock_guard lock(mu_);
    notified_ = true;
  }
  cv_.notify_all();
}

bool ReplayRunner::Stopping() {
  std::lock_guard lock(mu_);
  return stopping_;
}

bool ReplayRunner::SleepUntil(TimePoint t) {
  std::unique_lock lock(mu_);
  for (;;) {
    if (stopping_) return false;
    const Duration left = t - clock_.Now();
    if (left <= Duration::zero()) return true;
    cv_.wait_for(lock, left, [this] { return stopping_; });
  }
}

void ReplayRunner::Loop() {
  NameThisThread("hr-replay");
  for (;;) {
    Result<bool> ran = RunOnce();
    if (ran.ok() && *ran) continue;  // look for the next job at once
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, options_.poll_interval, [this] { return stopping_ || notified_; });
    notified_ = false;
    if (stopping_) return;
  }
}

Result<bool> ReplayRunner::RunOnce() {
  if (Stopping()) return false;
  Result<std::optional<store::ReplayJob>> job =
      store_.ClaimReplayJob(clock_.Now(), options_.lease, options_.node_id);
  if (!job.ok()) return job.status();
  if (!job->has_value()) return false;
  const std::string id = (*job)->id;
  spdlog::info("replay job {} {}: filter {}, {}/s", id,
               (*job)->done + (*job)->failed > 0 ? "resumed" : "started", (*job)->filter,
               (*job)->rate);
  Status s = RunJob(std::move(**job));
  LogJobEnd(id, s);
  if (!s.ok() && s.code() != Status::Code::kFailedPrecondition) return s;
  return true;
}

void ReplayRunner::LogJobEnd(const std::string& id, const Status& run) {
  if (!run.ok() && run.code() != Status::Code::kFailedPrecondition) {
    spdlog::warn("replay job {} stopped: {} (it resumes when its lease expires)", id,
                 run.message());
    return;
  }
  Result<std::optional<store::ReplayJob>> end = store_.GetReplayJob(id);
  if (!end.ok() || !end->has_value()) return;
  const store::ReplayJob& j = **end;
  switch (j.state) {
    case store::ReplayJobState::kDone:
      spdlog::info("replay job {} finished: {} events replayed, {} not replayable", id, j.done,
                   j.failed);
      break;
    case store::ReplayJobState::kCancelled:
      spdlog::info("replay job {} cancelled after {} of {} events", id, j.done + j.failed, j.total);
      break;
    case store::ReplayJobState::kFailed:
      spdlog::warn("replay job {} failed: {}", id, j.error.value_or("unknown error"));
      break;
    default:
      if (Stopping()) {
        spdlog::info("replay job {} paused by shutdown after {} of {} events", id,
                     j.done + j.failed, j.total);
      }
      break;
  }
}

Status ReplayRunner::Save(store::ReplayJob& job) {
  job.lease_until = clock_.Now() + options_.lease;
  return store_.UpdateReplayJob(job, options_.node_id);
}

std::optional<Waiting> ReplayRunner::Blocked(const std::string& destination) {
  Result<std::optional<policy::BreakerSnapshot>> b = store_.GetBreaker(destination);
  if (b.ok() && b->has_value() && (*b)->state == policy::BreakerState::kOpen && (*b)->open_until &&
      *(*b)->open_until > clock_.Now()) {
    return Waiting{"breaker_open", destination, (*b)->open_until, ""};
  }
  std::shared_ptr<const model::Catalog> catalog = registry_.Get();
  const model::Destination* d = catalog->FindDestination(destination);
  if (d && d->paused) return Waiting{"destination_paused", destination, std::nullopt, "config"};
  if (options_.paused_reason) {
    if (std::optional<std::string> why = options_.paused_reason(destination)) {
      return Waiting{"destination_paused", destination, std::nullopt, *why};
    }
  }
  return std::nullopt;
}

Status ReplayRunner::WaitWhileBlocked(store::ReplayJob& job, const std::string& destination,
                                      bool* waited, bool* stopping) {
  for (;;) {
    std::optional<Waiting> blocked = Blocked(destination);
    if (!blocked) {
      if (!job.waiting) return Status::Ok();
      job.waiting.reset();
      return Save(job);
    }
    *waited = true;
    // Saved at every step: the job shows why it waits, its lease stays renewed through a long
    // wait (a breaker opens for up to 24 h), and a cancel is seen within a step.
    job.waiting = WaitingToJson(*blocked);
    HR_RETURN_IF_ERROR(Save(job));
    const TimePoint now = clock_.Now();
    TimePoint until = now + std::chrono::seconds(1);
    if (blocked->until) until = std::min(until, *blocked->until);
    if (!SleepUntil(until)) {
      *stopping = true;
      return Status::Ok();
    }
  }
}

Status ReplayRunner::RunJob(store::ReplayJob job) {
  Result<ReplayFilter> filter = ParseReplayFilter(job.filter);
  if (!filter.ok() || !(job.rate > 0)) {
    job.state = store::ReplayJobState::kFailed;
    job.error = filter.ok() ? "rate must be positive" : filter.status().message();
    return Save(job);
  }
  const store::EventFilter events = ToEventFilter(AsOfJob(*filter, job.created_at));
  // job.total was counted when the job was created (CountReplayable), before any chain: it is
  // what the user was told and is never changed here, even when events change meanwhile.

  const Duration slot = std::max(Duration(1), Duration(static_cast<int64_t>(1000 / job.rate)));
  std::optional<pacing::ReplayPacer> pacer;
  pacer.emplace(job.rate, clock_.Now(), random_);
  // Chains are created in batches, each due at its paced time (at most `lookahead` ahead), so
  // one store commit covers many chains and the engine sends each when it is due.
  std::vector<store::NewReplay> pending;
  auto flush = [&]() -> Status {
    if (pending.empty()) return Status::Ok();
    // A cancel stops the job before its next batch, not only at the next progress write.
    Result<std::optional<store::ReplayJob>> now = store_.GetReplayJob(job.id);
    if (!now.ok()) return now.status();
    if (!now->has_value() || (*now)->state != store::ReplayJobState::kRunning ||
        (*now)->lease_owner != options_.node_id) {
      return Status::FailedPrecondition("replay job " + job.id + " was cancelled");
    }
    Result<int64_t> created = store_.CreateReplays(pending);
    if (!created.ok()) return created.status();
    pending.clear();
    if (wake_) wake_();
    return Status::Ok();
  };
  Duration last_save = clock_.MonotonicNow();
  std::string cursor = job.cursor;
  for (;;) {
    Result<store::EventPage> page = store_.ListEvents(events, cursor, options_.page_size);
    if (!page.ok()) return page.status();
    for (const store::Event& e : page->items) {
      Result<std::vector<store::Delivery>> ds = store_.GetDeliveries(e.id);
      if (!ds.ok()) return ds.status();
      const std::vector<std::string> targets = ReplayTargets(*ds, *filter);
      if (targets.empty()) continue;
      std::shared_ptr<const model::Catalog> catalog = registry_.Get();
      bool replayed = false;
      for (const std::string& name : targets) {
        const model::Destination* d = catalog->FindDestination(name);
        if (!d || clock_.Now() > e.received_at + d->policy.replay_window) continue;
        bool waited = false;
        if (Blocked(name)) {
          HR_RETURN_IF_ERROR(flush());  // what is already paced goes out before the wait
          bool stopping = false;
          HR_RETURN_IF_ERROR(WaitWhileBlocked(job, name, &waited, &stopping));
          if (stopping) return Status::Ok();
          last_save = clock_.MonotonicNow();
        }
        // After a pause the pace restarts: no burst of the slots missed while waiting.
        if (waited) pacer.emplace(job.rate, clock_.Now(), random_);
        TimePoint at = pacer->Next();
        // Behind the pace (a slow store): start the pace again from now rather than catch up,
        // which would send a burst above the rate.
        if (clock_.Now() - at > slot) {
          pacer.emplace(job.rate, clock_.Now(), random_);
          at = pacer->Next();
        }
        if (at - options_.lookahead > clock_.Now()) {
          HR_RETURN_IF_ERROR(flush());
          if (!SleepUntil(at - options_.lookahead)) return Status::Ok();
        }
        pending.push_back({e.id, name, d->policy.max_attempts, std::max(at, clock_.Now())});
        replayed = true;
      }
      ++(replayed ? job.done : job.failed);
      if (clock_.MonotonicNow() - last_save >= options_.progress_interval) {
        HR_RETURN_IF_ERROR(flush());
        HR_RETURN_IF_ERROR(Save(job));  // kFailedPrecondition: cancelled
        last_save = clock_.MonotonicNow();
      }
    }
    HR_RETURN_IF_ERROR(flush());
    cursor = page->next_cursor;
    job.cursor = cursor;
    if (cursor.empty()) break;
    HR_RETURN_IF_ERROR(Save(job));
    last_save = clock_.MonotonicNow();
  }
  job.state = store::ReplayJobState::kDone;
  job.waiting.reset();
  return Save(job);
}

}  // namespace hookrelay::replay
