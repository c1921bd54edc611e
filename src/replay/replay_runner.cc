#include "replay/replay_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/json.hpp>
#include <map>
#include <set>

#include "common/thread_name.h"
#include "common/time_format.h"
#include "common/units.h"
#include "pacing/replay_pacer.h"

namespace hookrelay::replay {

std::vector<std::string> ReplayTargets(const std::vector<store::Delivery>& deliveries,
                                       const ReplayFilter& filter) {
  if (filter.routed == false) {
    // An event no route took goes to the destination named, once: not again when it already has
    // a delivery there (a bulk replay run twice does not send it twice).
    if (!filter.destination) return {};
    for (const store::Delivery& d : deliveries) {
      if (d.destination == *filter.destination) return {};
    }
    return {*filter.destination};
  }
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

void ReplayRunner::Start() {
  loop_.Start([this] { return Pass(); });
}

void ReplayRunner::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();  // the jobs' waits
  loop_.Stop();
  for (Worker& w : workers_) {
    if (w.thread.joinable()) w.thread.join();
  }
  workers_.clear();
}

void ReplayRunner::Notify() {
  {
    MutexLock lock(mu_);
    ++generation_;
  }
  cv_.notify_all();
  loop_.RunNow();
}

bool ReplayRunner::Stopping() {
  MutexLock lock(mu_);
  return stopping_;
}

Status ReplayRunner::CheckStillOurs(const std::string& id) {
  Result<std::optional<store::ReplayJob>> now = store_.GetReplayJob(id);
  if (!now.ok()) return now.status();
  if (!now->has_value() || (*now)->state != store::ReplayJobState::kRunning ||
      (*now)->lease_owner != options_.node_id) {
    return Status::FailedPrecondition("replay job " + id + " was cancelled");
  }
  return Status::Ok();
}

uint64_t ReplayRunner::Generation() {
  MutexLock lock(mu_);
  return generation_;
}

Status ReplayRunner::SleepUntil(TimePoint t, const std::string& id, uint64_t* seen, bool* stopping,
                                bool any_notify) {
  MutexLock lock(mu_);
  for (;;) {
    if (stopping_) {
      *stopping = true;
      return Status::Ok();
    }
    if (generation_ != *seen) {  // notified: cancelled?
      *seen = generation_;
      lock.unlock();
      Status ours = CheckStillOurs(id);
      lock.lock();
      if (!ours.ok() || any_notify) return ours;
      continue;
    }
    // Through the clock: with a FakeClock, a test that moves the time to `t` wakes the job.
    if (!clock_.WaitUntil(lock, cv_, t,
                          [&]() REQUIRES(mu_) { return stopping_ || generation_ != *seen; })) {
      return Status::Ok();
    }
  }
}

Duration ReplayRunner::Pass() {
  // Joins the workers whose job ended.
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
  {
    MutexLock lock(mu_);
    if (stopping_) return BackgroundLoop::kNoTimer;
    // No room: a worker that ends asks for the next pass (RunNow).
    if (active_ >= std::max(1, options_.max_concurrent_jobs)) return options_.poll_interval;
  }
  Result<std::optional<store::ReplayJob>> job = Claim();
  // On the clock: a job whose node died becomes claimable when its lease expires, in the clock's
  // time.
  if (!job.ok() || !job->has_value()) return options_.poll_interval;
  {
    MutexLock lock(mu_);
    ++active_;
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  workers_.push_back({std::thread([this, done, j = std::move(**job)]() mutable {
                        NameThisThread("hr-replay-job");
                        (void)RunClaimed(std::move(j));
                        {
                          MutexLock lock(mu_);
                          done->store(true);
                          --active_;
                        }
                        // Room for the next job; the pass it starts sees this worker done.
                        loop_.RunNow();
                      }),
                      done});
  return Duration::zero();  // look for the next job at once
}

Result<std::optional<store::ReplayJob>> ReplayRunner::Claim() {
  if (Stopping()) return std::optional<store::ReplayJob>();
  return store_.ClaimReplayJob(clock_.Now(), options_.lease, options_.node_id);
}

Status ReplayRunner::RunClaimed(store::ReplayJob job) {
  const std::string id = job.id;
  spdlog::info("replay job {} {}: filter {}, {}", id,
               job.done + job.failed > 0 ? "resumed" : "started", job.filter, FormatRate(job.rate));
  uint64_t seed = 0;
  {
    MutexLock lock(mu_);  // random_ may be shared by the jobs' threads
    seed = random_.Next();
  }
  SeededRandom random(seed);
  Status s = RunJob(std::move(job), random);
  LogJobEnd(id, s);
  return s;
}

Result<bool> ReplayRunner::RunOnce() {
  Result<std::optional<store::ReplayJob>> job = Claim();
  if (!job.ok()) return job.status();
  if (!job->has_value()) return false;
  Status s = RunClaimed(std::move(**job));
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
      spdlog::info("replay job {} finished: {} {} replayed, {} not replayable", id, j.done,
                   j.done == 1 ? "event" : "events", j.failed);
      break;
    case store::ReplayJobState::kCancelled:
      spdlog::info("replay job {} cancelled after {} of {} {}", id, j.done + j.failed, j.total,
                   j.total == 1 ? "event" : "events");
      break;
    case store::ReplayJobState::kFailed:
      spdlog::warn("replay job {} failed: {}", id, j.error.value_or("unknown error"));
      break;
    default:
      if (Stopping()) {
        spdlog::info("replay job {} paused by shutdown after {} of {} {}", id, j.done + j.failed,
                     j.total, j.total == 1 ? "event" : "events");
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

Status ReplayRunner::RunJob(store::ReplayJob job, Random& random) {
  Result<ReplayFilter> filter = ParseReplayFilter(job.filter);
  if (!filter.ok() || !(job.rate >= kMinReplayRate && job.rate <= kMaxReplayRate)) {
    job.state = store::ReplayJobState::kFailed;
    job.error = filter.ok() ? "rate must be from " + FormatRate(kMinReplayRate) + " to " +
                                  FormatRate(kMaxReplayRate)
                            : filter.status().message();
    return Save(job);
  }
  const store::EventFilter events = ToEventFilter(AsOfJob(*filter, job.created_at));
  // job.total was counted when the job was created (CountReplayable), before any chain: it is
  // what the user was told and is never changed here, even when events change meanwhile.

  const Duration slot = std::max(Duration(1), Duration(static_cast<int64_t>(1000 / job.rate)));
  std::optional<pacing::ReplayPacer> pacer;
  pacer.emplace(job.rate, clock_.Now(), random);
  bool stopping = false;
  // Notifies since the job was claimed (which read its state) wake its waits.
  uint64_t seen = Generation();
  // A cancel (and its Notify) between the claim and the line above would otherwise be missed
  // until the job's first wait ended (an hour at 1/h): look once now.
  HR_RETURN_IF_ERROR(CheckStillOurs(job.id));
  // Chains are created in batches, each due at its paced time (at most `lookahead` ahead), so
  // one store commit covers many chains and the engine sends each when it is due.
  std::vector<store::NewReplay> pending;
  auto flush = [&]() -> Status {
    if (pending.empty()) return Status::Ok();
    // A cancel stops the job before its next batch, not only at the next progress write.
    HR_RETURN_IF_ERROR(CheckStillOurs(job.id));
    Result<int64_t> created = store_.CreateReplays(pending);
    if (!created.ok()) return created.status();
    pending.clear();
    if (wake_) wake_();
    return Status::Ok();
  };
  // Adds a chain at the job's pace (waiting for its slot); sets `stopping` when the runner stops.
  auto add = [&](const std::string& event_id, const std::string& name, int max_attempts) -> Status {
    TimePoint at = pacer->Next();
    // Behind the pace (a slow store, or back from a wait): start the pace again from now rather
    // than catch up, which would send a burst above the rate.
    if (clock_.Now() - at > slot) {
      pacer.emplace(job.rate, clock_.Now(), random);
      at = pacer->Next();
    }
    if (at - options_.lookahead > clock_.Now()) {
      HR_RETURN_IF_ERROR(flush());
      HR_RETURN_IF_ERROR(SleepUntil(at - options_.lookahead, job.id, &seen, &stopping));
      if (stopping) return Status::Ok();
    }
    pending.push_back({event_id, name, max_attempts, std::max(at, clock_.Now())});
    return Status::Ok();
  };

  // Chains held back while their destination is blocked, in walk order; `page` is the cursor of
  // the page the event was on, where a claimant after a crash must start again.
  struct HeldBack {
    std::string event_id;
    std::string destination;
    std::string page;
  };
  std::vector<HeldBack> held;
  std::set<std::string> held_destinations;
  std::set<std::string> uncounted;  // events with held-back chains and none created yet
  // Creates the held-back chains whose destination is no longer blocked (in order); the others
  // stay. Sets *blocked to why the first still-blocked destination waits.
  auto release = [&](std::optional<Waiting>* blocked) -> Status {
    if (held.empty()) return Status::Ok();
    std::map<std::string, std::optional<Waiting>> state;
    for (const std::string& name : held_destinations) state[name] = Blocked(name);
    std::shared_ptr<const model::Catalog> catalog = registry_.Get();
    std::vector<HeldBack> still;
    for (HeldBack& h : held) {
      if (stopping || state[h.destination]) {
        if (blocked && !*blocked && state[h.destination]) *blocked = state[h.destination];
        still.push_back(std::move(h));
        continue;
      }
      const model::Destination* d = catalog->FindDestination(h.destination);
      Result<std::optional<store::Event>> e = store_.GetEvent(h.event_id);
      if (!e.ok()) return e.status();
      if (!d || !e->has_value() || clock_.Now() > (*e)->received_at + d->policy.replay_window) {
        continue;  // counted as failed below when none of its chains went
      }
      HR_RETURN_IF_ERROR(add(h.event_id, h.destination, d->policy.max_attempts));
      if (stopping) {
        still.push_back(std::move(h));
        continue;
      }
      if (uncounted.erase(h.event_id)) ++job.done;
    }
    held = std::move(still);
    held_destinations.clear();
    std::set<std::string> left;
    for (const HeldBack& h : held) {
      held_destinations.insert(h.destination);
      left.insert(h.event_id);
    }
    // Events whose held-back chains all turned out not replayable.
    for (auto it = uncounted.begin(); it != uncounted.end();) {
      if (left.count(*it)) {
        ++it;
      } else {
        ++job.failed;
        it = uncounted.erase(it);
      }
    }
    return Status::Ok();
  };

  Duration last_save = clock_.MonotonicNow();
  Duration last_release = last_save;
  std::string cursor = job.cursor;
  bool walked = false;
  while (!walked) {
    Result<store::EventPage> page = store_.ListEvents(events, cursor, options_.page_size);
    if (!page.ok()) return page.status();
    for (const store::Event& e : page->items) {
      Result<std::vector<store::Delivery>> ds = store_.GetDeliveries(e.id);
      if (!ds.ok()) return ds.status();
      const std::vector<std::string> targets = ReplayTargets(*ds, *filter);
      if (targets.empty()) continue;
      std::shared_ptr<const model::Catalog> catalog = registry_.Get();
      bool replayed = false;
      bool held_back = false;
      for (const std::string& name : targets) {
        const model::Destination* d = catalog->FindDestination(name);
        if (!d || clock_.Now() > e.received_at + d->policy.replay_window) continue;
        // A blocked destination holds back its own chains only (after the ones it already
        // holds, to keep their order); the others go on.
        if (held_destinations.count(name) || Blocked(name)) {
          held.push_back({e.id, name, cursor});
          held_destinations.insert(name);
          held_back = true;
          continue;
        }
        HR_RETURN_IF_ERROR(add(e.id, name, d->policy.max_attempts));
        if (stopping) return Status::Ok();
        replayed = true;
      }
      if (replayed) {
        ++job.done;
      } else if (held_back) {
        uncounted.insert(e.id);
      } else {
        ++job.failed;
      }
      // Held-back chains go as soon as their destination is free again (looked at every second);
      // with too many held back, the walk waits until some go.
      if (!held.empty() && (held.size() >= options_.max_held_back ||
                            clock_.MonotonicNow() - last_release >= std::chrono::seconds(1))) {
        for (;;) {
          std::optional<Waiting> blocked;
          HR_RETURN_IF_ERROR(release(&blocked));
          if (stopping) return Status::Ok();
          if (held.size() < options_.max_held_back) break;
          HR_RETURN_IF_ERROR(flush());
          job.waiting = blocked ? std::optional(WaitingToJson(*blocked)) : std::nullopt;
          HR_RETURN_IF_ERROR(Save(job));
          HR_RETURN_IF_ERROR(
              SleepUntil(clock_.Now() + std::chrono::seconds(1), job.id, &seen, &stopping, true));
          if (stopping) return Status::Ok();
        }
        if (job.waiting) {
          job.waiting.reset();
          HR_RETURN_IF_ERROR(Save(job));
        }
        last_release = clock_.MonotonicNow();
      }
      if (clock_.MonotonicNow() - last_save >= options_.progress_interval) {
        HR_RETURN_IF_ERROR(flush());
        HR_RETURN_IF_ERROR(Save(job));  // kFailedPrecondition: cancelled
        last_save = clock_.MonotonicNow();
      }
    }
    HR_RETURN_IF_ERROR(flush());
    cursor = page->next_cursor;
    if (cursor.empty()) walked = true;
    // A claimant after a crash starts at the first page with held-back chains.
    job.cursor = held.empty() ? cursor : held.front().page;
    if (walked) break;
    HR_RETURN_IF_ERROR(Save(job));
    last_save = clock_.MonotonicNow();
  }
  // Only held-back chains are left: wait for their destinations, saying why.
  while (!held.empty()) {
    std::optional<Waiting> blocked;
    HR_RETURN_IF_ERROR(release(&blocked));
    HR_RETURN_IF_ERROR(flush());
    if (stopping) return Status::Ok();
    if (held.empty()) break;
    if (!blocked) continue;  // a destination came free meanwhile: look again
    // Saved at every step: the job shows why it waits, its lease stays renewed through a long
    // wait (a breaker opens for up to 24 h), and the cursor points at the held-back events.
    job.waiting = WaitingToJson(*blocked);
    job.cursor = held.front().page;
    HR_RETURN_IF_ERROR(Save(job));
    TimePoint until = clock_.Now() + std::chrono::seconds(1);
    if (blocked->until) until = std::min(until, *blocked->until);
    HR_RETURN_IF_ERROR(SleepUntil(until, job.id, &seen, &stopping, true));
    if (stopping) return Status::Ok();
  }
  job.state = store::ReplayJobState::kDone;
  job.waiting.reset();
  job.cursor.clear();
  return Save(job);
}

}  // namespace hookrelay::replay
