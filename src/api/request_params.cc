#include "api/request_params.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <charconv>

#include "api/json_util.h"
#include "common/id.h"
#include "common/time_format.h"
#include "common/units.h"
#include "model/destination.h"
#include "model/json_fields.h"
#include "replay/replay_runner.h"
#include "routing/type_pattern.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

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
  HR_RETURN_IF_ERROR(CheckQueryParams(head, {"status", "source", "destination", "since", "until",
                                             "type", "routed", "cursor", "limit"}));
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
  if (auto t = Param(head, "type")) {
    HR_RETURN_IF_ERROR(routing::ValidateTypePattern(*t, "type"));
    q.filter.type = std::move(t);
  }
  if (auto r = Param(head, "routed")) {
    if (*r != "true" && *r != "false") {
      return Status::InvalidArgument("routed: must be true or false, not \"" + *r + "\"", "routed");
    }
    q.filter.routed = *r == "true";
  }
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

Result<bool> ParseEventDetailQuery(const http::RequestHead& head) {
  HR_RETURN_IF_ERROR(CheckQueryParams(head, {"body"}));
  std::optional<std::string> body = Param(head, "body");
  if (!body || *body == "true") return true;
  if (*body == "false") return false;
  return Status::InvalidArgument("body: must be true or false", "body");
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

Result<std::string> ParsePauseBody(std::string_view body, const std::string& default_reason) {
  auto o = ParseObjectBody(body);
  if (!o.ok()) return o.status();
  if (Status s = OnlyField(*o, "reason"); !s.ok()) return s;
  auto reason = StringField(*o, "reason");
  if (!reason.ok()) return reason.status();
  return reason->value_or(default_reason);
}

Result<RotateSecretRequest> ParseRotateSecretBody(std::string_view body) {
  HR_ASSIGN_OR_RETURN(json::object o, ParseObjectBody(body));
  RotateSecretRequest r;
  for (const auto& [k, v] : o) {
    if (k != "grace" && k != "secret") {
      return Status::InvalidArgument(
          "unknown field \"" + std::string(k) + "\" (known fields: grace, secret)", std::string(k));
    }
  }
  if (const json::value* g = o.if_contains("grace"); g && !g->is_null()) {
    auto grace = model::GetDuration(*g, "grace");
    if (!grace.ok()) return Status::InvalidArgument("grace: " + grace.status().message(), "grace");
    r.grace = *grace;
    if (r.grace.count() < 0 || r.grace > model::kMaxSecretGrace) {
      return Status::InvalidArgument("grace: must be from 0s to 7d", "grace");
    }
  }
  HR_ASSIGN_OR_RETURN(r.secret, StringField(o, "secret"));
  return r;
}

Result<CreateTokenRequest> ParseCreateTokenBody(std::string_view body) {
  HR_ASSIGN_OR_RETURN(json::object o, ParseObjectBody(body));
  for (const auto& [k, v] : o) {
    if (k != "name" && k != "role" && k != "expires" && k != "scope") {
      return Status::InvalidArgument(
          "unknown field \"" + std::string(k) + "\" (known fields: name, role, expires, scope)",
          std::string(k));
    }
  }
  CreateTokenRequest r;
  HR_ASSIGN_OR_RETURN(std::optional<std::string> name, StringField(o, "name"));
  if (!name) return Status::InvalidArgument("name: is required", "name");
  const bool name_ok =
      name->size() <= 64 && std::isalnum(static_cast<unsigned char>(name->front())) &&
      std::all_of(name->begin(), name->end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
      });
  if (!name_ok) {
    return Status::InvalidArgument(
        "name: 1 to 64 of a-z, 0-9, '.', '_', '-', starting with a letter or digit", "name");
  }
  if (*name == "bootstrap") {
    return Status::InvalidArgument("name: \"bootstrap\" is the start-up token's", "name");
  }
  r.name = std::move(*name);
  HR_ASSIGN_OR_RETURN(std::optional<std::string> role, StringField(o, "role"));
  if (!role)
    return Status::InvalidArgument("role: is required (viewer, operator or admin)", "role");
  std::optional<access::Role> parsed = access::ParseRole(*role);
  if (!parsed) {
    return Status::InvalidArgument(
        "role: unknown role \"" + *role + "\" (known: viewer, operator, admin)", "role");
  }
  r.role = *parsed;
  if (const json::value* e = o.if_contains("expires"); e && !e->is_null()) {
    auto d = model::GetDuration(*e, "expires");
    if (!d.ok()) return Status::InvalidArgument("expires: " + d.status().message(), "expires");
    if (*d < std::chrono::minutes(1) || *d > kMaxTokenLifetime) {
      return Status::InvalidArgument("expires: must be from 1m to 3650d (or null: never)",
                                     "expires");
    }
    r.expires = *d;
  }
  if (const json::value* sc = o.if_contains("scope"); sc && !sc->is_null()) {
    HR_ASSIGN_OR_RETURN(r.scope, access::ParseScope(*sc, "scope"));
  }
  return r;
}

