#include "ingest/ingest_service.h"

#include <algorithm>
#include <boost/json.hpp>

#include "common/id.h"
#include "http/json_text.h"
#include "ingest/verify.h"
#include "model/destination.h"

namespace hookrelay::ingest {

namespace json = boost::json;

namespace {

bool IsHopByHop(std::string_view name, const std::vector<std::string>& connection_tokens) {
  static constexpr std::string_view kDropped[] = {
      "connection", "keep-alive", "proxy-connection",    "transfer-encoding",  "te",
      "trailer",    "upgrade",    "proxy-authorization", "proxy-authenticate", "content-length",
      "expect"};
  for (std::string_view d : kDropped) {
    if (http::EqualsIgnoreCase(name, d)) return true;
  }
  for (const std::string& t : connection_tokens) {
    if (http::EqualsIgnoreCase(name, t)) return true;
  }
  return false;
}

std::vector<std::string> ConnectionTokens(const http::HeaderList& headers) {
  std::vector<std::string> tokens;
  for (const auto& [name, value] : headers) {
    if (!http::EqualsIgnoreCase(name, "connection")) continue;
    size_t start = 0;
    while (start <= value.size()) {
      size_t comma = value.find(',', start);
      std::string token =
          value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      token.erase(0, token.find_first_not_of(" \t"));
      token.erase(token.find_last_not_of(" \t") + 1);
      if (!token.empty()) tokens.push_back(token);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return tokens;
}

http::Response Accepted(const std::string& id, bool duplicate) {
  http::Response r;
  r.status = 202;
  // Ids are ULIDs (Crockford base32), which need no JSON escaping; anything else goes through the
  // serializer.
  const bool plain = std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
  });
  if (plain) {
    r.body.reserve(id.size() + 32);
    r.body.append(R"({"id":")").append(id).append(duplicate ? R"(","duplicate":true})" : R"("})");
    return r;
  }
  json::object body{{"id", id}};
  if (duplicate) body["duplicate"] = true;
  r.body = http::SerializeJson(body);
  return r;
}

}  // namespace

std::vector<store::Header> KeptHeaders(const http::HeaderList& headers) {
  http::HeaderList copy = headers;
  return KeptHeaders(std::move(copy));
}

std::vector<store::Header> KeptHeaders(http::HeaderList&& headers) {
  std::vector<std::string> tokens = ConnectionTokens(headers);
  std::vector<store::Header> kept;
  kept.reserve(headers.size());
  for (auto& [name, value] : headers) {
    if (IsHopByHop(name, tokens)) continue;
    // Credentials meant for hookrelay are never forwarded, so their values need not be kept;
    // the name stays, to show that one was sent.
    if (model::IsHookrelayCredential(name)) value = std::string(model::kRedacted);
    kept.push_back({std::move(name), std::move(value)});
  }
  return kept;
}

std::optional<std::string> DedupKey(const model::DedupRule& rule, const http::RequestHead& head,
                                    std::string_view body) {
  switch (rule.kind) {
    case model::DedupRule::Kind::kNone: return std::nullopt;
    case model::DedupRule::Kind::kHeader: {
      auto v = head.Header(rule.key);
      if (!v || v->empty()) return std::nullopt;
      return std::string(*v);
    }
    case model::DedupRule::Kind::kJson: {
      boost::system::error_code ec;
      json::value doc = json::parse(body, ec);
      if (ec || !doc.is_object()) return std::nullopt;
      const json::value* field = doc.as_object().if_contains(rule.key);
      if (!field || field->is_null() || field->is_object() || field->is_array()) {
        return std::nullopt;
      }
      if (field->is_string()) {
        if (field->as_string().empty()) return std::nullopt;
        return std::string(field->as_string());
      }
      return json::serialize(*field);
    }
  }
  return std::nullopt;
}

