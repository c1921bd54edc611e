#include "api/api_json.h"

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>

#include "common/crypto.h"
#include "common/id.h"
#include "common/time_format.h"
#include "common/units.h"
#include "pacing/adaptive_concurrency.h"
#include "policy/breaker.h"
#include "policy/breaker_json.h"
#include "replay/replay_runner.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

json::value TimeOrNull(const std::optional<TimePoint>& t) {
  if (!t) return nullptr;
  return json::string(FormatRfc3339(*t));
}

// The length of the longest prefix of `s` that is valid UTF-8 (RFC 3629: no overlongs,
// surrogates or code points past U+10FFFF).
size_t ValidUtf8Prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
    if (c < 0x80) {
      n = 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
      n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 3;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 4;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else {
      return i;
    }
    if (i + n > s.size()) return i;
    for (size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf)) return i;
    }
    i += n;
  }
  return i;
}

json::value StringOrNull(const std::optional<std::string>& s) {
  if (!s) return nullptr;
  return json::string(*s);
}

// A non-empty query parameter, or nullopt.
std::optional<std::string> Param(const http::RequestHead& head, std::string_view name) {
  std::optional<std::string> v = head.QueryParam(name);
  if (v && v->empty()) return std::nullopt;
  return v;
}

Result<std::optional<TimePoint>> TimeParam(const http::RequestHead& head, std::string_view name) {
  std::optional<std::string> v = Param(head, name);
  if (!v) return std::optional<TimePoint>();
  std::optional<TimePoint> t = ParseRfc3339(*v);
  if (!t) {
    return Status::InvalidArgument(
        "must be an RFC 3339 time such as 2026-11-30T06:00:00Z, not \"" + *v + "\"",
        std::string(name));
  }
  return t;
}

Result<int> LimitParam(const http::RequestHead& head, int default_limit) {
  std::optional<std::string> l = Param(head, "limit");
  if (!l) return default_limit;
  int n = 0;
  auto [end, ec] = std::from_chars(l->data(), l->data() + l->size(), n);
  if (ec != std::errc() || end != l->data() + l->size() || n < 1 || n > kMaxEventLimit) {
    return Status::InvalidArgument(
        "must be an integer from 1 to " + std::to_string(kMaxEventLimit) + ", not \"" + *l + "\"",
        "limit");
  }
  return n;
}

// Parses an optional JSON object body; an empty (or all-blank) body is an empty object.
Result<json::object> ParseObjectBody(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return json::object();
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) {
    // Boost.JSON calls bytes that are not UTF-8 a syntax error: say what is wrong and where.
    if (const size_t valid = ValidUtf8Prefix(body); valid < body.size()) {
      return Status::InvalidArgument(
          "body: malformed JSON: invalid UTF-8 at byte " + std::to_string(valid), "body");
    }
    return Status::InvalidArgument("body: malformed JSON: " + ec.message(), "body");
  }
  if (!v.is_object()) return Status::InvalidArgument("body: must be a JSON object", "body");
  return std::move(v.as_object());
}

// Rejects any field of `o` other than `allowed` (which may be empty), naming the known ones as
// the catalog bodies do.
Status OnlyField(const json::object& o, std::string_view allowed) {
  for (const auto& [k, v] : o) {
    if (k != allowed) {
      return Status::InvalidArgument(
          "unknown field \"" + std::string(k) + "\"" +
              (allowed.empty() ? std::string(" (this request takes no fields)")
                               : " (known fields: " + std::string(allowed) + ")"),
          std::string(k));
    }
  }
  return Status::Ok();
}

// The non-empty string field `name` of `o`, nullopt when absent.
Result<std::optional<std::string>> StringField(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  if (!v || v->is_null()) return std::optional<std::string>();
  if (!v->is_string() || v->as_string().empty()) {
    return Status::InvalidArgument(std::string(name) + ": must be a non-empty string",
                                   std::string(name));
  }
  return std::optional<std::string>(std::string(v->as_string()));
}

json::object List(json::array items, json::value next_cursor = nullptr) {
  return {{"items", std::move(items)}, {"next_cursor", std::move(next_cursor)}};
}

}  // namespace