Result<std::string> ParseAddKeyBody(std::string_view body) {
  HR_ASSIGN_OR_RETURN(json::object o, ParseObjectBody(body));
  HR_RETURN_IF_ERROR(OnlyField(o, "master_key"));
  HR_ASSIGN_OR_RETURN(std::optional<std::string> key, StringField(o, "master_key"));
  if (!key) {
    return Status::InvalidArgument(
        "master_key: is required (32 bytes in base64: openssl rand -base64 32)", "master_key");
  }
  return *key;
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

Result<BulkReplayRequest> ParseBulkReplayBody(std::string_view body) {
  // Malformed JSON is told apart from JSON that is not an object, as for every other body.
  HR_ASSIGN_OR_RETURN(json::object o, ParseObjectBody(body));
  for (const auto& [k, v] : o) {
    static constexpr std::string_view kKnown[] = {"status", "source", "destination", "since",
                                                  "until",  "type",   "routed",      "rate"};
    if (std::find(std::begin(kKnown), std::end(kKnown), k) == std::end(kKnown)) {
      return Status::InvalidArgument(
          "unknown field \"" + std::string(k) +
              "\" (known fields: status, source, destination, since, until, type, routed, rate)",
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

Result<RouteTestRequest> ParseRouteTestBody(std::string_view body) {
  HR_ASSIGN_OR_RETURN(json::object o, ParseObjectBody(body));
  for (const auto& [k, v] : o) {
    static constexpr std::string_view kKnown[] = {"source", "types", "filter", "event", "last"};
    if (std::find(std::begin(kKnown), std::end(kKnown), k) == std::end(kKnown)) {
      return Status::InvalidArgument("unknown field \"" + std::string(k) +
                                         "\" (known fields: source, types, filter, event, last)",
                                     std::string(k));
    }
  }
  RouteTestRequest r;
  HR_ASSIGN_OR_RETURN(r.rule, routing::ParseRouteRule(o, ""));
  HR_ASSIGN_OR_RETURN(r.source, StringField(o, "source"));
  HR_ASSIGN_OR_RETURN(r.event, StringField(o, "event"));
  if (r.event) {
    if (Status st = CheckEventId(*r.event); !st.ok()) {
      return Status::InvalidArgument("event: " + st.message(), "event");
    }
  }
  if (const json::value* last = o.if_contains("last")) {
    if (r.event) {
      return Status::InvalidArgument("last: give either event or last, not both", "last");
    }
    const std::optional<int64_t> n =
        last->is_int64() ? std::optional<int64_t>(last->as_int64()) : std::nullopt;
    if (!n || *n < 1 || *n > kMaxRouteTestEvents) {
      return Status::InvalidArgument(
          "last: must be an integer from 1 to " + std::to_string(kMaxRouteTestEvents), "last");
    }
    r.last = static_cast<int>(*n);
  }
  if (!r.source && !r.event) {
    return Status::InvalidArgument(
        "source: is required (whose last events to test), unless event names one", "source");
  }
  return r;
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
