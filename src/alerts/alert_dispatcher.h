#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "alerts/alert.h"
#include "alerts/alert_batcher.h"
#include "alerts/alerts_config.h"
#include "common/background_loop.h"
#include "common/clock.h"
#include "common/mutex.h"

namespace hookrelay::alerts {

struct AlertDispatcherOptions {
  // Bound on one email or webhook request (connect included).
  Duration send_timeout = std::chrono::seconds(10);
  // Bound on sending what is still waiting when the dispatcher is destroyed.
  Duration flush_timeout = std::chrono::seconds(10);
  // The thread sleeps through the Clock until the next batch is due, but never longer than this
  // (so a wall clock set forward is noticed).
  Duration max_idle_wait = std::chrono::seconds(1);
  // Alerts ready to go out but not yet sent; beyond this, new ones are dropped and counted
  // (batching keeps the number small unless the mail server hangs for a long time).
  size_t max_pending = 1000;
};

// Sends alerts by email (SMTP) and/or as JSON to a webhook, batched by an AlertBatcher with
// `config.window`. Raise() never blocks on the network: it runs the batcher under a mutex and
// hands anything due to the dispatcher's own thread, which sends it with libcurl.
//
// Failures (server down, rejected, timeout, non-2xx from the webhook) are logged (spdlog,
// warning) as one line (never the password) and counted; nothing is retried and nothing throws.
//
// The destructor sends what is waiting, pending batches included (best effort): it waits for a
// send in progress (at most send_timeout) and then at most flush_timeout more.
//
// Thread-safe. With a disabled config (AlertsConfig::enabled() false) no thread is started and
// Raise() only counts.
class AlertDispatcher : public AlertSink {
 public:
  // `clock` must outlive the dispatcher.
  AlertDispatcher(AlertsConfig config, const Clock& clock, AlertDispatcherOptions options = {});
  ~AlertDispatcher() override;
  AlertDispatcher(const AlertDispatcher&) = delete;
  AlertDispatcher& operator=(const AlertDispatcher&) = delete;

  void Raise(Alert a) override;

  struct Stats {
    int64_t raised = 0;   // Raise() calls
    int64_t sent = 0;     // messages accepted: one per alert per channel (email, webhook)
    int64_t failed = 0;   // messages that could not be sent
    int64_t dropped = 0;  // alerts not sent: queue full, or flush time ran out at shutdown
  };
  Stats stats() const;

  // Stops and sends what is still held, as the destructor does (bounded by flush_timeout), and
  // returns the final counts. Raise only counts afterwards. Idempotent.
  Stats Close();

 private:
  // One pass of the loop: sends what fell due; returns how long until the next may.
  Duration Pass();
  // From the destructor, after the loop stopped: what is ready and every pending batch.
  void FlushAtShutdown();
  // Sends `a` over every configured channel, each bounded by `timeout`.
  void Send(const Alert& a, Duration timeout);
  bool SendEmail(const Alert& a, Duration timeout, std::string& error);
  bool PostWebhook(const Alert& a, Duration timeout, std::string& error);
  void Enqueue(std::vector<Alert> alerts) REQUIRES(mu_);

  const AlertsConfig config_;
  const Clock& clock_;
  const AlertDispatcherOptions options_;

  mutable Mutex mu_;
  AlertBatcher batcher_ GUARDED_BY(mu_);
  std::vector<Alert> ready_ GUARDED_BY(mu_);
  Stats stats_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  BackgroundLoop loop_;
};

// The RFC 5322 message for `a` (CRLF line endings): From, To, Subject, Date, Message-ID,
// MIME-Version, Content-Type text/plain; charset=utf-8, Auto-Submitted, then the body.
// Exposed for tests.
std::string BuildEmail(const Alert& a, const AlertsConfig& config, TimePoint now);

}  // namespace hookrelay::alerts
