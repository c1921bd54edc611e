#include "app/metrics.h"

#include <sstream>

namespace hookrelay::app {

namespace {

void Metric(std::ostringstream& out, const char* name, const char* type, const char* help) {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

// Label values escape backslash, quote and newline.
std::string Label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string RenderMetrics(const ingest::IngestStats& ingest, const delivery::EngineStats& e,
                          const std::map<std::string, delivery::DestinationState>& dests) {
  std::ostringstream out;
  Metric(out, "hookrelay_events_ingested_total", "counter", "Events stored and acknowledged.");
  out << "hookrelay_events_ingested_total " << ingest.accepted.load() << "\n";
  Metric(out, "hookrelay_events_duplicate_total", "counter",
         "Arrivals answered with an earlier event's id (dedup).");
  out << "hookrelay_events_duplicate_total " << ingest.duplicates.load() << "\n";
  Metric(out, "hookrelay_ingest_rejected_total", "counter",
         "Ingest requests refused with a 4xx (unknown source, bad signature, ...).");
  out << "hookrelay_ingest_rejected_total " << ingest.rejected.load() << "\n";
  Metric(out, "hookrelay_ingest_store_failures_total", "counter",
         "Ingest requests answered 503 because the event could not be stored.");
  out << "hookrelay_ingest_store_failures_total " << ingest.store_failures.load() << "\n";

  Metric(out, "hookrelay_deliveries_delivered_total", "counter", "Deliveries that got a 2xx.");
  out << "hookrelay_deliveries_delivered_total " << e.delivered << "\n";
  Metric(out, "hookrelay_deliveries_failed_total", "counter",
         "Deliveries given up (exhausted, past deadline, or not retryable).");
  out << "hookrelay_deliveries_failed_total " << e.failed << "\n";
  Metric(out, "hookrelay_attempts_total", "counter", "HTTP attempts by outcome class.");
  out << "hookrelay_attempts_total{outcome=\"success\"} " << e.attempts_success << "\n"
      << "hookrelay_attempts_total{outcome=\"retryable\"} " << e.attempts_retryable << "\n"
      << "hookrelay_attempts_total{outcome=\"final\"} " << e.attempts_final << "\n";
  Metric(out, "hookrelay_attempt_duration_seconds", "histogram", "Attempt latency.");
  int64_t cumulative = 0;
  for (size_t i = 0; i < e.latency_buckets.size(); ++i) {
    cumulative += e.latency_buckets[i];
    out << "hookrelay_attempt_duration_seconds_bucket{le=\"";
    if (i < std::size(delivery::kLatencyBoundsMs)) {
      out << static_cast<double>(delivery::kLatencyBoundsMs[i]) / 1000.0;
    } else {
      out << "+Inf";
    }
    out << "\"} " << cumulative << "\n";
  }
  out << "hookrelay_attempt_duration_seconds_sum " << static_cast<double>(e.latency_sum_ms) / 1000.0
      << "\nhookrelay_attempt_duration_seconds_count " << cumulative << "\n";
  Metric(out, "hookrelay_attempts_in_flight", "gauge", "Attempts being sent now.");
  out << "hookrelay_attempts_in_flight " << e.in_flight << "\n";
  Metric(out, "hookrelay_due_backlog_oldest_age_seconds", "gauge",
         "Age of the oldest due-but-unsent delivery (0 when none); alerts past the threshold.");
  out << "hookrelay_due_backlog_oldest_age_seconds "
      << static_cast<double>(e.oldest_due_age.count()) / 1000.0 << "\n";
  Metric(out, "hookrelay_due_backlog", "gauge",
         "Scheduled deliveries due now but not yet sent (checked once a second).");
  out << "hookrelay_due_backlog " << e.due_backlog << "\n";
  Metric(out, "hookrelay_breakers_open", "gauge", "Destinations whose breaker is not closed.");
  out << "hookrelay_breakers_open " << e.breakers_open << "\n";

  Metric(out, "hookrelay_destination_allowed_concurrency", "gauge",
         "Adaptive concurrency limit per destination.");
  for (const auto& [name, s] : dests) {
    out << "hookrelay_destination_allowed_concurrency{destination=\"" << Label(name) << "\"} "
        << s.allowed_concurrency << "\n";
  }
  Metric(out, "hookrelay_destination_breaker_state", "gauge",
         "0 closed, 1 open, 2 half-open, per destination.");
  for (const auto& [name, s] : dests) {
    out << "hookrelay_destination_breaker_state{destination=\"" << Label(name) << "\"} "
        << static_cast<int>(s.breaker.state) << "\n";
  }
  Metric(out, "hookrelay_destination_paused", "gauge", "1 when the destination is paused.");
  for (const auto& [name, s] : dests) {
    out << "hookrelay_destination_paused{destination=\"" << Label(name) << "\"} "
        << (s.paused ? 1 : 0) << "\n";
  }
  return out.str();
}

std::string RenderRetentionMetrics(const retention::RetentionStats& stats) {
  std::ostringstream out;
  Metric(out, "hookrelay_retention_purged_events_total", "counter",
         "Events deleted past the replay window (with their deliveries and attempts).");
  out << "hookrelay_retention_purged_events_total " << stats.purged_events << "\n";
  Metric(out, "hookrelay_retention_failed_passes_total", "counter",
         "Retention passes that stopped on a store error.");
  out << "hookrelay_retention_failed_passes_total " << stats.failed_passes << "\n";
  return out.str();
}

std::string RenderAlertMetrics(const alerts::AlertDispatcher::Stats& stats) {
  std::ostringstream out;
  Metric(out, "hookrelay_alerts_raised_total", "counter",
         "Alerts raised (breaker opened or closed, deliveries failed, destination paused, stall).");
  out << "hookrelay_alerts_raised_total " << stats.raised << "\n";
  Metric(out, "hookrelay_alerts_sent_total", "counter",
         "Alert messages accepted by the SMTP server or the alert webhook (one per channel).");
  out << "hookrelay_alerts_sent_total " << stats.sent << "\n";
  Metric(out, "hookrelay_alerts_failed_total", "counter",
         "Alert messages that could not be sent (see the log for why).");
  out << "hookrelay_alerts_failed_total " << stats.failed << "\n";
  Metric(out, "hookrelay_alerts_dropped_total", "counter",
         "Alerts never sent: the queue was full, or time ran out at shutdown.");
  out << "hookrelay_alerts_dropped_total " << stats.dropped << "\n";
  return out.str();
}

}  // namespace hookrelay::app
