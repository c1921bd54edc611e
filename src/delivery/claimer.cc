#include "delivery/claimer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/crypto.h"
#include "common/thread_name.h"
#include "common/units.h"
#include "delivery/kinds/registry.h"
#include "delivery/outgoing_headers.h"
#include "delivery/signer.h"
#include "delivery/transformed_request.h"
#include "model/destination.h"

namespace hookrelay::delivery {

void Claimer::Start(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back(&Claimer::Loop, this);
}

void Claimer::Queue(ClaimJob job) {
  {
    MutexLock lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void Claimer::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    jobs_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void Claimer::Loop() {
  NameThisThread("hr-claimer");
  for (;;) {
    ClaimJob job;
    {
      MutexLock lock(mu_);
      cv_.wait(lock, [this]() REQUIRES(mu_) { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    RunClaim(job);
  }
}

bool Claimer::TakeProbe(const ClaimJob& job) {
  const model::Destination& d = *job.destination;
  // The shared breaker lets exactly one node's probe through (the row is locked while it decides).
  auto steps =
      state_.store.UpdateBreaker(d.name, d.breaker, {{policy::BreakerInput::kProbe, job.now}});
  if (!steps.ok()) {
    spdlog::warn("cannot ask the breaker of {} for a probe: {}", d.name, steps.status().message());
  }
  const bool allowed = steps.ok() && steps->back().allowed;
  const bool half_opened =
      steps.ok() && steps->back().transition == policy::BreakerTransition::kHalfOpened;
  // The probe out before was never answered within its lease (its node died before recording
  // it): this one replaces it. The node may have died before resuming the deliveries, too.
  const bool lease_expired = allowed && steps->back().probe_lease_expired;
  bool resume = half_opened || lease_expired;
  {
    MutexLock lock(state_.mu);
    DestState& s = state_.StateOf(d.name, d);
    ++s.control.control_gen;  // a read of the shared breaker begun before this write is stale
    if (steps.ok() && s.control.breaker_pending == 0) {
      s.control.breaker = policy::CircuitBreaker(d.breaker, steps->back().after);
    }
    if (!allowed) {
      // Another node probes (or the breaker is not due yet): the slot goes back.
      s.in_flight = std::max(0, s.in_flight - job.want);
      s.reserved = std::max(0, s.reserved - job.want);
      s.claims_out = std::max(0, s.claims_out - 1);
      state_.wake = true;
    } else {
      resume = resume || s.control.resume_before_probe;
      s.control.resume_before_probe = false;
    }
  }
  if (!allowed) {
    state_.wake_cv.notify_all();
    if (state_.options.on_claim) state_.options.on_claim(d.name, job.now, 0);
    return false;
  }
  if (half_opened) spdlog::info("breaker of {} half-open: sending one probe", d.name);
  if (lease_expired) {
    spdlog::warn(
        "breaker of {}: the half-open probe has no result after {} (its node stopped before "
        "recording it?); sending a new one",
        d.name, FormatDuration(policy::kProbeLease));
  }
  // The deliveries the open breaker showed as paused are due again, for the probe and after it.
  if (resume) (void)state_.store.ResumeDeliveries(d.name, job.now);
  return true;
}

void Claimer::RunClaim(const ClaimJob& job) {
  const model::Destination& d = *job.destination;
  const EngineOptions& options = state_.options;
  const Duration lease = d.policy.timeout + options.lease_margin;
  if (job.probe && !TakeProbe(job)) return;
  auto claimed = state_.store.ClaimDue(job.now, job.want, lease, options.node_id, d.name);
  int got = 0;
  std::optional<TimePoint> idle_until;
  if (!claimed.ok()) {
    spdlog::warn("cannot claim deliveries for {}: {}", d.name, claimed.status().message());
    idle_until = job.now + options.poll_interval;
  } else {
    got = static_cast<int>(claimed->size());
    if (got < job.want) {
      // The due work ran out: no point asking again before the next delivery is due (unless new
      // work arrives meanwhile, see Wake).
      idle_until = job.now + options.poll_interval;
      // An ordered destination's waiting deliveries are mostly held behind their queue's head (in
      // flight, or waiting for its retry): the head's result wakes the engine (the recorder's
      // Wake) when the next one may go, and the poll interval bounds the rest. Its next due time
      // is not looked for: that walks past the held ones, before this claim's deliveries go out
      // (bench/run ordered: whole-destination ordering at 0.77 of one at a time with it, 0.83
      // without).
      if (!d.ordered) {
        auto due = state_.store.NextDueAt(d.name);
        if (due.ok() && due->has_value()) idle_until = std::min(*idle_until, **due);
      }
    }
  }
  // Paused while the claim ran (Pause found nothing to pause: these were leased, and
  // PauseDeliveries leaves leased deliveries to finish): nothing of it is sent. The claims go back
  // to the store, and the scheduler's pause sweep shows them as paused.
  // (Paused as the scheduler reads it: by the operator, or in the current catalog.)
  // The shared state is read after the claim, so a pause or a trip committed by any node before
  // it is obeyed: nothing of the claim is sent then (a non-probe claim sends only while the shared
  // breaker is closed).
  bool paused_meanwhile = false;
  std::optional<store::DestinationControl> control;
  uint64_t read_gen = 0;
  if (got > 0) {
    auto catalog = state_.registry.Get();
    const model::Destination* now_d = catalog->FindDestination(d.name);
    paused_meanwhile = now_d != nullptr && now_d->paused;
    {
      MutexLock lock(state_.mu);
      read_gen = state_.StateOf(d.name, d).control.control_gen;
    }
    if (auto c = state_.store.GetDestinationControl(d.name); c.ok()) {
      control = std::move(*c);
      paused_meanwhile = paused_meanwhile || control->pause.has_value() ||
                         (!job.probe && control->breaker.state != policy::BreakerState::kClosed);
    } else {
      spdlog::warn("cannot read the breaker and pause of {}: {}", d.name, c.status().message());
    }
  }
  bool probe_not_sent = false;
  {
    MutexLock lock(state_.mu);
    DestState& s = state_.StateOf(d.name, d);
    if (control) state_.AdoptControl(s, *control, read_gen);
    paused_meanwhile = paused_meanwhile || (got > 0 && s.control.paused);
    const int sending = paused_meanwhile ? 0 : got;
    // The slots reserved for deliveries that were not there (or will not be sent) are free again.
    s.in_flight = std::max(0, s.in_flight - (job.want - sending));
    s.reserved = std::max(0, s.reserved - job.want);
    s.claims_out = std::max(0, s.claims_out - 1);
    if (idle_until && job.work_gen == state_.work_gen) s.idle_until = *idle_until;
    if (job.probe && sending == 0) {
      // Nothing to probe with: the breaker stays half-open and lets the next request through,
      // after resuming the deliveries again (see DestState::resume_before_probe).
      ProbeNotSentLocally(s, d);
      probe_not_sent = true;
    }
    state_.stats.in_flight += sending;
    state_.wake = true;
  }
  if (probe_not_sent) ProbeNotSentToStore(d, job.now);
  state_.wake_cv.notify_all();
  if (options.on_claim) options.on_claim(d.name, job.now, got);
  if (!claimed.ok() || claimed->empty()) return;
  if (paused_meanwhile) {
    std::vector<int64_t> ids;
    ids.reserve(claimed->size());
    for (const store::Delivery& delivery : *claimed) ids.push_back(delivery.id);
    auto released = state_.store.ReleaseClaims(ids, options.node_id);
    if (!released.ok()) {
      // Not sent either way: the leases expire and the deliveries are claimable (and paused by
      // the sweep) then.
      spdlog::warn("cannot give back {} claimed deliveries of paused destination {}: {}",
                   ids.size(), d.name, released.status().message());
    } else if (*released > 0) {
      // Due again: a claim that came up short while they were leased here must not leave the
      // scheduler idle past them (the shared state read may have been stale, see AdoptControl).
      state_.Wake();
    }
    return;
  }
  // The claim's events in one read, and the signing keys decoded once for all of them.
  std::vector<std::string> ids;
  ids.reserve(claimed->size());
  for (const store::Delivery& delivery : *claimed) ids.push_back(delivery.event_id);
  auto events = state_.store.GetEvents(ids);
  if (!events.ok()) {
    GiveBack(job, *claimed, events.status());
    return;
  }
  // The previous secret too while a rotation's grace period lasts (at the claim's time).
  const std::vector<std::string> keys = model::SigningKeys(d, state_.clock.Now());
  TransformBatch transforms;
  for (size_t i = 0; i < claimed->size(); ++i) {
    store::Delivery& delivery = (*claimed)[i];
    if (i >= events->size() || !(*events)[i].has_value()) {
      EndUnsent(job.destination, std::move(delivery),
                "the event is no longer stored (past its replay window)");
      continue;
    }
    Dispatch(job.destination, std::move(delivery), *(*events)[i], keys, job.probe, transforms);
  }
  if (!transforms.calls.empty()) RunTransforms(std::move(transforms), keys);
}

void Claimer::EndUnsent(const std::shared_ptr<const model::Destination>& dest,
                        store::Delivery delivery, std::string why) {
  Completion c{dest, std::move(delivery), {}, true};
  c.result.started_at = state_.clock.Now();
  c.result.outcome.error = policy::TransportError::kOther;
  c.result.error_detail = std::move(why);
  complete_(std::move(c));
}

void Claimer::ProbeNotSentLocally(DestState& s, const model::Destination& d) {
  s.control.resume_before_probe = true;
  policy::BreakerSnapshot snapshot = s.control.breaker.snapshot();
  snapshot.probe_in_flight = false;
  s.control.breaker = policy::CircuitBreaker(d.breaker, snapshot);
}

void Claimer::ProbeNotSentToStore(const model::Destination& d, TimePoint now) {
  auto steps =
      state_.store.UpdateBreaker(d.name, d.breaker, {{policy::BreakerInput::kProbeNotSent, now}});
  if (!steps.ok()) {
    spdlog::warn("cannot give back the probe of {}: {}", d.name, steps.status().message());
  }
  MutexLock lock(state_.mu);
  ++state_.StateOf(d.name, d).control.control_gen;  // a read begun before this write is stale
}

void Claimer::GiveBack(const ClaimJob& job, const std::vector<store::Delivery>& claimed,
                       const Status& why) {
  const model::Destination& d = *job.destination;
  std::vector<int64_t> ids;
  ids.reserve(claimed.size());
  for (const store::Delivery& delivery : claimed) ids.push_back(delivery.id);
  spdlog::warn("cannot read the events of {} claimed deliveries for {} ({}); giving them back",
               ids.size(), d.name, why.message());
  auto released = state_.store.ReleaseClaims(ids, state_.options.node_id);
  if (!released.ok()) {
    spdlog::warn(
        "cannot give back {} claimed deliveries for {} ({}): they are claimed again "
        "once their leases expire",
        ids.size(), d.name, released.status().message());
  }
  const int n = static_cast<int>(ids.size());
  bool idle;
  {
    MutexLock lock(state_.mu);
    DestState& s = state_.StateOf(d.name, d);
    s.in_flight = std::max(0, s.in_flight - n);
    if (job.probe) ProbeNotSentLocally(s, d);  // nothing was sent to probe with
    state_.stats.in_flight = std::max<int64_t>(0, state_.stats.in_flight - n);
    idle = state_.stats.in_flight == 0 && state_.stopping;  // Stop waits for it
    state_.wake = true;
  }
  if (job.probe) ProbeNotSentToStore(d, job.now);
  // Due again (as in RunClaim's release): no short claim's idle_until may hide them.
  if (released.ok() && *released > 0) state_.Wake();
  state_.wake_cv.notify_all();
  if (idle) state_.idle_cv.notify_all();
}

void Claimer::Dispatch(const std::shared_ptr<const model::Destination>& dest,
                       store::Delivery delivery, store::Event& e,
                       const std::vector<std::string>& keys, bool probe,
                       TransformBatch& transforms) {
  const model::Destination& d = *dest;
  const auto catalog = state_.registry.Get();
  if (const model::TransformSpec* t = catalog->TransformFor(e.source, d)) {
    DispatchTransformed(dest, std::move(delivery), e, *t, probe, transforms);
    return;
  }
  SendRequest req;
  req.tag = static_cast<uint64_t>(delivery.id);
  req.kind = KindOf(d);
  req.url = d.url;
  req.timeout = d.policy.timeout;
  req.allow_private = d.allow_private;
  // Shares the destination's ownership: the PEM texts are not copied per request.
  if (!d.tls.empty()) req.tls = std::shared_ptr<const model::DestinationTls>(dest, &d.tls);
  req.headers = OutgoingHeaders(e.headers, e.content_type, d,
                                StandardWebhookHeaders(e.id, state_.clock.Now(), e.body, keys));
  req.body = std::move(e.body);  // the event is ours: the body is moved, not copied
  req.destination = dest;
  req.source = e.source;
  req.event_type = e.type.value_or("");
  Send(dest, std::move(delivery), std::move(req), probe);
}

void Claimer::Send(const std::shared_ptr<const model::Destination>& dest, store::Delivery delivery,
                   SendRequest req, bool probe,
                   std::optional<store::Attempt::Transformed> transformed) {
  sender_.Send(std::move(req), [this, dest, delivery = std::move(delivery), probe,
                                transformed = std::move(transformed)](SendResult r) mutable {
    Completion c{std::move(dest), std::move(delivery), std::move(r), false};
    c.probe = probe;
    c.transformed = std::move(transformed);
    complete_(std::move(c));
  });
}

void Claimer::DispatchTransformed(const std::shared_ptr<const model::Destination>& dest,
                                  store::Delivery delivery, store::Event& e,
                                  const model::TransformSpec& transform, bool probe,
                                  TransformBatch& batch) {
  const model::Destination& d = *dest;
  if (!state_.options.transforms) {
    EndUnsent(dest, std::move(delivery),
              "transform: transforms are not available on this node; the event stays replayable");
    return;
  }
  Result<OutgoingTarget> target = SplitTarget(d.url);
  if (!target.ok()) {
    EndUnsent(dest, std::move(delivery), "transform: " + target.status().message());
    return;
  }
  transform::Request request;
  request.method = "POST";
  request.path = target->path;
  request.query = target->query;
  // What the script sees: the request as it would go, without the destination's credential and
  // hookrelay's own webhook-* headers, which are set after it (the signature is over the body
  // the script returns).
  request.headers = OutgoingHeaders(e.headers, e.content_type, d, {});
  if (d.auth.kind != model::DestinationAuth::Kind::kNone) request.headers.pop_back();
  request.body = std::move(e.body);
  HeaderPairs before = request.headers;
  batch.calls.push_back(transform::Runner::Call{
      transform.script, std::move(request),
      LimitsOf(transform, state_.options.transforms->default_limits()),
      // The destination's kept realm: its calls share one, no other destination's do.
      d.name});
  batch.pending.push_back(Transforming{dest, std::move(delivery), std::move(target->origin), e.id,
                                       e.source, e.type.value_or(""), std::move(before), probe});
}

void Claimer::RunTransforms(TransformBatch batch, const std::vector<std::string>& keys) {
  for (size_t from = 0; from < batch.calls.size(); from += kTransformBatch) {
    const size_t to = std::min(batch.calls.size(), from + kTransformBatch);
    std::vector<transform::Runner::Call> calls(std::make_move_iterator(batch.calls.begin() + from),
                                               std::make_move_iterator(batch.calls.begin() + to));
    auto pending = std::make_shared<std::vector<Transforming>>(
        std::make_move_iterator(batch.pending.begin() + from),
        std::make_move_iterator(batch.pending.begin() + to));
    state_.options.transforms->RunBatch(
        std::move(calls), [this, pending, keys](std::vector<Result<transform::Outcome>> outcomes) {
          for (size_t i = 0; i < outcomes.size(); ++i) {
            SendTransformed(std::move((*pending)[i]), std::move(outcomes[i]), keys);
          }
        });
  }
}

void Claimer::SendTransformed(Transforming t, Result<transform::Outcome> outcome,
                              const std::vector<std::string>& keys) {
  const model::Destination& d = *t.dest;
  if (!outcome.ok()) {
    EndUnsent(
        t.dest, std::move(t.delivery),
        "transform: " + outcome.status().message() + "; fix the transform, then replay the event");
    return;
  }
  if (!outcome->request) {
    EndUnsent(t.dest, std::move(t.delivery), "skipped: transform returned null");
    return;
  }
  transform::Request& out = *outcome->request;
  SendRequest req;
  req.tag = static_cast<uint64_t>(t.delivery.id);
  req.kind = KindOf(d);
  req.url = t.origin + out.path + (out.query.empty() ? "" : "?" + out.query);
  req.timeout = d.policy.timeout;
  req.allow_private = d.allow_private;
  if (!d.tls.empty()) req.tls = std::shared_ptr<const model::DestinationTls>(t.dest, &d.tls);
  store::Attempt::Transformed sent{static_cast<int64_t>(out.body.size()),
                                   HexEncode(Sha256(out.body)),
                                   HeadersChanged(t.before, out.headers)};
  req.headers =
      TransformedHeaders(std::move(out.headers), d,
                         StandardWebhookHeaders(t.event_id, state_.clock.Now(), out.body, keys));
  req.method = std::move(out.method);
  req.body = std::move(out.body);
  req.destination = t.dest;
  req.source = std::move(t.source);
  req.event_type = std::move(t.type);
  Send(t.dest, std::move(t.delivery), std::move(req), t.probe, std::move(sent));
}

}  // namespace hookrelay::delivery
