#include "app/plane_filter.h"

#include <utility>

namespace hookrelay::app {

namespace {

http::Response NoSuchPath(const http::RequestHead& head) {
  http::Response r = http::JsonError(404, "not_found", "no such path: " + head.path);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

}  // namespace

bool PlaneServes(Plane plane, const http::RequestHead& head) {
  const auto& s = head.segments;
  const bool ingest = s.size() == 2 && s[0] == "in";
  const bool health = s.size() == 1 && s[0] == "healthz";
  switch (plane) {
    case Plane::kIngest: return ingest || health;
    case Plane::kManagement: return !ingest;
  }
  return false;
}

http::Handler::HeadDecision PlaneFilter::OnHead(const http::RequestHead& head) {
  if (PlaneServes(plane_, head)) return inner_.OnHead(head);
  HeadDecision d;
  d.reject = NoSuchPath(head);
  return d;
}

void PlaneFilter::OnRequest(http::Request request, http::Responder respond) {
  // OnHead refused what this plane does not serve; this is only reached for the rest.
  if (!PlaneServes(plane_, request)) {
    respond(NoSuchPath(request));
    return;
  }
  inner_.OnRequest(std::move(request), std::move(respond));
}

}  // namespace hookrelay::app
