#include "store/store.h"

#include <spdlog/spdlog.h>

#include <future>
#include <memory>

namespace hookrelay::store {

Result<std::vector<std::optional<Event>>> EventStore::GetEvents(
    const std::vector<std::string>& ids) {
  std::vector<std::optional<Event>> out;
  out.reserve(ids.size());
  for (const std::string& id : ids) {
    HR_ASSIGN_OR_RETURN(std::optional<Event> e, GetEvent(id));
    out.push_back(std::move(e));
  }
  return out;
}

std::string_view DeliveryStatusName(DeliveryStatus s) {
  switch (s) {
    case DeliveryStatus::kScheduled: return "scheduled";
    case DeliveryStatus::kDelivering: return "delivering";
    case DeliveryStatus::kDelivered: return "delivered";
    case DeliveryStatus::kFailed: return "failed";
    case DeliveryStatus::kPaused: return "paused";
  }
  return "scheduled";
}

std::optional<DeliveryStatus> ParseDeliveryStatus(std::string_view name) {
  for (DeliveryStatus s :
       {DeliveryStatus::kScheduled, DeliveryStatus::kDelivering, DeliveryStatus::kDelivered,
        DeliveryStatus::kFailed, DeliveryStatus::kPaused}) {
    if (DeliveryStatusName(s) == name) return s;
  }
  return std::nullopt;
}

std::string_view ReplayJobStateName(ReplayJobState s) {
  switch (s) {
    case ReplayJobState::kQueued: return "queued";
    case ReplayJobState::kRunning: return "running";
    case ReplayJobState::kDone: return "done";
    case ReplayJobState::kCancelled: return "cancelled";
    case ReplayJobState::kFailed: return "failed";
  }
  return "queued";
}

std::optional<ReplayJobState> ParseReplayJobState(std::string_view name) {
  for (ReplayJobState s : {ReplayJobState::kQueued, ReplayJobState::kRunning, ReplayJobState::kDone,
                           ReplayJobState::kCancelled, ReplayJobState::kFailed}) {
    if (ReplayJobStateName(s) == name) return s;
  }
  return std::nullopt;
}

std::string_view CatalogKindName(CatalogKind k) {
  switch (k) {
    case CatalogKind::kSource: return "source";
    case CatalogKind::kDestination: return "destination";
    case CatalogKind::kRoute: return "route";
  }
  return "source";
}

Result<AppendResult> EventStore::AppendEventSync(NewEvent event) {
  // Shared with the callback: the store thread may still be inside set_value when this thread
  // wakes up and returns.
  auto promise = std::make_shared<std::promise<Result<AppendResult>>>();
  std::future<Result<AppendResult>> future = promise->get_future();
  AppendEvent(std::move(event),
              [promise](Result<AppendResult> r) { promise->set_value(std::move(r)); });
  return future.get();
}

Status Store::CheckReady() {
  Result<std::optional<TimePoint>> probe = NextDueAt();
  if (probe.ok()) return Status::Ok();
  // The message may name a file or a server: it goes to the log, and /readyz says only what kind
  // of failure it is.
  spdlog::warn("readiness: the store does not answer: {}", probe.status().message());
  return Status::Unavailable("the store does not answer (" +
                             std::string(Status::CodeName(probe.status().code())) +
                             "); the details are in the log");
}

}  // namespace hookrelay::store
