#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "api/api_handler.h"
#include "app/auth_throttle.h"
#include "http/server.h"
#include "ingest/ingest_service.h"
#include "store/store.h"

namespace hookrelay::app {

// The one HTTP handler: dispatches on the path's segments.
//   /in/{source}   ingest (POST)
//   /healthz       the process is up (GET)
//   /readyz        the store answers (Store::CheckReady: why not, without its address) and the
//                  server is not draining (GET)
//   /metrics       Prometheus text (GET)
//   /              redirects to /ui/ (302); the body is an index: where the API, its OpenAPI
//                  document, metrics and docs are (GET)
//   /ui/...        the dashboard's embedded files (webui::Serve), with the security headers
//   /api/v1        the same for the API, without a token (says nothing a stranger may not know)
//   /api/v1/...    the management API, when an ApiHandler is given (asked first); wrong bearer
//                  tokens are logged, counted and throttled per client address (`throttle`:
//                  429 with Retry-After while blocked)
// Everything else is a JSON 404.
class Router final : public http::Handler {
 public:
  // `api` may be null (no management API); it must outlive the Router.
  // `throttle` may be null (no throttling); it must outlive the Router.
  Router(ingest::IngestService& ingest, store::Store& store, std::function<std::string()> metrics,
         api::ApiHandler* api = nullptr, AuthThrottle* throttle = nullptr);

  HeadDecision OnHead(const http::RequestHead& head) override;
  void OnRequest(http::Request request, http::Responder respond) override;

  // After this, /readyz answers 503 so load balancers stop sending (SIGTERM).
  void SetDraining() { draining_.store(true); }

 private:
  // The management API's head check, with the wrong-token throttle around it.
  HeadDecision ApiHead(const http::RequestHead& head);

  ingest::IngestService& ingest_;
  store::Store& store_;
  std::function<std::string()> metrics_;
  api::ApiHandler* api_;
  AuthThrottle* throttle_;
  std::atomic<bool> draining_{false};
};

}  // namespace hookrelay::app
