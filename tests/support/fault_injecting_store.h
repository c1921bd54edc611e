#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "store/store.h"
#include "store/store_wrapper.h"

namespace hookrelay::store {

// A Store that forwards to another one and fails chosen operations on demand, like the Env
// wrappers of leveldb's tests: it proves "disk full → 503, nothing lost" without filling a disk.
// A failed operation never reaches the target, so nothing of it is stored.
//
// Faults exist for AppendEvent (reported through its callback, which runs on this wrapper's own
// callback thread, never inline, as the Store contract promises), RecordAttempt(s) (returned;
// in a batch, per record), GetEvent(s), GetEventDetail and ApplyCatalogChange (returned).
// Every other method is forwarded unchanged. Thread-safe; the knobs may be turned while other
// threads use the store.
class FaultInjectingStore final : public StoreWrapper {
 public:
  // Wraps `target`, which is not owned and must outlive this object.
  explicit FaultInjectingStore(Store* target);
  // Wraps and owns `target`.
  explicit FaultInjectingStore(std::unique_ptr<Store> target);
  // Runs the pending failure callbacks, then stops the callback thread.
  ~FaultInjectingStore() override;
  FaultInjectingStore(const FaultInjectingStore&) = delete;
  FaultInjectingStore& operator=(const FaultInjectingStore&) = delete;

  // The next `n` appends fail with `status` (kUnavailable when `status` is OK).
  void FailAppends(int n, Status status);
  // Every append fails with `status` until Heal().
  void FailAllAppends(Status status);
  // The same for RecordAttempt; RecordAttempts fails each record of a batch as one call.
  void FailRecordAttempts(int n, Status status);
  void FailAllRecordAttempts(Status status);
  // While held, RecordAttempt(s) wait before reaching the target (a slow commit), so a test can
  // act between an attempt's end and its record. Heal() releases them too.
  void HoldRecordAttempts(bool hold);
  // RecordAttempt(s) calls waiting in a hold now.
  int held_record_attempts() const { return held_.load(); }
  // While held, ClaimDue waits before reaching the target (a claim waiting for a busy store), so
  // a test can see what the delivery engine does meanwhile. Heal() releases them too.
  void HoldClaims(bool hold);
  // ClaimDue calls waiting in a hold now.
  int held_claims() const { return held_claims_.load(); }
  // The next `n` GetEvent or GetEventDetail calls (GetEvents reads through GetEvent here) fail
  // with `status`: a read that meets a lost connection.
  void FailEventReads(int n, Status status);
  // The next `n` ApplyCatalogChange calls fail with `status`.
  void FailCatalogChanges(int n, Status status);
  // Removes every fault: all operations reach the target again.
  void Heal();

  // How many operations were failed so far.
  int64_t failed_appends() const { return failed_appends_.load(); }
  int64_t failed_record_attempts() const { return failed_record_attempts_.load(); }

  void AppendEvent(NewEvent event, AppendCallback done) override;
  Result<std::optional<Event>> GetEvent(const std::string& id) override;
  Result<std::optional<EventDetail>> GetEventDetail(const std::string& id) override;
  // Store's default (one GetEvent per id), not the target's: so the GetEvent faults reach it.
  Result<std::vector<std::optional<Event>>> GetEvents(
      const std::vector<std::string>& ids) override {
    return Store::GetEvents(ids);
  }
  Result<std::vector<Delivery>> ClaimDue(TimePoint now, int limit, Duration lease,
                                         const std::string& owner,
                                         const std::string& destination = "") override;
  Status RecordAttempt(const Attempt& attempt, const DeliveryUpdate& update,
                       const std::string& owner) override;
  std::vector<Status> RecordAttempts(const std::vector<AttemptRecord>& records,
                                     const std::string& owner) override;
  Status ApplyCatalogChange(const CatalogChange& change) override;

 private:
  struct Fault {
    int remaining = 0;    // failures left to inject
    bool always = false;  // fail until healed
    Status status;
  };
  // The error to fail with now, consuming one injected failure of `*which`; OK when the call may
  // pass. (A member pointer rather than a Fault&: the Fault is read only under mu_, taken here.)
  Status Take(Fault FaultInjectingStore::*which) EXCLUDES(mu_);
  static void Arm(Fault& fault, int n, bool always, Status status);
  void CallbackLoop();

  std::unique_ptr<Store> owned_;

  Mutex mu_;
  Fault append_fault_ GUARDED_BY(mu_);
  Fault record_attempt_fault_ GUARDED_BY(mu_);
  Fault catalog_fault_ GUARDED_BY(mu_);
  Fault event_read_fault_ GUARDED_BY(mu_);
  std::atomic<int64_t> failed_appends_{0};
  std::atomic<int64_t> failed_record_attempts_{0};

  Mutex hold_mu_;
  std::condition_variable hold_cv_;
  bool hold_records_ GUARDED_BY(hold_mu_) = false;
  std::atomic<int> held_{0};
  bool hold_claims_ GUARDED_BY(hold_mu_) = false;
  std::atomic<int> held_claims_{0};
  void WaitWhileHeld();

  Mutex cb_mu_;
  std::condition_variable cb_cv_;
  std::deque<std::function<void()>> callbacks_ GUARDED_BY(cb_mu_);
  bool stopping_ GUARDED_BY(cb_mu_) = false;
  std::thread callback_thread_;
};

}  // namespace hookrelay::store
