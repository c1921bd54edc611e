#include <algorithm>
#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/handler_util.h"
#include "api/replays_json.h"
#include "api/request_params.h"
#include "common/id.h"
#include "common/random.h"
#include "http/json_text.h"
#include "replay/replay_filter.h"
#include "replay/replay_runner.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

constexpr double kDefaultBulkReplayRate = 50;  // per second, when the destination sets none

// A scoped token reaches the jobs that replay to one of its destinations (a scoped token must
// name one when it creates a job, see CreateBulkReplay).
bool ReachesJob(const access::Scope* scope, const store::ReplayJob& job) {
  if (!scope) return true;
  auto filter = replay::ParseReplayFilter(job.filter);
  return filter.ok() && filter->destination && scope->ReachesDestination(*filter->destination);
}

}  // namespace

http::Response ApiHandler::ListBulkReplays(const http::Request& request,
                                           const access::Scope* scope) const {
  auto q = ParsePageQuery(request);
  if (!q.ok()) return FromStatus(q.status());
  auto page = store_.ListReplayJobs(q->cursor, q->limit);
  if (!page.ok()) return FromStatus(page.status());
  // A page may then hold fewer jobs than asked; next_cursor still goes on.
  std::erase_if(page->items, [scope](const store::ReplayJob& j) { return !ReachesJob(scope, j); });
  return Json(ReplayJobPageToJson(*page));
}

http::Response ApiHandler::GetBulkReplay(const std::string& id, const access::Scope* scope) const {
  auto job = store_.GetReplayJob(id);
  if (!job.ok()) return FromStatus(job.status());
  if (!job->has_value() || !ReachesJob(scope, **job)) return NotFound("replay", id);
  return Json(ReplayJobToJson(**job));
}

http::Response ApiHandler::CreateBulkReplay(const http::Request& request,
                                            const access::Scope* scope) const {
  auto body = ParseBulkReplayBody(request.body);
  if (!body.ok()) return FromStatus(body.status());
  auto filter = replay::ParseReplayFilter(body->filter_json);
  if (!filter.ok()) return FromStatus(filter.status());
  if (scope) {
    // Names out of scope read as names that do not exist; without a destination the job would
    // replay to every destination of the events, its scope's or not.
    if (!filter->destination) {
      return FromStatus(Status::InvalidArgument(
          "destination: is required with a scoped token (one of its destinations)", "destination"));
    }
    if (!scope->ReachesDestination(*filter->destination)) {
      return FromStatus(Status::InvalidArgument(
          "destination: no destination \"" + *filter->destination + "\"", "destination"));
    }
    if (filter->source && !scope->ReachesSource(*filter->source)) {
      return FromStatus(
          Status::InvalidArgument("source: no source \"" + *filter->source + "\"", "source"));
    }
  }
  // As in the event list: an empty range is a mistake, not a job that replays nothing.
  if (filter->since && filter->until && *filter->until < *filter->since) {
    return FromStatus(Status::InvalidArgument("until: must not be before since", "until"));
  }
  std::shared_ptr<const model::Catalog> catalog = registry_.Get();
  double rate = body->rate.value_or(kDefaultBulkReplayRate);
  // An unknown source is a typo, as an unknown destination is: not an empty job.
  if (filter->source && !catalog->FindSource(*filter->source)) {
    return FromStatus(
        Status::InvalidArgument("source: no source \"" + *filter->source + "\"", "source"));
  }
  if (filter->destination) {
    const model::Destination* d = catalog->FindDestination(*filter->destination);
    if (!d) {
      return FromStatus(Status::InvalidArgument(
          "destination: no destination \"" + *filter->destination + "\"", "destination"));
    }
    if (!body->rate && d->rate_limit) rate = std::min(*d->rate_limit, replay::kMaxReplayRate);
  }
  store::ReplayJob job;
  job.created_at = clock_.Now();
  job.id = NewUlid(clock_, SystemRandom::Instance());
  job.filter = replay::ReplayFilterToJson(*filter);
  job.rate = rate;
  // The total now, so the audit entry and the first GET show it; the runner keeps it.
  auto total = replay::CountReplayable(store_, replay::AsOfJob(*filter, job.created_at));
  if (!total.ok()) return FromStatus(total.status());
  job.total = *total;
  if (Status s = store_.CreateReplayJob(job); !s.ok()) return FromStatus(s);
  if (controls_.replay_job_queued) controls_.replay_job_queued();
  json::object detail{{"filter", json::parse(job.filter)}, {"rate", rate}};
  if (Status s = Audit(request, "bulk_replay", job.id, job.total, http::SerializeJson(detail));
      !s.ok()) {
    return FromStatus(s);
  }
  auto stored = store_.GetReplayJob(job.id);
  if (!stored.ok()) return FromStatus(stored.status());
  http::Response r = Json(ReplayJobToJson(stored->value_or(job)));
  r.status = 202;
  return r;
}

http::Response ApiHandler::CancelBulkReplay(const http::Request& request, const std::string& id,
                                            const access::Scope* scope) const {
  if (scope) {
    auto seen = store_.GetReplayJob(id);
    if (!seen.ok()) return FromStatus(seen.status());
    if (!seen->has_value() || !ReachesJob(scope, **seen)) return NotFound("replay", id);
  }
  auto job = store_.CancelReplayJob(id, clock_.Now());
  if (!job.ok()) return FromStatus(job.status());
  if (!job->has_value()) return NotFound("replay", id);
  // Wakes the runner's waits, so a job paced at 1/h stops now rather than at its next slot.
  if (controls_.replay_job_queued) controls_.replay_job_queued();
  if (Status s =
          Audit(request, "cancel_replay", id, (*job)->total - (*job)->done - (*job)->failed, "");
      !s.ok()) {
    return FromStatus(s);
  }
  return Json(ReplayJobToJson(**job));
}

}  // namespace hookrelay::api