Status CheckQueryParams(const http::RequestHead& head,
                        std::initializer_list<std::string_view> known) {
  std::vector<std::string> seen;
  std::string_view rest = head.query;
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;  // "?a=1&&b=2"
    const std::string_view raw = pair.substr(0, pair.find('='));
    std::string name;
    if (!http::PercentDecode(raw, true, name)) {
      return Status::InvalidArgument(
          "query parameter \"" + std::string(raw) + "\": malformed %-escape", std::string(raw));
    }
    if (name.empty()) {
      return Status::InvalidArgument(
          "a query parameter has no name (\"" + std::string(pair) + "\")", "query");
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      return Status::InvalidArgument("unknown query parameter \"" + name + "\"" +
                                         (list.empty() ? std::string(" (this endpoint takes none)")
                                                       : " (known: " + list + ")"),
                                     name);
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return Status::InvalidArgument("query parameter \"" + name + "\" is given more than once",
                                     name);
    }
    std::string value;
    if (pair.size() > raw.size() &&
        !http::PercentDecode(pair.substr(raw.size() + 1), true, value)) {
      return Status::InvalidArgument(name + ": malformed %-escape", name);
    }
    seen.push_back(std::move(name));
  }
  return Status::Ok();
}

Status CheckEventId(const std::string& id, std::string_view what) {
  if (IsUlid(id)) return Status::Ok();
  return Status::InvalidArgument(
      "\"" + id + "\" is not " +
          (what == "event" ? std::string("an event") : "a " + std::string(what)) +
          " id (26 characters such as 01JDZ8X4AC1N4G0Y5K6M7P8Q9R)",
      "id");
}

Result<EventListQuery> ParseEventListQuery(const http::RequestHead& head) {
  HR_RETURN_IF_ERROR(CheckQueryParams(
      head, {"status", "source", "destination", "since", "until", "cursor", "limit"}));
  EventListQuery q;
  if (auto s = Param(head, "status")) {
    q.filter.status = store::ParseDeliveryStatus(*s);
    if (!q.filter.status) {
      return Status::InvalidArgument(
          "must be one of scheduled, delivering, delivered, failed, paused, not \"" + *s + "\"",
          "status");
    }
  }
  q.filter.source = Param(head, "source");
  q.filter.destination = Param(head, "destination");
  auto since = TimeParam(head, "since");
  if (!since.ok()) return since.status();
  q.filter.since = *since;
  auto until = TimeParam(head, "until");
  if (!until.ok()) return until.status();
  q.filter.until = *until;
  if (q.filter.since && q.filter.until && *q.filter.until < *q.filter.since) {
    return Status::InvalidArgument("must not be before since", "until");
  }
  q.cursor = Param(head, "cursor").value_or("");
  auto limit = LimitParam(head, kDefaultEventLimit);
  if (!limit.ok()) return limit.status();
  q.limit = *limit;
  return q;
}

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

