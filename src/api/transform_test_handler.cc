// POST /api/v1/transforms/test: a transform run once, on an event's request or on one given.

#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/handler_util.h"
#include "api/request_params.h"
#include "common/crypto.h"
#include "delivery/outgoing_headers.h"
#include "delivery/transformed_request.h"
#include "http/json_text.h"
#include "model/transform_spec.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

// {"method", "path", "query", "headers": {name: value, …} | [[name, value], …], "body"}: a request
// given inline. InvalidArgument naming "request.…".
Result<transform::Request> InlineRequest(const json::value& v) {
  const json::object* o = v.if_object();
  if (!o) return Status::InvalidArgument("request: must be a JSON object", "request");
  transform::Request r{"POST", "/", "", {}, ""};
  for (const auto& [k, value] : *o) {
    const std::string field = "request." + std::string(k);
    if (k == "headers") {
      if (const json::object* h = value.if_object()) {
        for (const auto& [name, hv] : *h) {
          if (!hv.is_string()) {
            return Status::InvalidArgument(field + "." + std::string(name) + ": must be a string",
                                           field);
          }
          r.headers.emplace_back(std::string(name), std::string(hv.get_string()));
        }
        continue;
      }
      return Status::InvalidArgument(field + ": must be an object of name: value", field);
    }
    if (!value.is_string()) return Status::InvalidArgument(field + ": must be a string", field);
    const std::string s(value.get_string());
    if (k == "method") {
      r.method = s;
    } else if (k == "path") {
      r.path = s;
    } else if (k == "query") {
      r.query = s;
    } else if (k == "body") {
      r.body = s;
    } else {
      return Status::InvalidArgument(
          "unknown field \"" + field + "\" (known: method, path, query, headers, body)", field);
    }
  }
  return r;
}

json::object RequestToJson(const transform::Request& r) {
  json::array headers;
  for (const auto& [name, value] : r.headers) headers.push_back(json::array{name, value});
  json::object o{
      {"method", r.method}, {"path", r.path}, {"query", r.query}, {"headers", std::move(headers)}};
  if (http::IsValidUtf8(r.body)) {
    o["body"] = r.body;
  } else {
    o["body_base64"] = Base64Encode(r.body);
  }
  o["size"] = static_cast<int64_t>(r.body.size());
  o["sha256"] = HexEncode(Sha256(r.body));
  return o;
}

}  // namespace

http::Response ApiHandler::TestTransform(const http::Request& request,
                                         const model::Catalog& catalog) const {
  if (!controls_.transforms) return NoControl("running transforms");
  boost::system::error_code ec;
  json::value body = json::parse(request.body, ec);
  if (ec || !body.is_object()) {
    return FromStatus(Status::InvalidArgument("body: must be a JSON object", "body"));
  }
  const json::object& o = body.get_object();
  for (const auto& [k, v] : o) {
    static constexpr std::string_view kKnown[] = {"script", "cpu",         "memory",
                                                  "event",  "destination", "request"};
    if (std::find(std::begin(kKnown), std::end(kKnown), k) == std::end(kKnown)) {
      return FromStatus(Status::InvalidArgument(
          "unknown field \"" + std::string(k) +
              "\" (known fields: script, cpu, memory, event, destination, request)",
          std::string(k)));
    }
  }
  const model::Destination* destination = nullptr;
  if (const json::value* d = o.if_contains("destination")) {
    if (!d->is_string()) {
      return FromStatus(Status::InvalidArgument("destination: must be a string", "destination"));
    }
    destination = catalog.FindDestination(std::string(d->get_string()));
    if (!destination) return NotFound("destination", std::string(d->get_string()));
  }
  // The request: an event's, as it would go to `destination` (or as received), or inline.
  transform::Request req{"POST", "/", "", {}, ""};
  std::string source;
  if (const json::value* id = o.if_contains("event")) {
    if (o.contains("request")) {
      return FromStatus(
          Status::InvalidArgument("request: give either event or request, not both", "request"));
    }
    if (!id->is_string())
      return FromStatus(Status::InvalidArgument("event: must be a string", "event"));
    const std::string event_id(id->get_string());
    if (Status s = CheckEventId(event_id); !s.ok()) {
      return FromStatus(Status::InvalidArgument("event: " + s.message(), "event"));
    }
    auto event = store_.GetEvent(event_id);
    if (!event.ok()) return FromStatus(event.status());
    if (!event->has_value()) return NotFound("event", event_id);
    store::Event& e = **event;
    source = e.source;
    if (destination) {
      auto target = delivery::SplitTarget(destination->url);
      if (!target.ok()) return FromStatus(target.status());
      req.path = target->path;
      req.query = target->query;
      req.headers = delivery::OutgoingHeaders(e.headers, e.content_type, *destination, {});
      if (destination->auth.kind != model::DestinationAuth::Kind::kNone) req.headers.pop_back();
    } else {
      for (store::Header& h : e.headers) req.headers.emplace_back(h.name, h.value);
    }
    req.body = std::move(e.body);
  } else if (const json::value* inline_request = o.if_contains("request")) {
    auto r = InlineRequest(*inline_request);
    if (!r.ok()) return FromStatus(r.status());
    req = std::move(*r);
  } else {
    return FromStatus(Status::InvalidArgument(
        "event: give an event id (or an inline request) to run the transform on", "event"));
  }
  // The script: the one given, else the one the delivery would run (a preview).
  model::TransformSpec spec;
  if (o.contains("script")) {
    json::object given;
    for (const char* k : {"script", "cpu", "memory"}) {
      if (const json::value* v = o.if_contains(k)) given[k] = *v;
    }
    auto parsed = model::ParseTransformSpec(given, "");
    if (!parsed.ok()) return FromStatus(parsed.status());
    spec = std::move(*parsed);
  } else if (const model::TransformSpec* current =
                 destination ? catalog.TransformFor(source, *destination) : nullptr) {
    spec = *current;
  } else {
    return FromStatus(Status::InvalidArgument(
        "script: is required (or name a destination that has a transform, with an event)",
        "script"));
  }
  const transform::Limits limits = delivery::LimitsOf(spec, controls_.transforms->default_limits());
  if (Status s = controls_.transforms->CheckLimits(limits); !s.ok()) return FromStatus(s);
  Result<transform::Outcome> out =
      controls_.transforms->RunSync(spec.script, std::move(req), limits);
  if (!out.ok()) {
    // The script's failure, not the API request's: 422 with what and where.
    return http::JsonError(422, "transform_error", out.status().message());
  }
  json::object answer{
      {"result", out->request ? "request" : "skip"},
      {"request", out->request ? json::value(RequestToJson(*out->request)) : json::value(nullptr)},
      {"cpu_ms", static_cast<double>(out->cpu.count()) / 1000.0},
      {"memory_bytes", static_cast<int64_t>(out->memory_bytes)}};
  return Json(answer);
}

}  // namespace hookrelay::api
