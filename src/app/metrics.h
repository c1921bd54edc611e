#pragma once

#include <map>
#include <string>

#include "alerts/alert_dispatcher.h"
#include "app/auth_throttle.h"
#include "delivery/engine.h"
#include "http/server.h"
#include "ingest/ingest_service.h"
#include "retention/retention_job.h"

namespace hookrelay::app {

// Events stored by source, then type (ingest::TypeCounts::Snapshot).
using ReceivedTypes = std::map<std::string, std::map<std::string, int64_t>>;
// The Prometheus text exposition (version 0.0.4) of hookrelay's counters and gauges. Pure.
std::string RenderMetrics(const ingest::IngestStats& ingest, const ReceivedTypes& received_types,
                          const delivery::EngineStats& engine,
                          const std::map<std::string, delivery::DestinationState>& destinations);

// Requests refused because they failed verification, per source and reason (a fixed set: every
// reason is shown for each source that had a rejection), and those counted but not recorded.
std::string RenderRejectionMetrics(const std::map<std::string, ingest::RejectionCounts>& counts);

// Retention counters, in the same format (appended to RenderMetrics' output).
std::string RenderRetentionMetrics(const retention::RetentionStats& stats);

// Alert counters, in the same format (sent, failed and dropped stay 0 when no alert channel
// is configured; raised counts all the same).
std::string RenderAlertMetrics(const alerts::AlertDispatcher::Stats& stats);

// The HTTP server's connection and refusal counters, in the same format.
std::string RenderHttpMetrics(const http::ServerStats& stats);
// Management API authentication counters (wrong tokens, throttled requests), same format.
std::string RenderAuthMetrics(const AuthThrottle::Stats& stats);
// The config reloads: applied, refused, and when the config in use was loaded.
std::string RenderReloadMetrics(uint64_t reloads, uint64_t failures, int64_t last_success_unix);

}  // namespace hookrelay::app