Result<PauseCauses> LoadPauseCauses(store::Store& store, const model::Catalog& catalog) {
  auto controls = store.ListDestinationControls();
  if (!controls.ok()) return controls.status();
  PauseCauses causes;
  for (const auto& [name, d] : catalog.destinations) {
    auto it = controls->find(name);
    causes.emplace(name, PauseCauseOf(d.paused, it == controls->end() ? store::DestinationControl{}
                                                                      : it->second));
  }
  return causes;
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

json::object HeldQueuesToJson(const store::HeldQueues& held) {
  json::array queues;
  for (const store::HeldQueue& q : held.queues) {
    queues.push_back(json::object{{"order_key", q.order_key},
                                  {"head", OrderHeadToJson(q.head)},
                                  {"waiting", q.waiting},
                                  {"waiting_since", FormatRfc3339(q.waiting_since)}});
  }
  return json::object{{"total", held.total}, {"queues", std::move(queues)}};
}

json::object EventDetailToJson(const store::Event& e, const std::vector<DeliveryDetail>& deliveries,
                               bool with_body, const PauseCauses* causes) {
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
  return o;
}

Result<bool> ParseEventDetailQuery(const http::RequestHead& head) {
  HR_RETURN_IF_ERROR(CheckQueryParams(head, {"body"}));
  std::optional<std::string> body = Param(head, "body");
  if (!body || *body == "true") return true;
  if (*body == "false") return false;
  return Status::InvalidArgument("body: must be true or false", "body");
}

Result<std::optional<json::object>> LoadEventDetail(store::Store& store, const std::string& id,
                                                    bool with_body, const model::Catalog* catalog) {
  auto event = store.GetEvent(id);
  if (!event.ok()) return event.status();
  if (!event->has_value()) return std::optional<json::object>();
  auto deliveries = store.GetDeliveries(id);
  if (!deliveries.ok()) return deliveries.status();
  std::vector<DeliveryDetail> details;
  details.reserve(deliveries->size());
  for (store::Delivery& d : *deliveries) {
    auto attempts = store.GetAttempts(d.id);
    if (!attempts.ok()) return attempts.status();
    std::optional<store::Delivery> held_behind;
    if (d.order_key && (d.status == store::DeliveryStatus::kScheduled ||
                        d.status == store::DeliveryStatus::kPaused)) {
      auto head = store.OrderHead(d.destination, *d.order_key);
      if (!head.ok()) return head.status();
      if (head->has_value() && (*head)->id != d.id) held_behind = std::move(**head);
    }
    details.push_back({std::move(d), std::move(*attempts), std::move(held_behind)});
  }
  std::optional<PauseCauses> causes;
  const bool any_paused = std::any_of(details.begin(), details.end(), [](const DeliveryDetail& x) {
    return x.delivery.status == store::DeliveryStatus::kPaused;
  });
  if (catalog && any_paused) {
    auto loaded = LoadPauseCauses(store, *catalog);
    if (!loaded.ok()) return loaded.status();
    causes = std::move(*loaded);
  }
  return std::optional<json::object>(
      EventDetailToJson(**event, details, with_body, causes ? &*causes : nullptr));
}

json::object DestinationViewToJson(const model::Destination& d,
                                   const delivery::DestinationState* state) {
  delivery::DestinationState initial;
  if (!state) {
    initial.allowed_concurrency = pacing::AdaptiveConcurrency(d.max_concurrency).allowed();
    state = &initial;
  }
  json::object o = DestinationToJson(d);
  const policy::BreakerSnapshot& b = state->breaker;
  // The snapshot's open_until is the end of the open period only while open; half-open, it is
  // when the probe went out, shown as such (and only while that probe is out).
  const bool open = b.state == policy::BreakerState::kOpen;
  json::object breaker{{"state", policy::BreakerStateName(b.state)},
                       {"consecutive_failures", b.consecutive_failures},
                       {"open_until", open ? TimeOrNull(b.open_until) : json::value(nullptr)},
                       {"trips", b.trips}};
  if (b.state == policy::BreakerState::kHalfOpen && b.probe_in_flight && b.open_until) {
    breaker["probe_sent_at"] = TimeOrNull(b.open_until);
  }
  o["breaker"] = std::move(breaker);
  // The breaker's settings as configured (threshold, open periods, escalation_reset), which
  // "breaker" (the live state) replaces above, so `destinations show` can say them.
  o["breaker_settings"] = policy::BreakerConfigToJson(d.breaker);
  const bool paused = d.paused || state->paused;
  o["paused"] = paused;
  json::value reason = nullptr;
  if (state->paused && !state->paused_reason.empty()) {
    reason = json::string(state->paused_reason);
  } else if (paused) {
    reason = "paused in the configuration";
  }
  o["paused_reason"] = std::move(reason);
  // Just after a change of max_concurrency (PATCH), the engine has not seen it yet; it will
  // start the new limit afresh, so that is what is shown.
  o["allowed_concurrency"] =
      state->max_concurrency != 0 && state->max_concurrency != d.max_concurrency
          ? pacing::AdaptiveConcurrency(d.max_concurrency).allowed()
          : state->allowed_concurrency;
  o["in_flight"] = state->in_flight;
  // Of the last delivery::LatencyWindow::kCapacity attempts this process made (nearest rank);
  // null percentiles until one was timed.
  const delivery::LatencySummary& l = state->latency;
  o["latency"] =
      json::object{{"p50_ms", l.samples > 0 ? json::value(l.p50_ms) : json::value(nullptr)},
                   {"p99_ms", l.samples > 0 ? json::value(l.p99_ms) : json::value(nullptr)},
                   {"samples", l.samples}};
  return o;
}

json::object DestinationListToJson(
    const model::Catalog& catalog,
    const std::map<std::string, delivery::DestinationState>& states) {
  json::array items;
  for (const auto& [name, d] : catalog.destinations) {
    auto it = states.find(name);
    items.push_back(DestinationViewToJson(d, it == states.end() ? nullptr : &it->second));
  }
  return List(std::move(items));
}

json::object SourceListToJson(const model::Catalog& catalog) {
  json::array items;
  for (const auto& [name, s] : catalog.sources) items.push_back(SourceToJson(s));
  return List(std::move(items));
}

json::object RouteListToJson(const model::Catalog& catalog) {
  json::array items;
  for (const model::Route& r : catalog.routes) items.push_back(RouteToJson(r));
  return List(std::move(items));
}

std::string AuditActor(std::string_view authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  std::string_view token = authorization;
  if (token.size() > kBearer.size()) token.remove_prefix(kBearer.size());
  return "token:" + HexEncode(Sha256(token)).substr(0, 8);
}

Result<std::string> ParsePauseBody(std::string_view body, const std::string& default_reason) {
  auto o = ParseObjectBody(body);
  if (!o.ok()) return o.status();
  if (Status s = OnlyField(*o, "reason"); !s.ok()) return s;
  auto reason = StringField(*o, "reason");
  if (!reason.ok()) return reason.status();
  return reason->value_or(default_reason);
}

Status ParseEmptyBody(std::string_view body) {
  auto o = ParseObjectBody(body);
  if (!o.ok()) return o.status();
  return OnlyField(*o, "");
}

Result<std::optional<std::string>> ParseReplayBody(std::string_view body) {
  auto o = ParseObjectBody(body);
  if (!o.ok()) return o.status();
  if (Status s = OnlyField(*o, "destination"); !s.ok()) return s;
  return StringField(*o, "destination");
}

std::string ReplayWindowName(Duration window) {
  constexpr Duration kDay = std::chrono::hours(24);
  if (window >= kDay && window % kDay == Duration(0)) {
    return std::to_string(window / kDay) + "-day";
  }
  return FormatDuration(window);
}

bool PastReplayWindow(TimePoint received_at, Duration window, TimePoint now) {
  return now > received_at + window;
}

json::object ReplayResultToJson(const std::string& event_id,
                                const std::vector<store::Delivery>& created) {
  json::array replays;
  for (const store::Delivery& d : created) {
    replays.push_back(
        json::object{{"destination", d.destination}, {"chain", d.chain}, {"delivery_id", d.id}});
  }
  return {{"event", event_id}, {"replays", std::move(replays)}};
}

Result<PageQuery> ParsePageQuery(const http::RequestHead& head) {
  HR_RETURN_IF_ERROR(CheckQueryParams(head, {"cursor", "limit"}));
  PageQuery q;
  q.cursor = Param(head, "cursor").value_or("");
  auto limit = LimitParam(head, kDefaultPageLimit);
  if (!limit.ok()) return limit.status();
  q.limit = *limit;
  return q;
}

json::object AuditEntryToJson(const store::AuditEntry& e) {
  json::value detail = nullptr;
  if (!e.detail.empty()) {
    boost::system::error_code ec;
    json::value v = json::parse(e.detail, ec);
    if (!ec) detail = std::move(v);
  }
  return {{"id", e.id},
          {"at", FormatRfc3339(e.at)},
          {"actor", e.actor},
          {"action", e.action},
          {"target", e.target},
          {"count", e.count},
          {"detail", std::move(detail)}};
}

json::object AuditPageToJson(const store::AuditPage& page) {
  json::array items;
  items.reserve(page.items.size());
  for (const store::AuditEntry& e : page.items) items.push_back(AuditEntryToJson(e));
  json::value next = nullptr;
  if (!page.next_cursor.empty()) next = json::string(page.next_cursor);
  return List(std::move(items), std::move(next));
}

json::object RejectionCountsToJson(const ingest::RejectionCounts& counts) {
  json::object by_reason;
  for (size_t i = 0; i < std::size(ingest::kRejectReasons); ++i) {
    by_reason[ingest::RejectReasonName(ingest::kRejectReasons[i])] = counts.by_reason[i];
  }
  json::value last = nullptr;
  if (counts.last_at) last = json::string(FormatRfc3339(*counts.last_at));
  return {{"since_start", counts.total},
          {"not_recorded", counts.not_recorded},
          {"last_at", std::move(last)},
          {"by_reason", std::move(by_reason)}};
}

json::object RejectionPageToJson(const store::RejectionPage& page,
                                 const ingest::RejectionCounts& counts) {
  json::array items;
  items.reserve(page.items.size());
  for (const store::Rejection& r : page.items) {
    json::array headers;
    // Credentials were replaced before the row was written; names that look like one are
    // hidden here too, as in the event detail.
    for (const store::Header& h : r.headers) {
      headers.push_back(json::array{h.name, model::IsCredentialName(h.name)
                                                ? std::string_view(model::kRedacted)
                                                : std::string_view(h.value)});
    }
    json::value remote = nullptr;
    if (!r.remote_addr.empty()) remote = json::string(r.remote_addr);
    items.push_back(json::object{{"id", std::to_string(r.id)},
                                 {"received_at", FormatRfc3339(r.received_at)},
                                 {"reason", r.reason},
                                 {"message", r.message},
                                 {"headers", std::move(headers)},
                                 {"size", r.size},
                                 {"sha256", r.sha256},
                                 {"remote_addr", std::move(remote)}});
  }
  json::value next = nullptr;
  if (!page.next_cursor.empty()) next = json::string(page.next_cursor);
  json::object o = List(std::move(items), std::move(next));
  o["counts"] = RejectionCountsToJson(counts);
  return o;
}

Result<BulkReplayRequest> ParseBulkReplayBody(std::string_view body) {
  // Malformed JSON is told apart from JSON that is not an object, as for every other body.
  HR_ASSIGN_OR_RETURN(json::object o, ParseObjectBody(body));
  for (const auto& [k, v] : o) {
    static constexpr std::string_view kKnown[] = {"status", "source", "destination",
                                                  "since",  "until",  "rate"};
    if (std::find(std::begin(kKnown), std::end(kKnown), k) == std::end(kKnown)) {
      return Status::InvalidArgument(
          "unknown field \"" + std::string(k) +
              "\" (known fields: status, source, destination, since, until, rate)",
          std::string(k));
    }
  }
  BulkReplayRequest r;
  if (const json::value* rate = o.if_contains("rate")) {
    if (rate->is_string()) {
      Result<double> parsed = ParseRate(std::string(rate->get_string()));
      if (!parsed.ok())
        return Status::InvalidArgument("rate: " + parsed.status().message(), "rate");
      r.rate = *parsed;
    } else if (rate->is_number()) {
      r.rate = rate->to_number<double>();
    } else {
      return Status::InvalidArgument("rate: must be a string like \"100/s\" or a number", "rate");
    }
    if (!(*r.rate > 0)) return Status::InvalidArgument("rate: must be positive", "rate");
    if (*r.rate < replay::kMinReplayRate || *r.rate > replay::kMaxReplayRate) {
      return Status::InvalidArgument("rate: must be from " + FormatRate(replay::kMinReplayRate) +
                                         " (about 1 per 28 hours) to " +
                                         FormatRate(replay::kMaxReplayRate),
                                     "rate");
    }
    o.erase("rate");
  }
  r.filter_json = json::serialize(o);
  return r;
}

json::object ReplayJobToJson(const store::ReplayJob& job) {
  json::object o;
  o["id"] = job.id;
  o["state"] = store::ReplayJobStateName(job.state);
  o["total"] = job.total;
  o["done"] = job.done;
  o["failed"] = job.failed;
  o["rate"] = job.rate;
  boost::system::error_code ec;
  json::value filter = json::parse(job.filter, ec);
  o["filter"] = ec ? json::value(nullptr) : std::move(filter);
  o["created_at"] = FormatRfc3339(job.created_at);
  o["updated_at"] = FormatRfc3339(job.updated_at);
  o["error"] = job.error ? json::value(*job.error) : json::value(nullptr);
  const int64_t rest = job.total - job.done - job.failed;
  o["skipped"] = job.state == store::ReplayJobState::kDone && rest > 0 ? rest : 0;
  json::value waiting = nullptr;
  if (job.waiting && !store::IsFinal(job.state)) {
    boost::system::error_code wec;
    json::value w = json::parse(*job.waiting, wec);
    if (!wec && w.is_object()) waiting = std::move(w);
  }
  o["waiting"] = std::move(waiting);
  return o;
}

json::object ReplayJobPageToJson(const store::ReplayJobPage& page) {
  json::array items;
  for (const store::ReplayJob& job : page.items) items.push_back(ReplayJobToJson(job));
  return List(std::move(items),
              page.next_cursor.empty() ? json::value(nullptr) : json::value(page.next_cursor));
}

Result<json::value> ParseCatalogBody(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::InvalidArgument("body: a JSON object is required", "body");
  }
  auto o = ParseObjectBody(body);
  if (!o.ok()) return o.status();
  return json::value(std::move(*o));
}