Duration DedupWindow(const model::Catalog& catalog, const std::string& source) {
  Duration window{0};
  for (const model::Destination* d : catalog.DestinationsOf(source)) {
    window = std::max(window, d->policy.replay_window);
  }
  return window.count() > 0 ? window : std::chrono::hours(24 * 30);
}

store::NewEvent BuildEvent(const model::Catalog& catalog, const model::Source& source,
                           http::Request request, std::string id, TimePoint now) {
  store::NewEvent e;
  e.id = std::move(id);
  e.source = source.name;
  e.received_at = now;
  e.content_type = std::string(request.Header("Content-Type").value_or(""));
  e.dedup_key = DedupKey(source.dedup, request, request.body);
  if (e.dedup_key) e.dedup_window = DedupWindow(catalog, source.name);
  e.headers = KeptHeaders(std::move(request.headers));
  e.body = std::move(request.body);
  for (const model::Destination* d : catalog.DestinationsOf(source.name)) {
    store::NewDelivery nd;
    nd.destination = d->name;
    nd.max_attempts = d->policy.max_attempts;
    nd.next_attempt_at = now;
    nd.status = d->paused ? store::DeliveryStatus::kPaused : store::DeliveryStatus::kScheduled;
    e.deliveries.push_back(std::move(nd));
  }
  return e;
}

IngestService::IngestService(model::Registry& registry, store::Store& store, const Clock& clock,
                             Random& random)
    : registry_(registry), store_(store), clock_(clock), random_(random) {}

http::Handler::HeadDecision IngestService::OnHead(const http::RequestHead& head,
                                                  const std::string& source) {
  http::Handler::HeadDecision d;
  if (head.method != "POST") {
    stats_.rejected.fetch_add(1, std::memory_order_relaxed);
    http::Response r = http::JsonError(405, "method_not_allowed",
                                       "webhooks are received with POST, not " + head.method);
    r.headers.emplace_back("Allow", "POST");
    d.reject = std::move(r);
    return d;
  }
  auto catalog = registry_.Get();
  const model::Source* s = catalog->FindSource(source);
  if (!s) {
    stats_.rejected.fetch_add(1, std::memory_order_relaxed);
    d.reject = http::JsonError(404, "not_found", "unknown source \"" + source + "\"");
    return d;
  }
  d.body_limit = s->max_body;
  return d;
}

void IngestService::Handle(http::Request request, const std::string& source,
                           http::Responder respond) {
  auto catalog = registry_.Get();
  const model::Source* s = catalog->FindSource(source);
  if (!s) {  // removed between head and body
    stats_.rejected.fetch_add(1, std::memory_order_relaxed);
    respond(http::JsonError(404, "not_found", "unknown source \"" + source + "\""));
    return;
  }
  const TimePoint now = clock_.Now();
  if (s->verify) {
    Status st = VerifySignature(
        *s->verify, [&](std::string_view name) { return request.Header(name); }, request.body, now);
    if (!st.ok()) {
      stats_.rejected.fetch_add(1, std::memory_order_relaxed);
      respond(http::JsonError(401, "unauthenticated", st.message()));
      return;
    }
  }
  store::NewEvent event =
      BuildEvent(*catalog, *s, std::move(request), NewUlid(clock_, random_), now);
  store_.AppendEvent(std::move(event), [this, respond = std::move(respond)](
                                           Result<store::AppendResult> result) {
    if (!result.ok()) {
      stats_.store_failures.fetch_add(1, std::memory_order_relaxed);
      const Status& st = result.status();
      http::Response r = http::JsonError(
          503, st.code() == Status::Code::kResourceExhausted ? "resource_exhausted" : "unavailable",
          "the event was not stored, retry later: " + st.message());
      r.headers.emplace_back("Retry-After", "5");
      respond(std::move(r));
      return;
    }
    (result->duplicate ? stats_.duplicates : stats_.accepted)
        .fetch_add(1, std::memory_order_relaxed);
    respond(Accepted(result->id, result->duplicate));
    if (!result->duplicate && on_stored_) on_stored_();
  });
}

}  // namespace hookrelay::ingest
