#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "api/api_handler.h"
#include "app/allowed_hosts.h"
#include "app/auth_throttle.h"
#include "common/mutex.h"
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
//                  tokens are logged (rate-limited), counted and throttled per client
//                  address (`throttle`: a wrong token gets 429 with Retry-After while its
//                  address is blocked; a valid token is checked first and always passes)
// Everything else is a JSON 404. With `allowed_hosts` set, a request whose Host is not allowed
// gets 421 on every path but /healthz and /readyz (health checks address a node by its IP and
// learn nothing from them), before anything else is looked at.
class Router final : public http::Handler {
 public:
  // `api` may be null (no management API); it must outlive the Router.
  // `throttle` may be null (no throttling); it must outlive the Router.
  Router(ingest::IngestService& ingest, store::Store& store, std::function<std::string()> metrics,
         api::ApiHandler* api = nullptr, AuthThrottle* throttle = nullptr,
         AllowedHosts allowed_hosts = {});

  HeadDecision OnHead(const http::RequestHead& head) override;
  void OnRequest(http::Request request, http::Responder respond) override;

  // After this, /readyz answers 503 so load balancers stop sending (SIGTERM).
  void SetDraining() { draining_.store(true); }

 private:
  // OnHead without the headers every answer but the dashboard's files gets.
  HeadDecision Decide(const http::RequestHead& head);
  // The management API's head check, with the wrong-token throttle around it.
  HeadDecision ApiHead(const http::RequestHead& head);

  // Wrong-token warnings: at most kWarningsPerWindow lines a window; the ones past that are
  // counted and summed up in the next line logged.
  class WarningBudget {
   public:
    // -1: do not log this one. Else log it, after a line saying how many were not logged.
    int64_t Take(std::chrono::steady_clock::time_point now);

   private:
    static constexpr int kWarningsPerWindow = 10;
    static constexpr std::chrono::seconds kWindow{10};
    Mutex mu_;
    std::chrono::steady_clock::time_point window_start_ GUARDED_BY(mu_){};
    int used_ GUARDED_BY(mu_) = 0;
    int64_t unlogged_ GUARDED_BY(mu_) = 0;
  };

  ingest::IngestService& ingest_;
  store::Store& store_;
  std::function<std::string()> metrics_;
  api::ApiHandler* api_;
  AuthThrottle* throttle_;
  const AllowedHosts allowed_hosts_;
  std::atomic<bool> draining_{false};
  WarningBudget warnings_;
};

}  // namespace hookrelay::app
