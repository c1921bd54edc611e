#pragma once

#include <map>
#include <string>

#include "alerts/alert_dispatcher.h"
#include "delivery/engine.h"
#include "http/server.h"
#include "ingest/ingest_service.h"
#include "retention/retention_job.h"

namespace hookrelay::app {

// The Prometheus text exposition (version 0.0.4) of hookrelay's counters and gauges. Pure.
std::string RenderMetrics(const ingest::IngestStats& ingest, const delivery::EngineStats& engine,
                          const std::map<std::string, delivery::DestinationState>& destinations);

// Retention counters, in the same format (appended to RenderMetrics' output).
std::string RenderRetentionMetrics(const retention::RetentionStats& stats);

// Alert counters (all 0 when no alert channel is configured), in the same format.
std::string RenderAlertMetrics(const alerts::AlertDispatcher::Stats& stats);

// The HTTP server's connection and refusal counters, in the same format.
std::string RenderHttpMetrics(const http::ServerStats& stats);

}  // namespace hookrelay::app
