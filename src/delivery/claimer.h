#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "delivery/engine_state.h"
#include "delivery/outgoing_headers.h"
#include "delivery/request_sender.h"

namespace hookrelay::delivery {

// Claiming: turns the scheduler's ClaimJobs into requests.
//
// A few threads each take a job, lease up to `want` due deliveries of that destination from the
// store (Store::ClaimDue with this node as owner, lease = the attempt timeout + lease_margin),
// give back the reserved slots that found no delivery (and remember that nothing is due before
// the next due time, so the scheduler does not ask again in vain), wake the scheduler, then read
// the claimed deliveries' events (one Store::GetEvents call per claim), build each request
// (headers, signature; the signing keys are decoded once per claim) and hand it to the
// RequestSender. The sender's answer goes to `complete`, on the sender's thread.
//
// One claim per destination is out at a time (the scheduler sees to that), so the threads are
// how many destinations claim at once.
class Claimer {
 public:
  using CompleteFn = std::function<void(Completion)>;

  Claimer(EngineState& state, RequestSender& sender, CompleteFn complete)
      : state_(state), sender_(sender), complete_(std::move(complete)) {}
  ~Claimer() { Stop(); }
  Claimer(const Claimer&) = delete;
  Claimer& operator=(const Claimer&) = delete;

  void Start(int threads);
  void Queue(ClaimJob job);
  // Drops the jobs not started (their deliveries stay due and their slots are not given back:
  // the engine is stopping) and waits for the running ones, which send what they claimed.
  void Stop();

 private:
  void Loop();
  // A probe job: asks the shared breaker for the probe (Store::UpdateBreaker, kProbe); false when
  // another node has it or it is not due (the reserved slot is given back). Resumes the deliveries
  // the open breaker paused when this node half-opened it.
  bool TakeProbe(const ClaimJob& job);
  // A probe's claim sent nothing: this node's copy of the breaker lets the next probe through
  // after resuming the deliveries again (DestState::resume_before_probe)...
  void ProbeNotSentLocally(DestState& s, const model::Destination& d) REQUIRES(state_.mu);
  // ...and so does the shared breaker, for this node or another (outside state_.mu).
  void ProbeNotSentToStore(const model::Destination& d, TimePoint now);
  // Claims what `job` reserved slots for, frees the slots of what was not found, and sends.
  void RunClaim(const ClaimJob& job);
  // The claim's events could not be read (`why`: the store is unavailable): nothing of it is
  // sent, recorded or failed. The claims go back to the store (due as before; if that fails
  // too, their leases expire and they are claimed again) and their slots are free again.
  void GiveBack(const ClaimJob& job, const std::vector<store::Delivery>& claimed,
                const Status& why);
  // Sends one claimed delivery of `e` (whose body it takes), signed with `keys` (the destination's
  // decoded signing keys, decoded once per claim).
  // `probe`: the claim is the breaker's half-open probe (Completion::probe).
  // The request's way out: to the sender, its answer to `complete_`.
  void Send(const std::shared_ptr<const model::Destination>& dest, store::Delivery delivery,
            SendRequest req, bool probe,
            std::optional<store::Attempt::Transformed> transformed = std::nullopt);
  // Ends a delivery for good without an HTTP attempt, saying why (an event gone, a transform
  // that failed or returned null).
  void EndUnsent(const std::shared_ptr<const model::Destination>& dest, store::Delivery delivery,
                 std::string why);

  // A claim's deliveries whose destination or route has a transform: their requests go through
  // it on the transform runner (off this thread), then to Send; an error or a null from the
  // script makes the delivery final without an HTTP attempt, with the reason.
  struct Transforming {
    std::shared_ptr<const model::Destination> dest;
    store::Delivery delivery;
    std::string origin;    // the destination URL's scheme://host:port
    std::string event_id;  // for the webhook-* headers
    std::string source;    // SendRequest::source
    std::string type;      // SendRequest::event_type
    HeaderPairs before;    // the headers the script got, to record which it changed
    bool probe = false;
  };
  struct TransformBatch {
    std::vector<transform::Runner::Call> calls;
    std::vector<Transforming> pending;  // pending[i] is calls[i]'s delivery
  };
  // The calls of one runner job: a claim's transformed requests go to the sender together, while
  // the runner's workers share a large claim between them.
  static constexpr size_t kTransformBatch = 16;
  // Adds a delivery to `batch` (or ends it at once when it cannot be transformed here).
  void DispatchTransformed(const std::shared_ptr<const model::Destination>& dest,
                           store::Delivery delivery, store::Event& e,
                           const model::TransformSpec& transform, bool probe,
                           TransformBatch& batch);
  // Hands `batch` to the runner, kTransformBatch calls per job.
  void RunTransforms(TransformBatch batch, const std::vector<std::string>& keys);
  // One transform's result: the request it made to Send, or the delivery ended with why not.
  void SendTransformed(Transforming t, Result<transform::Outcome> outcome,
                       const std::vector<std::string>& keys);
  void Dispatch(const std::shared_ptr<const model::Destination>& dest, store::Delivery delivery,
                store::Event& e, const std::vector<std::string>& keys, bool probe,
                TransformBatch& transforms);

  EngineState& state_;
  RequestSender& sender_;
  const CompleteFn complete_;

  Mutex mu_;
  std::condition_variable cv_;
  std::deque<ClaimJob> jobs_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace hookrelay::delivery
