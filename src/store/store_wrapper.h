#pragma once

#include <utility>

#include "store/store.h"

namespace hookrelay::store {

// A Store that forwards every call to another Store (leveldb's EnvWrapper), so that a store
// which changes a few calls (tests/support/fault_injecting_store.h) overrides only those. Every
// virtual method of Store is forwarded here; a method added to Store is added here too.
// `target` is not owned and must outlive the wrapper.
class StoreWrapper : public Store {
 public:
  explicit StoreWrapper(Store* target) : target_(target) {}
  ~StoreWrapper() override = default;
  StoreWrapper(const StoreWrapper&) = delete;
  StoreWrapper& operator=(const StoreWrapper&) = delete;

  Store& target() { return *target_; }

  void AppendEvent(NewEvent event, AppendCallback done) override {
    target_->AppendEvent(std::move(event), std::move(done));
  }
  Result<std::optional<Event>> GetEvent(const std::string& id) override {
    return target_->GetEvent(id);
  }
  Result<EventPage> ListEvents(const EventFilter& filter, const std::string& cursor,
                               int limit) override {
    return target_->ListEvents(filter, cursor, limit);
  }
  Result<std::vector<Delivery>> GetDeliveries(const std::string& event_id) override {
    return target_->GetDeliveries(event_id);
  }
  Result<std::vector<Attempt>> GetAttempts(int64_t delivery_id) override {
    return target_->GetAttempts(delivery_id);
  }
  Result<std::optional<EventDetail>> GetEventDetail(const std::string& id) override {
    return target_->GetEventDetail(id);
  }
  Result<std::vector<Delivery>> ClaimDue(TimePoint now, int limit, Duration lease,
                                         const std::string& owner,
                                         const std::string& destination) override {
    return target_->ClaimDue(now, limit, lease, owner, destination);
  }
  Result<std::optional<TimePoint>> NextDueAt(const std::string& destination) override {
    return target_->NextDueAt(destination);
  }
  Result<int64_t> CountDue(TimePoint now) override { return target_->CountDue(now); }
  Result<std::optional<TimePoint>> OldestDueAt(TimePoint now) override {
    return target_->OldestDueAt(now);
  }
  Status RecordAttempt(const Attempt& attempt, const DeliveryUpdate& update,
                       const std::string& owner) override {
    return target_->RecordAttempt(attempt, update, owner);
  }
  std::vector<Status> RecordAttempts(const std::vector<AttemptRecord>& records,
                                     const std::string& owner) override {
    return target_->RecordAttempts(records, owner);
  }
  Result<int64_t> ReleaseClaims(const std::vector<int64_t>& delivery_ids,
                                const std::string& owner) override {
    return target_->ReleaseClaims(delivery_ids, owner);
  }
  Result<std::optional<policy::BreakerSnapshot>> GetBreaker(
      const std::string& destination) override {
    return target_->GetBreaker(destination);
  }
  Status PutBreaker(const std::string& destination,
                    const policy::BreakerSnapshot& snapshot) override {
    return target_->PutBreaker(destination, snapshot);
  }
  Result<std::vector<policy::BreakerStep>> UpdateBreaker(
      const std::string& destination, const policy::BreakerConfig& config,
      const std::vector<BreakerInputAt>& inputs) override {
    return target_->UpdateBreaker(destination, config, inputs);
  }
  Result<DestinationControl> GetDestinationControl(const std::string& destination) override {
    return target_->GetDestinationControl(destination);
  }
  Result<std::map<std::string, DestinationControl>> ListDestinationControls() override {
    return target_->ListDestinationControls();
  }
  Result<int64_t> PauseDestination(const std::string& destination, const std::string& reason,
                                   TimePoint now) override {
    return target_->PauseDestination(destination, reason, now);
  }
  Result<int64_t> ResumeDestination(const std::string& destination, TimePoint now) override {
    return target_->ResumeDestination(destination, now);
  }
  Result<int64_t> PauseDeliveries(const std::string& destination,
                                  const std::string& reason) override {
    return target_->PauseDeliveries(destination, reason);
  }
  Result<int64_t> ResumeDeliveries(const std::string& destination, TimePoint now) override {
    return target_->ResumeDeliveries(destination, now);
  }
  Result<int64_t> UnpauseDeliveries(const std::string& destination, TimePoint now) override {
    return target_->UnpauseDeliveries(destination, now);
  }
  Status CreateToken(const ApiToken& token) override { return target_->CreateToken(token); }
  Result<bool> EnsureToken(const ApiToken& token) override { return target_->EnsureToken(token); }
  Result<std::vector<ApiToken>> ListTokens() override { return target_->ListTokens(); }
  Result<bool> DeleteToken(const std::string& name) override { return target_->DeleteToken(name); }
  Result<bool> RevokeToken(const std::string& name) override { return target_->RevokeToken(name); }
  Status TouchToken(const std::string& name, TimePoint at, const std::string& addr) override {
    return target_->TouchToken(name, at, addr);
  }
  Result<std::vector<WrappedDataKey>> ListDataKeys() override { return target_->ListDataKeys(); }
  Result<bool> AddDataKey(const WrappedDataKey& key, bool only_if_none) override {
    return target_->AddDataKey(key, only_if_none);
  }
  Result<bool> DeleteDataKey(const std::string& master_key_id) override {
    return target_->DeleteDataKey(master_key_id);
  }
  Status EraseOldCopies() override { return target_->EraseOldCopies(); }
  Result<std::optional<Delivery>> OrderHead(const std::string& destination,
                                            const std::string& order_key) override {
    return target_->OrderHead(destination, order_key);
  }
  Result<HeldQueues> ListHeldQueues(const std::string& destination, int limit) override {
    return target_->ListHeldQueues(destination, limit);
  }
  Result<Delivery> CreateReplay(const std::string& event_id, const std::string& destination,
                                int max_attempts, TimePoint now) override {
    return target_->CreateReplay(event_id, destination, max_attempts, now);
  }
  Result<int64_t> CreateReplays(const std::vector<NewReplay>& replays) override {
    return target_->CreateReplays(replays);
  }
  Result<int64_t> PurgeEventsBefore(TimePoint cutoff, int batch) override {
    return target_->PurgeEventsBefore(cutoff, batch);
  }
  Result<int64_t> CountDeliveries(DeliveryStatus status) override {
    return target_->CountDeliveries(status);
  }
  Status AppendAudit(const AuditEntry& entry) override { return target_->AppendAudit(entry); }
  Result<AuditPage> ListAudit(const std::string& cursor, int limit) override {
    return target_->ListAudit(cursor, limit);
  }
  Status AppendRejections(const std::vector<Rejection>& rejections, int keep_per_source) override {
    return target_->AppendRejections(rejections, keep_per_source);
  }
  Result<RejectionPage> ListRejections(const std::string& source, const std::string& cursor,
                                       int limit) override {
    return target_->ListRejections(source, cursor, limit);
  }
  Result<int64_t> PurgeRejectionsBefore(TimePoint cutoff, int batch) override {
    return target_->PurgeRejectionsBefore(cutoff, batch);
  }
  Status CreateReplayJob(const ReplayJob& job) override { return target_->CreateReplayJob(job); }
  Result<std::optional<ReplayJob>> GetReplayJob(const std::string& id) override {
    return target_->GetReplayJob(id);
  }
  Result<ReplayJobPage> ListReplayJobs(const std::string& cursor, int limit) override {
    return target_->ListReplayJobs(cursor, limit);
  }
  Result<std::optional<ReplayJob>> ClaimReplayJob(TimePoint now, Duration lease,
                                                  const std::string& owner) override {
    return target_->ClaimReplayJob(now, lease, owner);
  }
  Status UpdateReplayJob(const ReplayJob& job, const std::string& owner) override {
    return target_->UpdateReplayJob(job, owner);
  }
  Result<std::optional<ReplayJob>> CancelReplayJob(const std::string& id, TimePoint now) override {
    return target_->CancelReplayJob(id, now);
  }
  Result<std::vector<CatalogObject>> ListCatalog() override { return target_->ListCatalog(); }
  Status ApplyCatalogChange(const CatalogChange& change) override {
    return target_->ApplyCatalogChange(change);
  }
  Result<int64_t> CatalogVersion() override { return target_->CatalogVersion(); }
  Result<std::vector<std::optional<Event>>> GetEvents(
      const std::vector<std::string>& ids) override {
    return target_->GetEvents(ids);
  }
  Result<std::map<std::string, int64_t>> CountDueByDestination(TimePoint now) override {
    return target_->CountDueByDestination(now);
  }
  Result<std::vector<StatsRow>> GetStats(TimePoint since, TimePoint until) override {
    return target_->GetStats(since, until);
  }
  void Watch(ChangeCallback on_change) override { target_->Watch(std::move(on_change)); }
  void Unwatch() override { target_->Unwatch(); }
  Status CheckReady() override { return target_->CheckReady(); }

 private:
  Store* target_;
};

}  // namespace hookrelay::store
