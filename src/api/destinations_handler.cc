#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/audit_json.h"
#include "api/destinations_json.h"
#include "api/handler_util.h"
#include "api/request_params.h"
#include "catalog/catalog_service.h"
#include "common/crypto.h"
#include "common/random.h"
#include "common/standard_webhooks.h"
#include "common/time_format.h"
#include "http/json_text.h"
#include "policy/schedule_json.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

constexpr std::string_view kDefaultPauseReason = "paused via the API";
constexpr int kHeldQueuesShown = 20;  // a destination's held queues listed (the total is exact)
constexpr size_t kGeneratedSecretBytes = 32;  // a generated signing secret's key (whsec_ + base64)

}  // namespace

http::Response ApiHandler::ListDestinations(const model::Catalog& catalog) const {
  auto states = destination_states_ ? destination_states_()
                                    : std::map<std::string, delivery::DestinationState>();
  return Json(DestinationListToJson(catalog, states, clock_.Now()));
}

http::Response ApiHandler::GetDestination(const std::string& name,
                                          const model::Catalog& catalog) const {
  const model::Destination* d = catalog.FindDestination(name);
  if (!d) return NotFound("destination", name);
  return DestinationView(*d);
}

http::Response ApiHandler::DestinationSchedule(const std::string& name,
                                               const model::Catalog& catalog) const {
  const model::Destination* d = catalog.FindDestination(name);
  if (!d) return NotFound("destination", name);
  SeededRandom random(SystemRandom::Instance().Next());
  return Json(policy::ScheduleToJson(d->policy, policy::PlanSchedule(d->policy, random)));
}

Result<json::object> ApiHandler::DestinationViewObject(const model::Destination& d) const {
  auto states = destination_states_ ? destination_states_()
                                    : std::map<std::string, delivery::DestinationState>();
  auto it = states.find(d.name);
  json::object view =
      DestinationViewToJson(d, it == states.end() ? nullptr : &it->second, clock_.Now());
  // The ordered queues held behind their head ("held behind evt_… since 14:02"); empty for an
  // unordered destination (no open ordered deliveries: an empty range of deliveries_ordered).
  auto held = store_.ListHeldQueues(d.name, kHeldQueuesShown);
  if (!held.ok()) return held.status();
  view["held"] = HeldQueuesToJson(*held);
  return view;
}

http::Response ApiHandler::DestinationView(const model::Destination& d) const {
  auto view = DestinationViewObject(d);
  if (!view.ok()) return FromStatus(view.status());
  return Json(*view);
}

http::Response ApiHandler::RotateDestinationSecret(const http::Request& request,
                                                   const std::string& name) const {
  auto body = ParseRotateSecretBody(request.body);
  if (!body.ok()) return FromStatus(body.status());
  std::shared_ptr<const model::Catalog> catalog = registry_.Get();
  const model::Destination* d = catalog->FindDestination(name);
  if (!d) return NotFound("destination", name);
  if (!controls_.catalog) return NoControl("changing the catalog");
  const std::string secret =
      body->secret.value_or(std::string(standard_webhooks::kSecretPrefix) +
                            Base64Encode(RandomBytes(kGeneratedSecretBytes)));
  if (auto key = model::SigningKey(secret); !key.ok()) {
    return FromStatus(Status::InvalidArgument("secret: " + key.status().message(), "secret"));
  }
  if (d->signing_secret && ConstantTimeEqual(*d->signing_secret, secret)) {
    return FromStatus(Status::InvalidArgument(
        "secret: is the destination's current signing secret; give a new one or none (one is "
        "generated)",
        "secret"));
  }
  // The current secret becomes the previous one (an earlier rotation's old secret goes), unless
  // there is none or no grace is wanted.
  json::value previous = nullptr;
  if (d->signing_secret && body->grace.count() > 0) {
    previous = json::object{{"secret", *d->signing_secret},
                            {"expires_at", FormatRfc3339(clock_.Now() + body->grace)}};
  }
  json::object patch{{"signing_secret", secret}, {"signing_secret_previous", std::move(previous)}};
  const std::string actor = Actor(request);
  if (Status s = controls_.catalog->Update(store::CatalogKind::kDestination, name, patch, actor);
      !s.ok()) {
    return FromStatus(s);
  }
  catalog = registry_.Get();
  d = catalog->FindDestination(name);
  if (!d) return NotFound("destination", name);  // deleted meanwhile
  auto view = DestinationViewObject(*d);
  if (!view.ok()) return FromStatus(view.status());
  // The new secret, this once: it is write-only from now on.
  (*view)["signing_secret"] = secret;
  return Json(*view);
}

http::Response ApiHandler::DestinationControl(const http::Request& request, RouteId route,
                                              const std::string& name) const {
  std::shared_ptr<const model::Catalog> catalog = registry_.Get();
  const model::Destination* d = catalog->FindDestination(name);
  if (!d) return NotFound("destination", name);
  std::string action;
  json::object detail;
  Status done;
  // Pausing a paused destination (which would replace its reason) and resuming an active one
  // (which would restart its concurrency) change nothing: 200 with the destination and a note.
  if (route == RouteId::kPauseDestination || route == RouteId::kResumeDestination) {
    const bool pause = route == RouteId::kPauseDestination;
    if (pause) {
      auto reason = ParsePauseBody(request.body, std::string(kDefaultPauseReason));
      if (!reason.ok()) return FromStatus(reason.status());
    } else if (Status s = ParseEmptyBody(request.body); !s.ok()) {
      return FromStatus(s);
    }
    auto states = destination_states_ ? destination_states_()
                                      : std::map<std::string, delivery::DestinationState>();
    auto it = states.find(name);
    const bool paused = d->paused || (it != states.end() && it->second.paused);
    if (paused == pause) {
      json::object view =
          DestinationViewToJson(*d, it == states.end() ? nullptr : &it->second, clock_.Now());
      view["note"] = pause ? "already paused" : "not paused";
      return Json(view);
    }
  }
  if (route == RouteId::kPauseDestination) {
    auto reason = ParsePauseBody(request.body, std::string(kDefaultPauseReason));
    if (!reason.ok()) return FromStatus(reason.status());
    if (!controls_.pause) return NoControl("pause");
    action = "pause";
    detail["reason"] = *reason;
    done = controls_.pause(name, *reason);
  } else {
    if (Status s = ParseEmptyBody(request.body); !s.ok()) return FromStatus(s);
    const bool resume = route == RouteId::kResumeDestination;
    const auto& control = resume ? controls_.resume : controls_.reset_breaker;
    if (!control) return NoControl(resume ? "resume" : "reset-breaker");
    action = resume ? "resume" : "reset_breaker";
    done = control(name);
    // A job holding back chains for this destination looks again now.
    if (done.ok() && controls_.replay_job_queued) controls_.replay_job_queued();
  }
  if (!done.ok()) return FromStatus(done);
  if (Status s = Audit(request, action, name, 1, detail.empty() ? "" : http::SerializeJson(detail));
      !s.ok()) {
    return FromStatus(s);
  }
  return DestinationView(*d);
}

}  // namespace hookrelay::api