Result<SimulateQuery> ParseSimulateQuery(const http::RequestHead& head) {
  static constexpr std::string_view kKnown[] = {"events",   "fail_window", "recover_at",
                                                "capacity", "seed",        "destination",
                                                "policy",   "policy_json"};
  SimulateQuery q;
  std::vector<std::string> seen;
  std::string_view rest = head.query;
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string_view raw = pair.substr(0, eq);
    std::string name, value;
    if (!http::PercentDecode(raw, true, name)) {
      return Status::InvalidArgument(
          "query parameter \"" + std::string(raw) + "\": malformed %-escape", std::string(raw));
    }
    if (name.empty()) {
      return Status::InvalidArgument(
          "a query parameter has no name (\"" + std::string(pair) + "\")", "query");
    }
    if (std::find(std::begin(kKnown), std::end(kKnown), name) == std::end(kKnown)) {
      std::string list;
      for (std::string_view k : kKnown) list += (list.empty() ? "" : ", ") + std::string(k);
      return Status::InvalidArgument(
          "unknown query parameter \"" + name + "\" (known: " + list + ")", name);
    }
    if (eq != std::string_view::npos && !http::PercentDecode(pair.substr(eq + 1), true, value)) {
      return Status::InvalidArgument(name + ": malformed %-escape", name);
    }
    if (name == "policy" || name == "policy_json") {
      q.input.policies.push_back({name == "policy" ? policy::PolicyArgument::Kind::kPreset
                                                   : policy::PolicyArgument::Kind::kJson,
                                  std::move(value)});
      continue;
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return Status::InvalidArgument("query parameter \"" + name + "\" is given more than once",
                                     name);
    }
    seen.push_back(name);
    // Unlike the lists' filters, an empty value is not "absent": "events=" is a mistake.
    std::optional<std::string>* slot = name == "events"        ? &q.input.events
                                       : name == "fail_window" ? &q.input.fail_window
                                       : name == "recover_at"  ? &q.input.recover_at
                                       : name == "capacity"    ? &q.input.capacity
                                       : name == "seed"        ? &q.input.seed
                                                               : &q.destination;
    *slot = std::move(value);
  }
  if (q.destination && q.destination->empty()) {
    return Status::InvalidArgument("must name a destination", "destination");
  }
  return q;
}

sim::HerdLimits ApiHerdLimits() {
  sim::HerdLimits limits;
  limits.max_events = 100'000;
  limits.max_strategies = 10;
  limits.max_requests = 5'000'000;
  return limits;
}

}  // namespace hookrelay::api
