#include "support/fault_injecting_store.h"

#include <utility>

namespace hookrelay::store {

FaultInjectingStore::FaultInjectingStore(Store* target)
    : StoreWrapper(target), callback_thread_(&FaultInjectingStore::CallbackLoop, this) {}

FaultInjectingStore::FaultInjectingStore(std::unique_ptr<Store> target)
    : StoreWrapper(target.get()),
      owned_(std::move(target)),
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
    target().AppendEvent(std::move(event), std::move(done));
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
  return target().RecordAttempt(attempt, update, owner);
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
  std::vector<Status> recorded = target().RecordAttempts(pass, owner);
  for (size_t j = 0; j < where.size(); ++j) {
    out[where[j]] = j < recorded.size() ? std::move(recorded[j])
                                        : Status::Internal("the target answered too few records");
  }
  return out;
}

Result<std::optional<Event>> FaultInjectingStore::GetEvent(const std::string& id) {
  if (Status fault = Take(&FaultInjectingStore::event_read_fault_); !fault.ok()) return fault;
  return target().GetEvent(id);
}

Result<std::optional<EventDetail>> FaultInjectingStore::GetEventDetail(const std::string& id) {
  if (Status fault = Take(&FaultInjectingStore::event_read_fault_); !fault.ok()) return fault;
  return target().GetEventDetail(id);
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
  return target().ClaimDue(now, limit, lease, owner, destination);
}

Status FaultInjectingStore::ApplyCatalogChange(const CatalogChange& change) {
  if (Status fault = Take(&FaultInjectingStore::catalog_fault_); !fault.ok()) return fault;
  return target().ApplyCatalogChange(change);
}

}  // namespace hookrelay::store
