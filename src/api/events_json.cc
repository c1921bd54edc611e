#include "api/events_json.h"

#include <boost/json.hpp>

#include "api/json_util.h"
#include "common/crypto.h"
#include "common/time_format.h"
#include "model/destination.h"

namespace hookrelay::api {

namespace json = boost::json;

PauseCause PauseCauseOf(bool paused_in_catalog, const store::DestinationControl& control) {
  PauseCause cause;
  if (paused_in_catalog) {
    cause.by = "config";
  } else if (control.pause) {
    cause.by = control.pause->reason == store::kGonePauseReason ? "gone" : "operator";
  } else if (control.breaker.state != policy::BreakerState::kClosed) {
    cause.by = "breaker";
    // Half-open, open_until is when the probe went: not an end of anything.
    if (control.breaker.state == policy::BreakerState::kOpen) {
      cause.breaker_open_until = control.breaker.open_until;
    }
  }
  return cause;
}

void AddPauseCause(json::object& delivery, const std::string& destination,
                   store::DeliveryStatus status, const PauseCauses* causes) {
  PauseCause cause;
  if (causes && status == store::DeliveryStatus::kPaused) {
    if (auto it = causes->find(destination); it != causes->end()) cause = it->second;
  }
  delivery["paused_by"] = cause.by ? json::value(json::string(cause.by)) : json::value(nullptr);
  delivery["breaker_open_until"] = TimeOrNull(cause.breaker_open_until);
}

json::object EventSummaryToJson(const store::Event& e, const PauseCauses* causes) {
  json::array current;
  for (const store::CurrentDelivery& c : e.current) {
    json::object o{{"destination", c.destination},
                   {"status", store::DeliveryStatusName(c.status)},
                   {"chain", c.chain}};
    AddPauseCause(o, c.destination, c.status, causes);
    current.push_back(std::move(o));
  }
  return {{"id", e.id},
          {"source", e.source},
          {"received_at", FormatRfc3339(e.received_at)},
          {"size", e.size},
          {"type", StringOrNull(e.type)},
          {"routed", e.routed},
          {"deliveries", std::move(current)}};
}

json::object EventPageToJson(const store::EventPage& page, const PauseCauses* causes) {
  json::array items;
  items.reserve(page.items.size());
  for (const store::Event& e : page.items) items.push_back(EventSummaryToJson(e, causes));
  json::value next = nullptr;
  if (!page.next_cursor.empty()) next = json::string(page.next_cursor);
  return List(std::move(items), std::move(next));
}

void AddResponseSnippet(json::object& attempt, const std::string& snippet) {
  if (snippet.empty()) {
    attempt["response_snippet"] = nullptr;
    return;
  }
  size_t valid = ValidUtf8Prefix(snippet);
  // At most 3 bytes of one incomplete character at the very end (the cut) still count as text.
  const auto lead = valid < snippet.size() ? static_cast<unsigned char>(snippet[valid]) : 0;
  if (valid < snippet.size() && snippet.size() - valid <= 3 && lead >= 0xc2 && lead <= 0xf4) {
    size_t need = static_cast<unsigned char>(snippet[valid]) >= 0xf0   ? 4
                  : static_cast<unsigned char>(snippet[valid]) >= 0xe0 ? 3
                                                                       : 2;
    bool continuation = true;
    for (size_t k = valid + 1; k < snippet.size(); ++k) {
      continuation &= (static_cast<unsigned char>(snippet[k]) & 0xc0) == 0x80;
    }
    if (continuation && snippet.size() - valid < need) {
      attempt["response_snippet"] = snippet.substr(0, valid);
      attempt["response_snippet_encoding"] = "utf-8";
      return;
    }
  }
  if (valid == snippet.size()) {
    attempt["response_snippet"] = snippet;
    attempt["response_snippet_encoding"] = "utf-8";
  } else {
    attempt["response_snippet"] = Base64Encode(snippet);
    attempt["response_snippet_encoding"] = "base64";
  }
}

json::object OrderHeadToJson(const store::Delivery& h) {
  json::value next = nullptr;
  if (h.status == store::DeliveryStatus::kScheduled) {
    next = json::string(FormatRfc3339(h.next_attempt_at));
  }
  return json::object{{"event", h.event_id},
                      {"chain", h.chain},
                      {"status", store::DeliveryStatusName(h.status)},
                      {"attempt", h.attempts},
                      {"max_attempts", h.max_attempts},
                      {"next_attempt_at", std::move(next)},
                      {"reason", StringOrNull(h.reason)}};
}

json::object EventDetailToJson(const store::Event& e, const std::vector<DeliveryDetail>& deliveries,
                               bool with_body, const PauseCauses* causes,
                               const RouteIds& route_ids) {
  json::object o = EventSummaryToJson(e);
  json::array headers;
  // Forwarded as stored, but values that look like credentials (a provider's token or signature
  // header) are not shown.
  for (const store::Header& h : e.headers) {
    headers.push_back(json::array{h.name, model::IsCredentialName(h.name)
                                              ? std::string_view(model::kRedacted)
                                              : std::string_view(h.value)});
  }
  o["headers"] = std::move(headers);
  if (with_body) o["body_base64"] = Base64Encode(e.body);
  json::array ds;
  for (const DeliveryDetail& dd : deliveries) {
    const store::Delivery& d = dd.delivery;
    json::array attempts;
    for (const store::Attempt& a : dd.attempts) {
      json::value code = nullptr;
      if (a.status_code) code = *a.status_code;
      json::object attempt{{"n", a.n},
                           {"started_at", FormatRfc3339(a.started_at)},
                           {"duration_ms", a.duration_ms},
                           {"status_code", std::move(code)},
                           {"error", StringOrNull(a.error)},
                           {"retry_after", StringOrNull(a.retry_after)},
                           {"probe", a.probe},
                           {"counted", a.counted}};
      if (a.transformed) {
        json::array changed;  // stored ", "-separated: header names have no commas
        std::string_view rest = a.transformed->headers_changed;
        while (!rest.empty()) {
          const size_t comma = rest.find(", ");
          changed.emplace_back(rest.substr(0, comma));
          rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
        }
        attempt["transformed"] = json::object{{"body_size", a.transformed->body_size},
                                              {"body_sha256", a.transformed->body_sha256},
                                              {"headers_changed", std::move(changed)}};
      } else {
        attempt["transformed"] = nullptr;
      }
      AddResponseSnippet(attempt, a.response_snippet);
      attempts.push_back(std::move(attempt));
    }
    json::value next = nullptr;
    if (d.status == store::DeliveryStatus::kScheduled) {
      next = json::string(FormatRfc3339(d.next_attempt_at));
    }
    json::value held = nullptr;
    if (dd.held_behind) held = OrderHeadToJson(*dd.held_behind);
    ds.push_back(json::object{{"destination", d.destination},
                              {"status", store::DeliveryStatusName(d.status)},
                              {"attempt", d.attempts},
                              {"max_attempts", d.max_attempts},
                              {"next_attempt_at", std::move(next)},
                              {"deadline", TimeOrNull(d.deadline)},
                              {"reason", StringOrNull(d.reason)},
                              {"chain", d.chain},
                              {"order_key", StringOrNull(d.order_key)},
                              {"held_behind", std::move(held)},
                              {"attempts", std::move(attempts)}});
    AddPauseCause(ds.back().as_object(), d.destination, d.status, causes);
  }
  o["deliveries"] = std::move(ds);
  o["routes"] = RouteVerdictsToJson(e, deliveries, route_ids);
  return o;
}

json::array RouteVerdictsToJson(const store::Event& e,
                                const std::vector<DeliveryDetail>& deliveries,
                                const RouteIds& route_ids) {
  json::array routes;
  for (const DeliveryDetail& dd : deliveries) {
    if (dd.delivery.chain != 0) continue;  // replays are not routing
    auto id = route_ids.find(dd.delivery.destination);
    routes.push_back(json::object{
        {"route", id == route_ids.end() ? json::value(nullptr) : json::value(id->second)},
        {"destination", dd.delivery.destination},
        {"matched", true},
        {"reason", nullptr}});
  }
  for (const store::RouteMiss& m : e.route_misses) {
    routes.push_back(json::object{{"route", m.route},
                                  {"destination", m.destination},
                                  {"matched", false},
                                  {"reason", m.reason}});
  }
  return routes;
}

}  // namespace hookrelay::api
