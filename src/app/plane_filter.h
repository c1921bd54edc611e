#pragma once

#include "http/server.h"

namespace hookrelay::app {

// Which requests one listener serves when ingest and management listen apart ([server] listen
// and admin_listen, docs/operations.md#two-listeners):
//   kIngest      /in/{source} and /healthz: what the internet may reach;
//   kManagement  everything else (/api/v1, /ui/, /metrics, /readyz, /healthz, /), not /in/.
enum class Plane { kIngest, kManagement };

// Whether a listener of `plane` serves the request. Pure.
bool PlaneServes(Plane plane, const http::RequestHead& head);

// A listener's handler: what its plane serves goes to `inner` (the router), anything else is the
// router's own 404 for a path that does not exist, so the ingest listener says nothing about
// what the management one has.
class PlaneFilter final : public http::Handler {
 public:
  PlaneFilter(http::Handler& inner, Plane plane) : inner_(inner), plane_(plane) {}

  HeadDecision OnHead(const http::RequestHead& head) override;
  void OnRequest(http::Request request, http::Responder respond) override;

 private:
  http::Handler& inner_;
  const Plane plane_;
};

}  // namespace hookrelay::app
