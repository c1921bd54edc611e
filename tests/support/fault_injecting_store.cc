#include "store/fault_injecting_store.h"

#include <utility>

namespace hookrelay::store {

FaultInjectingStore::FaultInjectingStore(Store* target)
    : target_(target), callback_thread_(&FaultInjectingStore::CallbackLoop, this) {}

FaultInjectingStore::FaultInjectingStore(std::unique_ptr<Store> target)
    : owned_(std::move(target)),
      target_(owned_.get()),
      callback_thread_(&FaultInjectingStore::CallbackLoop, this) {}

FaultInjectingStore::~FaultInjectingStore() {
  {
    MutexLock lock(cb_mu_);
    stopping_ = true;
  }
  cb_cv_.notify_all();
  callback_thread_.join();
}

void FaultInjectingStore::CallbackLoop() {
  for (;;) {
    std::function<void()> cb;
    {
      MutexLock lock(cb_mu_);
      cb_cv_.wait(lock, [this]() REQUIRES(cb_mu_) { return stopping_ || !callbacks_.empty(); });
      if (callbacks_.empty()) return;
      cb = std::move(callbacks_.front());
      callbacks_.pop_front();
    }
    cb();
  }
}

void FaultInjectingStore::Arm(Fault& fault, int n, bool always, Status status) {
  if (status.ok()) status = Status::Unavailable("injected fault");
  fault.remaining = n;
  fault.always = always;
  fault.status = std::move(status);
}

Status FaultInjectingStore::Take(Fault FaultInjectingStore::*which) {
  MutexLock lock(mu_);
  Fault& fault = this->*which;
  if (fault.always) return fault.status;
  if (fault.remaining > 0) {
    --fault.remaining;
    return fault.status;
  }
  return Status::Ok();
}

void FaultInjectingStore::FailAppends(int n, Status status) {
  MutexLock lock(mu_);
  Arm(append_fault_, n, false, std::move(status));
}

void FaultInjectingStore::FailAllAppends(Status status) {
  MutexLock lock(mu_);
  Arm(append_fault_, 0, true, std::move(status));
}

void FaultInjectingStore::FailRecordAttempts(int n, Status status) {
  MutexLock lock(mu_);
  Arm(record_attempt_fault_, n, false, std::move(status));
}

void FaultInjectingStore::FailAllRecordAttempts(Status status) {
  MutexLock lock(mu_);
  Arm(record_attempt_fault_, 0, true, std::move(status));
}

void FaultInjectingStore::FailCatalogChanges(int n, Status status) {
  MutexLock lock(mu_);
  Arm(catalog_fault_, n, false, std::move(status));
}

void FaultInjectingStore::FailEventReads(int n, Status status) {
  MutexLock lock(mu_);
  Arm(event_read_fault_, n, false, std::move(status));
}

void FaultInjectingStore::Heal() {
  {
    MutexLock lock(mu_);
    event_read_fault_ = Fault{};
    append_fault_ = Fault{};
    record_attempt_fault_ = Fault{};
    catalog_fault_ = Fault{};
  }
  HoldRecordAttempts(false);
  HoldClaims(false);
}

void FaultInjectingStore::HoldClaims(bool hold) {
  {
    MutexLock lock(hold_mu_);
    hold_claims_ = hold;
  }
  hold_cv_.notify_all();
}

void FaultInjectingStore::AppendEvent(NewEvent event, AppendCallback done) {
  Status fault = Take(&FaultInjectingStore::append_fault_);
  if (fault.ok()) {
    target_->AppendEvent(std::move(event), std::move(done));
    return;
  }
  failed_appends_.fetch_add(1);
  {
    MutexLock lock(cb_mu_);
    callbacks_.push_back(
        [done = std::move(done), fault = std::move(fault)]() mutable { done(std::move(fault)); });
  }
  cb_cv_.notify_one();
}

void FaultInjectingStore::HoldRecordAttempts(bool hold) {
  {
    MutexLock lock(hold_mu_);
    hold_records_ = hold;
  }
  hold_cv_.notify_all();
}

void FaultInjectingStore::WaitWhileHeld() {
  MutexLock lock(hold_mu_);
  if (!hold_records_) return;
  held_.fetch_add(1);
  hold_cv_.wait(lock, [this]() REQUIRES(hold_mu_) { return !hold_records_; });
  held_.fetch_sub(1);
}

Status FaultInjectingStore::RecordAttempt(const Attempt& attempt, const DeliveryUpdate& update,
                                          const std::string& owner) {
  WaitWhileHeld();
  Status fault = Take(&FaultInjectingStore::record_attempt_fault_);
  if (!fault.ok()) {
    failed_record_attempts_.fetch_add(1);
    return fault;
  }
  return target_->RecordAttempt(attempt, update, owner);
}

Result<int64_t> FaultInjectingStore::ReleaseClaims(const std::vector<int64_t>& delivery_ids,
                                                   const std::string& owner) {
  return target_->ReleaseClaims(delivery_ids, owner);
}

std::vector<Status> FaultInjectingStore::RecordAttempts(const std::vector<AttemptRecord>& records,
                                                        const std::string& owner) {
  WaitWhileHeld();
  // Each record takes its own injected failure, as if recorded one by one; the rest reach the
  // target together.
  std::vector<Status> out(records.size());
  std::vector<AttemptRecord> pass;
  std::vector<size_t> where;
  for (size_t i = 0; i < records.size(); ++i) {
    Status fault = Take(&FaultInjectingStore::record_attempt_fault_);
    if (!fault.ok()) {
      failed_record_attempts_.fetch_add(1);
      out[i] = std::move(fault);
    } else {
      pass.push_back(records[i]);
      where.push_back(i);
    }
  }
  if (pass.empty()) return out;
  std::vector<Status> recorded = target_->RecordAttempts(pass, owner);
  for (size_t j = 0; j < where.size(); ++j) {
    out[where[j]] = j < recorded.size() ? std::move(recorded[j])
                                        : Status::Internal("the target answered too few records");
  }
  return out;
}

Result<std::optional<Event>> FaultInjectingStore::GetEvent(const std::string& id) {
  if (Status fault = Take(&FaultInjectingStore::event_read_fault_); !fault.ok()) return fault;
  return target_->GetEvent(id);
}

Result<EventPage> FaultInjectingStore::ListEvents(const EventFilter& filter,
                                                  const std::string& cursor, int limit) {
  return target_->ListEvents(filter, cursor, limit);
}

Result<std::vector<Delivery>> FaultInjectingStore::GetDeliveries(const std::string& event_id) {
  return target_->GetDeliveries(event_id);
}

Result<std::vector<Attempt>> FaultInjectingStore::GetAttempts(int64_t delivery_id) {
  return target_->GetAttempts(delivery_id);
}

Result<std::vector<Delivery>> FaultInjectingStore::ClaimDue(TimePoint now, int limit,
                                                            Duration lease,
                                                            const std::string& owner,
                                                            const std::string& destination) {
  {
    MutexLock lock(hold_mu_);
    if (hold_claims_) {
      held_claims_.fetch_add(1);
      hold_cv_.wait(lock, [this]() REQUIRES(hold_mu_) { return !hold_claims_; });
      held_claims_.fetch_sub(1);
    }
  }
  return target_->ClaimDue(now, limit, lease, owner, destination);
}

Result<std::optional<TimePoint>> FaultInjectingStore::NextDueAt(const std::string& destination) {
  return target_->NextDueAt(destination);
}

Result<int64_t> FaultInjectingStore::CountDue(TimePoint now) { return target_->CountDue(now); }

Result<std::optional<TimePoint>> FaultInjectingStore::OldestDueAt(TimePoint now) {
  return target_->OldestDueAt(now);
}

Result<std::optional<policy::BreakerSnapshot>> FaultInjectingStore::GetBreaker(
    const std::string& destination) {
  return target_->GetBreaker(destination);
}

Status FaultInjectingStore::PutBreaker(const std::string& destination,
                                       const policy::BreakerSnapshot& snapshot) {
  return target_->PutBreaker(destination, snapshot);
}

Result<int64_t> FaultInjectingStore::PauseDeliveries(const std::string& destination,
                                                     const std::string& reason) {
  return target_->PauseDeliveries(destination, reason);
}

Result<int64_t> FaultInjectingStore::ResumeDeliveries(const std::string& destination,
                                                      TimePoint now) {
  return target_->ResumeDeliveries(destination, now);
}

Result<std::vector<policy::BreakerStep>> FaultInjectingStore::UpdateBreaker(
    const std::string& destination, const policy::BreakerConfig& config,
    const std::vector<BreakerInputAt>& inputs) {
  return target_->UpdateBreaker(destination, config, inputs);
}

Result<DestinationControl> FaultInjectingStore::GetDestinationControl(
    const std::string& destination) {
  return target_->GetDestinationControl(destination);
}

Result<std::map<std::string, DestinationControl>> FaultInjectingStore::ListDestinationControls() {
  return target_->ListDestinationControls();
}

Result<int64_t> FaultInjectingStore::PauseDestination(const std::string& destination,
                                                      const std::string& reason, TimePoint now) {
  return target_->PauseDestination(destination, reason, now);
}

Result<int64_t> FaultInjectingStore::ResumeDestination(const std::string& destination,
                                                       TimePoint now) {
  return target_->ResumeDestination(destination, now);
}

Result<Delivery> FaultInjectingStore::CreateReplay(const std::string& event_id,
                                                   const std::string& destination, int max_attempts,
                                                   TimePoint now) {
  return target_->CreateReplay(event_id, destination, max_attempts, now);
}

Result<std::optional<Delivery>> FaultInjectingStore::OrderHead(const std::string& destination,
                                                               const std::string& order_key) {
  return target_->OrderHead(destination, order_key);
}

Result<HeldQueues> FaultInjectingStore::ListHeldQueues(const std::string& destination, int limit) {
  return target_->ListHeldQueues(destination, limit);
}

Result<int64_t> FaultInjectingStore::CreateReplays(const std::vector<NewReplay>& replays) {
  return target_->CreateReplays(replays);
}

Result<int64_t> FaultInjectingStore::PurgeEventsBefore(TimePoint cutoff, int batch) {
  return target_->PurgeEventsBefore(cutoff, batch);
}

Result<int64_t> FaultInjectingStore::CountDeliveries(DeliveryStatus status) {
  return target_->CountDeliveries(status);
}

Status FaultInjectingStore::AppendAudit(const AuditEntry& entry) {
  return target_->AppendAudit(entry);
}

Result<AuditPage> FaultInjectingStore::ListAudit(const std::string& cursor, int limit) {
  return target_->ListAudit(cursor, limit);
}

Status FaultInjectingStore::AppendRejections(const std::vector<Rejection>& rejections,
                                             int keep_per_source) {
  return target_->AppendRejections(rejections, keep_per_source);
}

Result<RejectionPage> FaultInjectingStore::ListRejections(const std::string& source,
                                                          const std::string& cursor, int limit) {
  return target_->ListRejections(source, cursor, limit);
}

Result<int64_t> FaultInjectingStore::PurgeRejectionsBefore(TimePoint cutoff, int batch) {
  return target_->PurgeRejectionsBefore(cutoff, batch);
}

Status FaultInjectingStore::CreateReplayJob(const ReplayJob& job) {
  return target_->CreateReplayJob(job);
}

Result<std::optional<ReplayJob>> FaultInjectingStore::GetReplayJob(const std::string& id) {
  return target_->GetReplayJob(id);
}

Result<ReplayJobPage> FaultInjectingStore::ListReplayJobs(const std::string& cursor, int limit) {
  return target_->ListReplayJobs(cursor, limit);
}

Result<std::optional<ReplayJob>> FaultInjectingStore::ClaimReplayJob(TimePoint now, Duration lease,
                                                                     const std::string& owner) {
  return target_->ClaimReplayJob(now, lease, owner);
}

Status FaultInjectingStore::UpdateReplayJob(const ReplayJob& job, const std::string& owner) {
  return target_->UpdateReplayJob(job, owner);
}

Result<std::optional<ReplayJob>> FaultInjectingStore::CancelReplayJob(const std::string& id,
                                                                      TimePoint now) {
  return target_->CancelReplayJob(id, now);
}

Result<std::vector<CatalogObject>> FaultInjectingStore::ListCatalog() {
  return target_->ListCatalog();
}

Status FaultInjectingStore::ApplyCatalogChange(const CatalogChange& change) {
  if (Status fault = Take(&FaultInjectingStore::catalog_fault_); !fault.ok()) return fault;
  return target_->ApplyCatalogChange(change);
}

Result<int64_t> FaultInjectingStore::CatalogVersion() { return target_->CatalogVersion(); }

void FaultInjectingStore::Watch(ChangeCallback on_change) { target_->Watch(std::move(on_change)); }

void FaultInjectingStore::Unwatch() { target_->Unwatch(); }

Status FaultInjectingStore::CheckReady() { return target_->CheckReady(); }

}  // namespace hookrelay::store
