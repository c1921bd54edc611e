#include "app/router.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/algorithm/string/predicate.hpp>
#include <boost/json.hpp>
#include <utility>

#include "webui/web_assets.h"

namespace hookrelay::app {

namespace {

bool IsIngest(const http::RequestHead& head) {
  return head.segments.size() == 2 && head.segments[0] == "in" && !head.segments[1].empty();
}

bool IsPath(const http::RequestHead& head, std::string_view name) {
  return head.segments.size() == 1 && head.segments[0] == name;
}

// "/" and "/api/v1" (a trailing slash allowed): indexes that say where things are.
bool IsRootIndex(const http::RequestHead& head) {
  return head.segments.empty() || (head.segments.size() == 1 && head.segments[0].empty());
}

// "/ui" and everything below it: the dashboard's files.
bool IsUi(const http::RequestHead& head) {
  return !head.segments.empty() && head.segments[0] == "ui";
}

bool IsApiIndex(const http::RequestHead& head) {
  return (head.segments.size() == 2 || (head.segments.size() == 3 && head.segments[2].empty())) &&
         head.segments[0] == "api" && head.segments[1] == "v1";
}

std::string RootIndex() {
  boost::json::object o;
  o["service"] = "hookrelay";
  o["ingest"] = "POST /in/{source}";
  o["api"] =
      "/api/v1 (Authorization: Bearer <admin token>: the token printed at the first start, or "
      "HOOKRELAY_TOKEN)";
  o["openapi"] = "/api/v1/openapi.json";
  o["metrics"] = "/metrics";
  o["health"] = "/healthz";
  o["ready"] = "/readyz";
  o["docs"] = "docs/operations.md, docs/api.md and docs/configuration.md in the hookrelay source";
  o["dashboard"] = "/ui/";
  return boost::json::serialize(o);
}

std::string ApiIndex() {
  boost::json::object o;
  o["api"] = "hookrelay management API v1";
  o["authentication"] = "every request below /api/v1 needs Authorization: Bearer <admin token>";
  o["openapi"] = "/api/v1/openapi.json";
  o["docs"] = "docs/api.md in the hookrelay source";
  o["cli"] =
      "hookrelay events list, hookrelay destinations list, ... (HOOKRELAY_URL, HOOKRELAY_TOKEN)";
  return boost::json::serialize(o);
}

http::Response Json(int status, std::string body) {
  http::Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

}  // namespace

Router::Router(ingest::IngestService& ingest, store::Store& store,
               std::function<std::string()> metrics, api::ApiHandler* api, AuthThrottle* throttle,
               AllowedHosts allowed_hosts)
    : ingest_(ingest),
      store_(store),
      metrics_(std::move(metrics)),
      api_(api),
      throttle_(throttle),
      allowed_hosts_(std::move(allowed_hosts)) {}

http::Handler::HeadDecision Router::ApiHead(const http::RequestHead& head) {
  // The token is checked first: a valid one is never refused, whatever its address did.
  HeadDecision d = api_->OnHead(head);
  if (throttle_ == nullptr || !d.reject || d.reject->status != 401) return d;
  if (!head.Header("Authorization")) return d;  // no token: not a guess
  const AuthThrottle::Failure f = throttle_->RecordFailure(head.remote_address);
  if (f.retry_after > Duration(0)) {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(f.retry_after).count();
    http::Response r =
        http::JsonError(429, "too_many_requests",
                        "too many wrong bearer tokens from this address; try again in " +
                            std::to_string(seconds) + "s");
    r.headers.emplace_back("Retry-After", std::to_string(seconds));
    d.reject = std::move(r);
    return d;
  }
  // The presented token is never logged; the path without its query is. At most
  // kWarningsPerWindow lines a window, so a flood of guesses cannot flood the log.
  const int64_t unlogged = warnings_.Take(std::chrono::steady_clock::now());
  if (unlogged < 0) return d;
  if (unlogged > 0) {
    spdlog::warn("management API: {} more wrong bearer tokens were not logged one by one",
                 unlogged);
  }
  if (f.blocked_for > Duration(0)) {
    spdlog::warn(
        "management API: wrong bearer token from {} ({} {}); {} wrong tokens, address blocked "
        "for {}s (for wrong tokens only)",
        head.remote_address, head.method, head.path, throttle_->options().max_failures,
        std::chrono::duration_cast<std::chrono::seconds>(f.blocked_for).count());
  } else {
    spdlog::warn("management API: wrong bearer token from {} ({} {}); {} of {} before a block",
                 head.remote_address, head.method, head.path, f.failures,
                 throttle_->options().max_failures);
  }
  return d;
}

int64_t Router::WarningBudget::Take(std::chrono::steady_clock::time_point now) {
  MutexLock lock(mu_);
  if (now - window_start_ >= kWindow) {
    window_start_ = now;
    used_ = 0;
  }
  if (used_ >= kWarningsPerWindow) {
    ++unlogged_;
    return -1;
  }
  ++used_;
  return std::exchange(unlogged_, 0);
}

// Every response but the dashboard's files (which are revalidated by ETag): nothing of it is
// cached (tokens' answers, metrics, events), and no browser guesses a type other than the one
// sent.
static void AddNoStoreHeaders(http::Response& r) {
  for (const std::pair<const char*, const char*>& header :
       {std::pair{"X-Content-Type-Options", "nosniff"}, std::pair{"Cache-Control", "no-store"}}) {
    const bool present = std::any_of(r.headers.begin(), r.headers.end(), [&](const auto& h) {
      return boost::algorithm::iequals(h.first, header.first);
    });
    if (!present) r.headers.emplace_back(header.first, header.second);
  }
}

http::Handler::HeadDecision Router::OnHead(const http::RequestHead& head) {
  if (!allowed_hosts_.empty() && !IsPath(head, "healthz") && !IsPath(head, "readyz")) {
    const std::optional<std::string_view> host = head.Header("Host");
    if (!allowed_hosts_.Allows(host)) {
      // 421 Misdirected Request (RFC 9110 §15.5.20): this server does not answer for that name.
      HeadDecision d;
      d.reject = http::JsonError(
          421, "misdirected_request",
          host ? "Host \"" + std::string(host->substr(0, 256)) +
                     "\" is not one of this server's allowed_hosts"
               : std::string("the request has no Host header field, and this server only "
                             "answers for its allowed_hosts"),
          "Host");
      AddNoStoreHeaders(*d.reject);
      return d;
    }
  }
  HeadDecision d = Decide(head);
  if (d.reject && !IsUi(head)) AddNoStoreHeaders(*d.reject);
  return d;
}

http::Handler::HeadDecision Router::Decide(const http::RequestHead& head) {
  HeadDecision d;
  if (IsRootIndex(head) || (api_ && IsApiIndex(head)) || IsUi(head)) {
    if (head.method != "GET" && head.method != "HEAD") {
      http::Response r = http::JsonError(405, "method_not_allowed", "use GET");
      r.headers.emplace_back("Allow", "GET, HEAD");
      d.reject = std::move(r);
    }
    return d;
  }
  if (api_ && api::ApiHandler::Matches(head)) return ApiHead(head);
  if (IsIngest(head)) return ingest_.OnHead(head, head.segments[1]);
  if (IsPath(head, "healthz") || IsPath(head, "readyz") || IsPath(head, "metrics")) {
    if (head.method != "GET" && head.method != "HEAD") {
      http::Response r = http::JsonError(405, "method_not_allowed", "use GET");
      r.headers.emplace_back("Allow", "GET, HEAD");
      d.reject = std::move(r);
    }
    return d;
  }
  d.reject = http::JsonError(404, "not_found", "no such path: " + head.path);
  return d;
}

void Router::OnRequest(http::Request request, http::Responder respond) {
  if (IsRootIndex(request)) {
    // A browser goes to the dashboard; curl without -L still reads where everything is.
    http::Response r = Json(302, RootIndex());
    r.headers.emplace_back("Location", "/ui/");
    respond(std::move(r));
    return;
  }
  if (IsUi(request)) {
    if (request.segments.size() == 1) {  // "/ui": relative URLs in the page need the slash
      http::Response r;
      r.headers = webui::SecurityHeaders();
      r.status = 301;
      r.content_type = "text/plain; charset=utf-8";
      r.body = "the dashboard is at /ui/\n";
      r.headers.emplace_back("Location", "/ui/");
      respond(std::move(r));
      return;
    }
    // The files are named by path segments: an encoded slash ("js%2Fapp.js") is part of a
    // name, not a separator, so no file has it (and "..", "." or a backslash name none either).
    std::string rest;
    bool encoded_slash = false;
    for (size_t i = 1; i < request.segments.size(); ++i) {
      if (i > 1) rest += '/';
      rest += request.segments[i];
      encoded_slash |= request.segments[i].find('/') != std::string::npos;
    }
    respond(encoded_slash ? webui::NotFound()
                          : webui::Serve(rest, request.Header("If-None-Match").value_or("")));
    return;
  }
  respond = [inner = std::move(respond)](http::Response r) {
    AddNoStoreHeaders(r);
    inner(std::move(r));
  };
  if (api_ && IsApiIndex(request)) {
    respond(Json(200, ApiIndex()));
    return;
  }
  if (api_ && api::ApiHandler::Matches(request)) {
    api_->Handle(std::move(request), std::move(respond));
    return;
  }
  if (IsIngest(request)) {
    std::string source = request.segments[1];
    ingest_.Handle(std::move(request), source, std::move(respond));
    return;
  }
  if (IsPath(request, "healthz")) {
    respond(Json(200, R"({"status":"ok"})"));
    return;
  }
  if (IsPath(request, "metrics")) {
    http::Response r;
    r.content_type = "text/plain; version=0.0.4";
    r.body = metrics_ ? metrics_() : std::string();
    respond(std::move(r));
    return;
  }
  if (IsPath(request, "readyz")) {
    if (draining_.load()) {
      respond(http::JsonError(503, "unavailable", "shutting down"));
      return;
    }
    // CheckReady's message says what kind of failure it is, never where the store is (this
    // endpoint is not authenticated); the details are in the log.
    if (Status ready = store_.CheckReady(); !ready.ok()) {
      respond(http::JsonError(503, "unavailable", "store: " + ready.message()));
      return;
    }
    respond(Json(200, R"({"status":"ready"})"));
    return;
  }
  respond(http::JsonError(404, "not_found", "no such path: " + request.path));
}

}  // namespace hookrelay::app
