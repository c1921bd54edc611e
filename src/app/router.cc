#include "app/router.h"

namespace hookrelay::app {

namespace {

bool IsIngest(const http::RequestHead& head) {
  return head.segments.size() == 2 && head.segments[0] == "in" && !head.segments[1].empty();
}

bool IsPath(const http::RequestHead& head, std::string_view name) {
  return head.segments.size() == 1 && head.segments[0] == name;
}

http::Response Json(int status, std::string body) {
  http::Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

}  // namespace

Router::Router(ingest::IngestService& ingest, store::Store& store,
               std::function<std::string()> metrics, api::ApiHandler* api)
    : ingest_(ingest), store_(store), metrics_(std::move(metrics)), api_(api) {}

http::Handler::HeadDecision Router::OnHead(const http::RequestHead& head) {
  if (api_ && api::ApiHandler::Matches(head)) return api_->OnHead(head);
  if (IsIngest(head)) return ingest_.OnHead(head, head.segments[1]);
  HeadDecision d;
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
    auto probe = store_.NextDueAt();
    if (!probe.ok()) {
      respond(http::JsonError(503, "unavailable", "store: " + probe.status().message()));
      return;
    }
    respond(Json(200, R"({"status":"ready"})"));
    return;
  }
  respond(http::JsonError(404, "not_found", "no such path: " + request.path));
}

}  // namespace hookrelay::app
