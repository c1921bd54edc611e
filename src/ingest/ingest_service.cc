#include "ingest/ingest_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <memory>

#include "common/crypto.h"
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
  KeepHeaders(headers);
  std::vector<store::Header> kept;
  kept.reserve(headers.size());
  for (auto& [name, value] : headers) kept.push_back({std::move(name), std::move(value)});
  return kept;
}

void KeepHeaders(http::HeaderList& headers) {
  std::vector<std::string> tokens = ConnectionTokens(headers);
  std::erase_if(headers, [&](const auto& h) { return IsHopByHop(h.first, tokens); });
  for (auto& [name, value] : headers) {
    // Credentials meant for hookrelay are never forwarded, so their values need not be kept;
    // the name stays, to show that one was sent.
    if (model::IsHookrelayCredential(name)) value = std::string(model::kRedacted);
  }
}

namespace {

// A SAX handler (boost::json::basic_parser) that finds the top-level member `key` of a JSON object
// and keeps its type and, for numbers, their source text: json::parse would turn 1e999 and 400
// nines into the same double, 0.1 and 0.10000000000000001 too.
struct DedupFieldHandler {
  static constexpr std::size_t max_array_size = -1;
  static constexpr std::size_t max_object_size = -1;
  static constexpr std::size_t max_string_size = -1;
  static constexpr std::size_t max_key_size = -1;

  enum class Kind { kNone, kString, kNumber, kBool, kOther };
  std::string_view key;
  int depth = 0;
  bool top_is_object = false;
  bool in_key = false;      // the current top-level member's key is `key`
  std::string key_text;     // the top-level key being read
  std::string number;       // number parts so far
  Kind kind = Kind::kNone;  // of the last top-level member named `key` (duplicates: last wins)
  std::string value;

  bool AtField() const { return depth == 1 && in_key; }
  void Set(Kind k, std::string v = {}) {
    if (!AtField()) return;
    kind = k;
    value = std::move(v);
  }
  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_array_begin(boost::system::error_code&) {
    Set(Kind::kOther);
    ++depth;
    return true;
  }
  bool on_array_end(std::size_t, boost::system::error_code&) {
    --depth;
    return true;
  }
  bool on_object_begin(boost::system::error_code&) {
    if (depth == 0) top_is_object = true;
    Set(Kind::kOther);
    ++depth;
    return true;
  }
  bool on_object_end(std::size_t, boost::system::error_code&) {
    --depth;
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, boost::system::error_code&) {
    if (AtField()) {
      if (!string_open) value.clear();
      string_open = true;
      value.append(s.data(), s.size());
    }
    return true;
  }
  bool on_string(json::string_view s, std::size_t, boost::system::error_code&) {
    if (AtField()) {
      if (!string_open) value.clear();
      string_open = false;
      value.append(s.data(), s.size());
      kind = Kind::kString;
    }
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, boost::system::error_code&) {
    if (depth == 1) key_text.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, boost::system::error_code&) {
    if (depth == 1) {
      key_text.append(s.data(), s.size());
      in_key = key_text == key;
      key_text.clear();
    }
    return true;
  }
  bool on_number_part(json::string_view s, boost::system::error_code&) {
    if (AtField()) number.append(s.data(), s.size());
    return true;
  }
  bool Number(json::string_view s) {
    if (AtField()) {
      number.append(s.data(), s.size());
      Set(Kind::kNumber, std::move(number));
    }
    number.clear();
    return true;
  }
  bool on_int64(int64_t, json::string_view s, boost::system::error_code&) { return Number(s); }
  bool on_uint64(uint64_t, json::string_view s, boost::system::error_code&) { return Number(s); }
  bool on_double(double, json::string_view s, boost::system::error_code&) { return Number(s); }
  bool on_bool(bool b, boost::system::error_code&) {
    Set(Kind::kBool, b ? "true" : "false");
    return true;
  }
  bool on_null(boost::system::error_code&) {
    Set(Kind::kNone);
    return true;
  }
  bool on_comment_part(json::string_view, boost::system::error_code&) { return true; }
  bool on_comment(json::string_view, boost::system::error_code&) { return true; }

