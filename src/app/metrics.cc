#include "app/metrics.h"

#include <iterator>
#include <sstream>
#include <string>

namespace hookrelay::app {

namespace {

void Metric(std::ostringstream& out, const char* name, const char* type, const char* help) {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

// A metric with one unlabelled sample: HELP, TYPE and the value.
template <typename T>
void Single(std::ostringstream& out, const char* name, const char* type, const char* help,
            T value) {
  Metric(out, name, type, help);
  out << name << " " << value << "\n";
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

// The samples of one latency histogram: cumulative buckets (from per-bucket counts, see
// delivery::kLatencyBoundsMs), sum and count. `labels` (`destination="x",` or empty) comes first
// in every sample's labels.
template <typename Buckets>
void Histogram(std::ostringstream& out, const char* name, const std::string& labels,
               const Buckets& buckets, int64_t sum_ms) {
  int64_t cumulative = 0;
  for (size_t i = 0; i < std::size(buckets); ++i) {
    cumulative += buckets[i];
    out << name << "_bucket{" << labels << "le=\"";
    if (i < std::size(delivery::kLatencyBoundsMs)) {
      out << static_cast<double>(delivery::kLatencyBoundsMs[i]) / 1000.0;
    } else {
      out << "+Inf";
    }
    out << "\"} " << cumulative << "\n";
  }
  // The unlabelled histogram has no braces at all on _sum and _count.
  const std::string braces = labels.empty() ? "" : "{" + labels.substr(0, labels.size() - 1) + "}";
  out << name << "_sum" << braces << " " << static_cast<double>(sum_ms) / 1000.0 << "\n"
      << name << "_count" << braces << " " << cumulative << "\n";
}

}  // namespace

std::string RenderMetrics(const ingest::IngestStats& ingest, const ReceivedTypes& received_types,
                          const delivery::EngineStats& e,
                          const std::map<std::string, delivery::DestinationState>& dests) {
  std::ostringstream out;
  Single(out, "hookrelay_events_ingested_total", "counter", "Events stored and acknowledged.",
         ingest.accepted.load());
  Metric(out, "hookrelay_events_received_total", "counter",
         "Events stored, by source and type (type \"\" when it has none; past 200 types of a "
         "source, the others count as \"other\").");
  for (const auto& [source, types] : received_types) {
    for (const auto& [type, n] : types) {
      out << "hookrelay_events_received_total{source=\"" << Label(source) << "\",type=\""
          << Label(type) << "\"} " << n << "\n";
    }
  }
  Single(out, "hookrelay_events_duplicate_total", "counter",
         "Arrivals answered with an earlier event's id (dedup).", ingest.duplicates.load());
  Single(out, "hookrelay_ingest_rejected_total", "counter",
         "Ingest requests refused with a 4xx (unknown source, bad signature, ...).",
         ingest.rejected.load());
  Single(out, "hookrelay_ingest_store_failures_total", "counter",
         "Ingest requests answered 503 because the event could not be stored.",
         ingest.store_failures.load());

  Single(out, "hookrelay_deliveries_delivered_total", "counter", "Deliveries that got a 2xx.",
         e.delivered);
  Single(out, "hookrelay_deliveries_failed_total", "counter",
         "Deliveries given up (exhausted, past deadline, or not retryable).", e.failed);
  Metric(out, "hookrelay_attempts_total", "counter", "HTTP attempts by outcome class.");
  out << "hookrelay_attempts_total{outcome=\"success\"} " << e.attempts_success << "\n"
      << "hookrelay_attempts_total{outcome=\"retryable\"} " << e.attempts_retryable << "\n"
      << "hookrelay_attempts_total{outcome=\"final\"} " << e.attempts_final << "\n";
  Metric(out, "hookrelay_attempt_duration_seconds", "histogram", "Attempt latency.");
  Histogram(out, "hookrelay_attempt_duration_seconds", "", e.latency_buckets, e.latency_sum_ms);
  Single(out, "hookrelay_attempts_in_flight", "gauge", "Attempts being sent now.", e.in_flight);
  Single(out, "hookrelay_due_backlog_oldest_age_seconds", "gauge",
         "Age of the oldest due-but-unsent delivery (0 when none); alerts past the threshold.",
         static_cast<double>(e.oldest_due_age.count()) / 1000.0);
  Single(out, "hookrelay_due_backlog", "gauge",
         "Scheduled deliveries due now but not yet sent (checked once a second).", e.due_backlog);
  Single(out, "hookrelay_breakers_open", "gauge", "Destinations whose breaker is not closed.",
         e.breakers_open);

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
  // Per destination, for alerting on one failing endpoint. Destinations are those of the
  // catalog: a deleted destination's series go away (its counters restart if it comes back).
  Metric(out, "hookrelay_deliveries_total", "counter",
         "Deliveries finished per destination: delivered (2xx) or failed (given up).");
  for (const auto& [name, s] : dests) {
    out << "hookrelay_deliveries_total{destination=\"" << Label(name)
        << "\",outcome=\"delivered\"} " << s.delivered << "\n"
        << "hookrelay_deliveries_total{destination=\"" << Label(name) << "\",outcome=\"failed\"} "
        << s.failed << "\n";
  }
  Metric(out, "hookrelay_destination_attempts_total", "counter",
         "HTTP attempts per destination by outcome class (success, retryable, final).");
  for (const auto& [name, s] : dests) {
    const std::string l = Label(name);
    out << "hookrelay_destination_attempts_total{destination=\"" << l << "\",outcome=\"success\"} "
        << s.attempts_success << "\n"
        << "hookrelay_destination_attempts_total{destination=\"" << l
        << "\",outcome=\"retryable\"} " << s.attempts_retryable << "\n"
        << "hookrelay_destination_attempts_total{destination=\"" << l << "\",outcome=\"final\"} "
        << s.attempts_final << "\n";
  }
  Metric(out, "hookrelay_destination_due_backlog", "gauge",
         "Deliveries of the destination due now but not yet sent (checked once a second).");
  for (const auto& [name, s] : dests) {
    out << "hookrelay_destination_due_backlog{destination=\"" << Label(name) << "\"} "
        << s.due_backlog << "\n";
  }
  // Bounded like the other per-destination series: only destinations of the catalog, and a
  // deleted destination's histogram goes away with them.
  Metric(out, "hookrelay_destination_attempt_duration_seconds", "histogram",
         "Attempt latency per destination (buckets as hookrelay_attempt_duration_seconds).");
  for (const auto& [name, s] : dests) {
    Histogram(out, "hookrelay_destination_attempt_duration_seconds",
              "destination=\"" + Label(name) + "\",", s.latency_buckets, s.latency_sum_ms);
  }
  return out.str();
}

std::string RenderRejectionMetrics(const std::map<std::string, ingest::RejectionCounts>& counts) {
  std::ostringstream out;
  Metric(out, "hookrelay_ingest_rejections_total", "counter",
         "Requests to /in/{source} refused with 401 because they failed verification, by reason.");
  for (const auto& [source, c] : counts) {
    for (size_t i = 0; i < std::size(ingest::kRejectReasons); ++i) {
      out << "hookrelay_ingest_rejections_total{source=\"" << Label(source) << "\",reason=\""
          << ingest::RejectReasonName(ingest::kRejectReasons[i]) << "\"} " << c.by_reason[i]
          << "\n";
    }
  }
  Metric(out, "hookrelay_ingest_rejections_not_recorded_total", "counter",
         "Rejections counted but not kept for GET /api/v1/sources/{name}/rejections (over the "
         "per-source rate, the queue full, or a store error).");
  for (const auto& [source, c] : counts) {
    out << "hookrelay_ingest_rejections_not_recorded_total{source=\"" << Label(source) << "\"} "
        << c.not_recorded << "\n";
  }
  return out.str();
}

std::string RenderRetentionMetrics(const retention::RetentionStats& stats) {
  std::ostringstream out;
  Single(out, "hookrelay_retention_purged_events_total", "counter",
         "Events deleted past the replay window (with their deliveries and attempts).",
         stats.purged_events);
  Single(out, "hookrelay_retention_purged_rejections_total", "counter",
         "Rejected requests deleted past their age (docs/ingest.md).", stats.purged_rejections);
  Single(out, "hookrelay_retention_failed_passes_total", "counter",
         "Retention passes that stopped on a store error.", stats.failed_passes);
  return out.str();
}

std::string RenderAlertMetrics(const alerts::AlertDispatcher::Stats& stats) {
  std::ostringstream out;
  Single(out, "hookrelay_alerts_raised_total", "counter",
         "Alerts raised (breaker opened or closed, deliveries failed, destination paused, stall).",
         stats.raised);
  Single(out, "hookrelay_alerts_sent_total", "counter",
         "Alert messages accepted by the SMTP server or the alert webhook (one per channel).",
         stats.sent);
  Single(out, "hookrelay_alerts_failed_total", "counter",
         "Alert messages that could not be sent (see the log for why).", stats.failed);
  Single(out, "hookrelay_alerts_dropped_total", "counter",
         "Alerts never sent: the queue was full, or time ran out at shutdown.", stats.dropped);
  return out.str();
}

std::string RenderHttpMetrics(const http::ServerStats& stats) {
  std::ostringstream out;
  Single(out, "hookrelay_http_connections", "gauge", "Open HTTP connections.",
         stats.connections.load());
  Single(out, "hookrelay_http_body_memory_bytes", "gauge",
         "Request body bytes held in memory now (bounded by max_body_memory).",
         stats.body_memory_bytes.load());
  Metric(out, "hookrelay_http_refused_total", "counter",
         "Connections or requests refused by a server limit, by the setting that refused them.");
  out << "hookrelay_http_refused_total{reason=\"max_connections\"} "
      << stats.refused_max_connections.load() << "\n"
      << "hookrelay_http_refused_total{reason=\"max_connections_per_client\"} "
      << stats.refused_max_connections_per_client.load() << "\n"
      << "hookrelay_http_refused_total{reason=\"max_body_memory\"} "
      << stats.refused_max_body_memory.load() << "\n"
      << "hookrelay_http_refused_total{reason=\"max_body_memory_per_client\"} "
      << stats.refused_max_body_memory_per_client.load() << "\n";
  Single(out, "hookrelay_http_idle_closed_total", "counter",
         "Idle connections (no request byte yet) closed to make room for new ones.",
         stats.idle_closed.load());
  Single(out, "hookrelay_http_tls_handshake_failures_total", "counter",
         "Connections to an HTTPS listener closed before a TLS handshake completed: not TLS, no "
         "common protocol or cipher, the client refused the certificate, too slow; a load "
         "balancer's TCP-only health check counts too.",
         stats.tls_handshake_failures.load());
  return out.str();
}

std::string RenderAuthMetrics(const AuthThrottle::Stats& stats) {
  std::ostringstream out;
  Single(out, "hookrelay_api_auth_failures_total", "counter",
         "Management API requests with a wrong bearer token.", stats.failures);
  Single(out, "hookrelay_api_auth_throttled_total", "counter",
         "Management API requests refused with 429: their address sent too many wrong tokens.",
         stats.throttled);
  Single(out, "hookrelay_api_auth_blocks_total", "counter",
         "Times a client address was blocked after too many wrong tokens.", stats.blocks);
  Single(out, "hookrelay_api_auth_tracked_addresses", "gauge",
         "Client addresses with recent wrong tokens being tracked (bounded).", stats.tracked);
  return out.str();
}

std::string RenderReloadMetrics(uint64_t reloads, uint64_t failures, int64_t last_success_unix) {
  std::ostringstream out;
  Single(out, "hookrelay_config_reloads_total", "counter",
         "Config reloads applied (SIGHUP, systemctl reload).", reloads);
  Single(out, "hookrelay_config_reload_failures_total", "counter",
         "Config reloads refused as a whole (the config in use was kept; the log says why).",
         failures);
  Single(out, "hookrelay_config_last_reload_success_timestamp_seconds", "gauge",
         "When the config was last loaded, at start or by a reload (Unix time).",
         last_success_unix);
  return out.str();
}

}  // namespace hookrelay::app