  bool string_open = false;  // the field's string value is being read in parts
};

// The dedup key of the top-level field `key` of a JSON object body. A string is the key as it is
// (the form keys always had, so a retry across an upgrade still matches). Other types get a
// prefix that begins with the byte 0xFF, which never occurs in a parsed JSON string (it is not
// UTF-8), so no string can equal them: a number is "\xFFnumber:" + its text exactly as sent
// ("1", "1.0", "1e999" all differ), a boolean "\xFFbool:true". null, objects, arrays and empty
// strings are no key.
std::optional<std::string> JsonDedupKey(std::string_view body, std::string_view key) {
  static const std::string kTypedKey(1, '\xFF');
  json::basic_parser<DedupFieldHandler> parser(json::parse_options{});
  parser.handler().key = key;
  boost::system::error_code ec;
  const std::size_t used = parser.write_some(false, body.data(), body.size(), ec);
  if (ec || used != body.size() || !parser.handler().top_is_object) return std::nullopt;
  DedupFieldHandler& h = parser.handler();
  switch (h.kind) {
    case DedupFieldHandler::Kind::kString:
      if (h.value.empty()) return std::nullopt;
      return std::move(h.value);
    case DedupFieldHandler::Kind::kNumber: return kTypedKey + "number:" + h.value;
    case DedupFieldHandler::Kind::kBool: return kTypedKey + "bool:" + h.value;
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> DedupKey(const model::DedupRule& rule, const http::RequestHead& head,
                                    std::string_view body) {
  std::optional<std::string> key;
  switch (rule.kind) {
    case model::DedupRule::Kind::kNone: return std::nullopt;
    case model::DedupRule::Kind::kHeader: {
      auto v = head.Header(rule.key);
      if (!v || v->empty()) return std::nullopt;
      key = std::string(*v);
      break;
    }
    case model::DedupRule::Kind::kJson: key = JsonDedupKey(body, rule.key); break;
  }
  // A key longer than any provider's id would not fit PostgreSQL's index (~2,700 bytes per entry):
  // kept as its hash, in the typed form no JSON string can equal.
  if (key && key->size() > kMaxPlainDedupKey) key = "\xFFsha256:" + HexEncode(Sha256(*key));
  return key;
}

std::string StoredOrderKey(std::string value) {
  bool plain = value.size() <= kMaxPlainOrderKey && http::IsValidUtf8(value);
  for (size_t i = 0; plain && i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    plain = c >= 0x20 && c != 0x7f;
  }
  if (plain) return value;
  return "sha256:" + HexEncode(Sha256(value));
}

std::optional<std::string> OrderKeyOf(const model::Destination& d, const http::RequestHead& head,
                                      std::string_view body, std::optional<json::value>& parsed) {
  if (!d.ordered) return std::nullopt;
  switch (d.order_key.kind) {
    case model::OrderKey::Kind::kNone: return std::string();
    case model::OrderKey::Kind::kHeader: {
      auto v = head.Header(d.order_key.name);
      if (!v || v->empty()) return std::nullopt;
      return StoredOrderKey(std::string(*v));
    }
    case model::OrderKey::Kind::kJson: break;
  }
  const json::value* at = ParsedBody(body, parsed);
  std::string_view path = d.order_key.name;
  while (at) {
    const size_t dot = path.find('.');
    const std::string_view member = path.substr(0, dot);
    at = at->is_object() ? at->as_object().if_contains(member) : nullptr;
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  if (!at) return std::nullopt;
  if (at->is_string()) {
    if (at->as_string().empty()) return std::nullopt;
    return StoredOrderKey(std::string(at->as_string()));
  }
  if (at->is_number() || at->is_bool()) return StoredOrderKey(json::serialize(*at));
  return std::nullopt;
}

const json::value* ParsedBody(std::string_view body, std::optional<json::value>& parsed) {
  if (!parsed) {
    boost::system::error_code ec;
    json::value v = json::parse(json::string_view(body.data(), body.size()), ec);
    parsed = ec ? json::value() : std::move(v);
  }
  // A body that is not JSON is kept as null, which no JSON body parses to but "null" itself:
  // to a filter, both have no fields.
  return parsed->is_null() ? nullptr : &*parsed;
}

Duration DedupWindow(const model::Catalog& catalog, const std::string& source) {
  Duration window{0};
  for (const model::Destination* d : catalog.DestinationsOf(source)) {
    window = std::max(window, d->policy.replay_window);
  }
  return window.count() > 0 ? window : std::chrono::hours(24 * 30);
}

store::NewEvent BuildEvent(const model::Catalog& catalog, const model::Source& source,
                           http::Request request, TimePoint now) {
  store::NewEvent e;
  e.source = source.name;
  e.received_at = now;
  e.content_type = std::string(request.Header("Content-Type").value_or(""));
  e.dedup_key = DedupKey(source.dedup, request, request.body);
  if (e.dedup_key) e.dedup_window = DedupWindow(catalog, source.name);
  // Routes see the headers as they are kept (what the event's page and the dry run show).
  KeepHeaders(request.headers);
  // The body, parsed once when something reads it: the type, a filter, a JSON order key.
  std::optional<json::value> parsed;
  const std::vector<model::Catalog::RouteTo> routes = catalog.RoutesOf(source.name);
  const bool any_filter = std::any_of(
      routes.begin(), routes.end(), [](const auto& r) { return r.route->rule.filter.has_value(); });
  const json::value* body =
      model::TypeNeedsBody(source) || any_filter ? ParsedBody(request.body, parsed) : nullptr;
  e.type = model::EventTypeOf(source, request.headers, body);
  const routing::MatchInput input{request.headers, body};
  for (const auto& [route, d] : routes) {
    if (!route->rule.Matches(e.type, input)) {
      // The reason is worked out again only for a route that did not take the event.
      e.route_misses.push_back({route->id, d->name, route->rule.Match(e.type, input).reason});
      continue;
    }
    store::NewDelivery nd;
    nd.order_key = OrderKeyOf(*d, request, request.body, parsed);
    nd.destination = d->name;
    nd.max_attempts = d->policy.max_attempts;
    nd.next_attempt_at = now;
    nd.status = d->paused ? store::DeliveryStatus::kPaused : store::DeliveryStatus::kScheduled;
    e.deliveries.push_back(std::move(nd));
  }
  e.routed = !e.deliveries.empty();
  e.headers.reserve(request.headers.size());
  for (auto& [name, value] : request.headers)
    e.headers.push_back({std::move(name), std::move(value)});
  e.body = std::move(request.body);
  return e;
}

IngestService::IngestService(model::Registry& registry, store::Store& store, const Clock& clock)
    : registry_(registry), store_(store), clock_(clock) {}

IngestService::~IngestService() {
  MutexLock lock(appends_mu_);
  appends_done_.wait(lock, [this]() REQUIRES(appends_mu_) { return appends_pending_ == 0; });
}

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
    RejectReason reason = RejectReason::kSignatureMismatch;
    Status st = VerifySignature(
        *s->verify, [&](std::string_view name) { return request.Header(name); }, request.body, now,
        &reason);
    if (!st.ok()) {
      stats_.rejected.fetch_add(1, std::memory_order_relaxed);
      spdlog::debug("source {}: request refused (401): {}", s->name, st.message());
      // Counted and queued in memory only: the 401 never waits for the store.
      if (rejections_) rejections_->Record(*s, reason, st.message(), request, now);
      respond(http::JsonError(401, "unauthenticated", st.message()));
      return;
    }
  }
  store::NewEvent event = BuildEvent(*catalog, *s, std::move(request), now);
  {
    MutexLock lock(appends_mu_);
    ++appends_pending_;
  }
  // Released when the store drops the completion (after running it): the destructor waits for it.
  std::shared_ptr<void> pending(nullptr, [this](void*) {
    MutexLock lock(appends_mu_);
    --appends_pending_;
    appends_done_.notify_all();  // under the lock: the destructor cannot free the condvar first
  });
  std::optional<std::string> type = event.type;
  store_.AppendEvent(
      std::move(event), [this, respond = std::move(respond), source, type = std::move(type),
                         pending = std::move(pending)](Result<store::AppendResult> result) {
        if (!result.ok()) {
          stats_.store_failures.fetch_add(1, std::memory_order_relaxed);
          const Status& st = result.status();
          spdlog::warn("source {}: event not stored, answered 503: {}", source, st.message());
          // The sender learns that it must retry, not the store's internals (a file path, a
          // database host): those are in the log line above.
          const bool full = st.code() == Status::Code::kResourceExhausted;
          http::Response r = http::JsonError(
              503, full ? "resource_exhausted" : "unavailable",
              full ? "the event was not stored (the store is full), retry later"
                   : "the event was not stored (the store is unavailable), retry later");
          r.headers.emplace_back("Retry-After", "5");
          respond(std::move(r));
          return;
        }
        (result->duplicate ? stats_.duplicates : stats_.accepted)
            .fetch_add(1, std::memory_order_relaxed);
        if (!result->duplicate) type_counts_.Add(source, type);
        spdlog::debug("source {}: event {} {}", source, result->id,
                      result->duplicate ? "is a duplicate (answered with its id)" : "stored");
        respond(Accepted(result->id, result->duplicate));
        // Once per batch of new events, not once per event: waking the engine for each one cost
        // about a tenth of the CPU at full ingest rate.
        if (!result->duplicate && !result->more_follow && on_stored_) on_stored_();
      });
}

}  // namespace hookrelay::ingest
