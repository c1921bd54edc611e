#include "api/openapi.h"

namespace hookrelay::api {

namespace {

constexpr std::string_view kDocument = R"json({
  "openapi": "3.1.0",
  "info": {
    "title": "hookrelay management API",
    "version": "1",
    "description": "The management API: events, destinations, sources, routes, replays, destination controls and the audit trail. Every request needs Authorization: Bearer <admin token> (HOOKRELAY_TOKEN); after too many wrong tokens a client address gets 429 too_many_requests with Retry-After on every request for a while (docs/security.md). GET /api/v1 itself answers without a token with where this document is. Errors are {\"error\": {\"code\", \"message\", \"field\"?}}. An unknown or repeated query parameter (policy and policy_json of /api/v1/simulate repeat), or a cursor the API did not give out, is 400 naming it. Every change is written to the audit trail."
  },
  "servers": [{"url": "/"}],
  "security": [{"bearer": []}],
  "paths": {
    "/api/v1/events": {
      "get": {
        "operationId": "listEvents",
        "summary": "Events, newest first, filtered and paged",
        "parameters": [
          {"name": "status", "in": "query", "schema": {"$ref": "#/components/schemas/DeliveryStatus"},
           "description": "events with a destination whose current delivery (its latest chain) is in this status"},
          {"name": "source", "in": "query", "schema": {"type": "string"}},
          {"name": "destination", "in": "query", "schema": {"type": "string"},
           "description": "events with a delivery to this destination"},
          {"name": "since", "in": "query", "schema": {"type": "string", "format": "date-time"},
           "description": "received_at >= since (RFC 3339)"},
          {"name": "until", "in": "query", "schema": {"type": "string", "format": "date-time"},
           "description": "received_at < until (RFC 3339)"},
          {"name": "cursor", "in": "query", "schema": {"type": "string"},
           "description": "next_cursor of the previous page"},
          {"name": "limit", "in": "query",
           "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}}
        ],
        "responses": {
          "200": {"description": "one page",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EventPage"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"}
        }
      }
    },
    "/api/v1/events/{id}": {
      "get": {
        "operationId": "getEvent",
        "summary": "One event with its deliveries and their attempts",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
                       {"name": "body", "in": "query", "schema": {"type": "boolean", "default": true},
                        "description": "false leaves body_base64 out"}],
        "responses": {
          "200": {"description": "the event",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EventDetail"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"}
        }
      }
    },
    "/api/v1/events/{id}/replay": {
      "post": {
        "operationId": "replayEvent",
        "summary": "Deliver the event again (a new delivery chain, same webhook-id) to all its destinations or one",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "requestBody": {"required": false, "content": {"application/json": {"schema": {
          "type": "object", "additionalProperties": false,
          "properties": {"destination": {"type": "string", "description": "one the event was routed to"}}}}}},
        "responses": {
          "202": {"description": "the new delivery chains",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ReplayResult"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"},
          "409": {"$ref": "#/components/responses/FailedPrecondition"}
        }
      }
    },
    "/api/v1/replays": {
      "get": {
        "operationId": "listBulkReplays",
        "summary": "Bulk replay jobs, newest first, with their progress",
        "parameters": [
          {"name": "cursor", "in": "query", "schema": {"type": "string"},
           "description": "next_cursor of the previous page"},
          {"name": "limit", "in": "query",
           "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}}
        ],
        "responses": {
          "200": {"description": "one page",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ReplayJobPage"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"}
        }
      },
      "post": {
        "operationId": "createBulkReplay",
        "summary": "Replay every event matching a filter, paced at a rate with jitter, as a job any node runs",
        "requestBody": {"required": false, "content": {"application/json": {"schema": {
          "type": "object", "additionalProperties": false,
          "properties": {"status": {"type": "string", "description": "latest chain status to replay; default failed"},
                         "source": {"type": "string"}, "destination": {"type": "string"},
                         "since": {"type": "string", "format": "date-time"},
                         "until": {"type": "string", "format": "date-time"},
                         "rate": {"type": ["string", "number"], "description": "e.g. \"100/s\"; default the destination's rate_limit, else 50/s"}}}}}},
        "responses": {
          "202": {"description": "the queued job",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ReplayJob"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"}
        }
      }
    },
    "/api/v1/replays/{id}": {
      "get": {
        "operationId": "getBulkReplay",
        "summary": "A bulk replay job and its progress",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "200": {"description": "the job",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ReplayJob"}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"}
        }
      },
      "delete": {
        "operationId": "cancelBulkReplay",
        "summary": "Cancel a queued or running bulk replay (chains already created still go out)",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "200": {"description": "the job, cancelled (or as it was, when already finished)",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ReplayJob"}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"}
        }
      }
    },
    "/api/v1/destinations": {
      "get": {
        "operationId": "listDestinations",
        "summary": "Destinations with breaker state, pause and concurrency",
        "responses": {
          "200": {"description": "all destinations",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DestinationList"}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"}
        }
      },
      "post": {
        "operationId": "createDestination",
        "summary": "Create a destination (url, policy, signing_secret, limits, breaker); it is stored and survives restarts",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DestinationInput"}}}},
        "responses": {
          "201": {"description": "the destination as GET shows it; Location names it",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Destination"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "409": {"$ref": "#/components/responses/Conflict"}
        }
      }
    },
    "/api/v1/destinations/{name}": {
      "get": {
        "operationId": "getDestination",
        "summary": "One destination with its live state",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "200": {"description": "the destination",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Destination"}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"}
        }
      },
      "patch": {
        "operationId": "updateDestination",
        "summary": "Change a destination created through the API with a JSON merge patch (RFC 7396): given fields replace, null resets, secrets not mentioned are kept",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "requestBody": {"required": true, "content": {"application/merge-patch+json": {"schema": {"type": "object"}},
                                                     "application/json": {"schema": {"type": "object"}}}},
        "responses": {
          "200": {"description": "the destination after the change",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Destination"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"},
          "409": {"$ref": "#/components/responses/Conflict"}
        }
      },
      "delete": {
        "operationId": "deleteDestination",
        "summary": "Delete a destination created through the API (409 while routes name it or deliveries to it are not final)",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "200": {"description": "the destination that was deleted, as GET showed it",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Destination"}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"},
          "409": {"$ref": "#/components/responses/Conflict"}
        }
      }
    },
    "/api/v1/destinations/{name}/pause": {
      "post": {
        "operationId": "pauseDestination",
        "summary": "Pause: deliveries are kept as paused, nothing is sent (already paused: no change, note \"already paused\")",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "requestBody": {"required": false, "content": {"application/json": {"schema": {
          "type": "object", "additionalProperties": false,
          "properties": {"reason": {"type": ["string", "null"], "minLength": 1}}}}}},
        "responses": {
          "200": {"description": "the destination as GET shows it, after the change",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Destination"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"}
        }
      }
    },
    "/api/v1/destinations/{name}/resume": {
      "post": {
        "operationId": "resumeDestination",
        "summary": "Resume: paused deliveries become due now (slow start); not paused: no change, note \"not paused\"",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "requestBody": {"required": false, "content": {"application/json": {"schema": {
          "type": "object", "additionalProperties": false}}}},
        "responses": {
          "200": {"description": "the destination as GET shows it, after the change",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Destination"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"}
        }
      }
    },
    "/api/v1/destinations/{name}/reset-breaker": {
      "post": {
        "operationId": "resetBreaker",
        "summary": "Close the circuit breaker and send again (slow start)",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "requestBody": {"required": false, "content": {"application/json": {"schema": {
          "type": "object", "additionalProperties": false}}}},
        "responses": {
          "200": {"description": "the destination as GET shows it, after the change",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Destination"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"}
        }
      }
    },
    "/api/v1/destinations/{name}/schedule": {
      "get": {
        "operationId": "getDestinationSchedule",
        "summary": "What the destination's retry policy does when every attempt fails (as hookrelay schedule --json)",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "200": {"description": "the effective policy, the planned attempts (seconds after the first) and when it gives up",
                  "content": {"application/json": {"schema": {"type": "object", "required": ["policy", "attempts", "gives_up"],
                    "properties": {"policy": {"type": "object"},
                      "attempts": {"type": "array", "items": {"type": "object", "properties": {
                        "n": {"type": "integer"}, "delay_s": {"type": "number"}, "at_s": {"type": "number"}}}},
                      "gives_up": {"type": "object", "properties": {"after_s": {"type": "number"},
                        "kind": {"type": "string"}, "reason": {"type": "string"}}}}}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"}
        }
      }
    },
    "/api/v1/sources": {
      "get": {
        "operationId": "listSources",
        "summary": "Sources (secrets shown as counts)",
        "responses": {
          "200": {"description": "all sources",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/List"}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"}
        }
      },
      "post": {
        "operationId": "createSource",
        "summary": "Create a source (verify, dedup, max_body); it is stored and survives restarts",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SourceInput"}}}},
        "responses": {
          "201": {"description": "the source as GET shows it; Location names it",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Source"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "409": {"$ref": "#/components/responses/Conflict"}
        }
      }
    },
    "/api/v1/sources/{name}": {
      "get": {
        "operationId": "getSource",
        "summary": "One source (secrets shown as counts)",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "200": {"description": "the source",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Source"}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"}
        }
      },
      "patch": {
        "operationId": "updateSource",
        "summary": "Change a source created through the API with a JSON merge patch (RFC 7396): given fields replace, null resets, secrets not mentioned are kept",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "requestBody": {"required": true, "content": {"application/merge-patch+json": {"schema": {"type": "object"}},
                                                     "application/json": {"schema": {"type": "object"}}}},
        "responses": {
          "200": {"description": "the source after the change",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Source"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"},
          "409": {"$ref": "#/components/responses/Conflict"}
        }
      },
      "delete": {
        "operationId": "deleteSource",
        "summary": "Delete a source created through the API (409 while routes name it)",
        "parameters": [{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "200": {"description": "the source that was deleted, as GET showed it",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Source"}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"},
          "409": {"$ref": "#/components/responses/Conflict"}
        }
      }
    },
    "/api/v1/routes": {
      "get": {
        "operationId": "listRoutes",
        "summary": "Routes (source to destination)",
        "responses": {
          "200": {"description": "all routes",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/List"}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"}
        }
      },
      "post": {
        "operationId": "createRoute",
        "summary": "Create a route (every event of the source goes to the destination); it is stored and survives restarts",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RouteInput"}}}},
        "responses": {
          "201": {"description": "the route as GET shows it; Location names it",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Route"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "409": {"$ref": "#/components/responses/Conflict"}
        }
      }
    },
    "/api/v1/routes/{id}": {
      "get": {
        "operationId": "getRoute",
        "summary": "One route",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "200": {"description": "the route",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Route"}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"}
        }
      },
      "delete": {
        "operationId": "deleteRoute",
        "summary": "Delete a route created through the API (routes are not patched: PATCH is 405; delete and create). An old id \"source->destination\" finds the route now called \"source:destination\"",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "200": {"description": "the route that was deleted, as GET showed it",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Route"}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"},
          "409": {"$ref": "#/components/responses/Conflict"}
        }
      }
    },
    "/api/v1/sources/{name}/rejections": {
      "get": {
        "operationId": "listSourceRejections",
        "summary": "Requests to /in/{name} refused with 401 because they failed verification, newest first: reason, headers without credentials, the body's size and SHA-256 (never the body). A bounded sample is kept (docs/ingest.md); counts are exact since the process started",
        "parameters": [
          {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "cursor", "in": "query", "schema": {"type": "string"},
           "description": "next_cursor of the previous page"},
          {"name": "limit", "in": "query",
           "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}}
        ],
        "responses": {
          "200": {"description": "one page",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RejectionPage"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"}
        }
      }
    },
    "/api/v1/audit": {
      "get": {
        "operationId": "listAudit",
        "summary": "The audit trail, newest first: who changed what",
        "parameters": [
          {"name": "cursor", "in": "query", "schema": {"type": "string"},
           "description": "next_cursor of the previous page"},
          {"name": "limit", "in": "query",
           "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}}
        ],
        "responses": {
          "200": {"description": "one page",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AuditPage"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"}
        }
      }
    },
    "/api/v1/stats": {
      "get": {
        "operationId": "getStats",
        "summary": "Events received, deliveries delivered and failed, and attempts, per step over a window; the due backlog",
        "description": "Read from per-minute counters the store keeps as events arrive and attempts are recorded (never by scanning events). Steps end with the current minute; every step has a point.",
        "parameters": [
          {"name": "window", "in": "query", "schema": {"type": "string", "default": "1h"},
           "description": "a duration of whole minutes, 1m to 7d"},
          {"name": "step", "in": "query", "schema": {"type": "string", "default": "1m"},
           "description": "a duration of whole minutes, 1m to the window; at most 1440 steps"}
        ],
        "responses": {
          "200": {"description": "the counts",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Stats"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"}
        }
      }
    },
    "/api/v1/simulate": {
      "get": {
        "operationId": "simulateHerd",
        "summary": "The thundering-herd simulation: what retry policies send to an endpoint recovering from an outage (as hookrelay simulate herd --json)",
        "description": "Simulated time, no I/O: events fail at random within fail_window, the endpoint refuses connections until recover_at and then serves capacity requests per second (the rest get 503). Limits: at most 100000 events, 10 policies, and 5000000 simulated requests counted as events x max_attempts summed over the policies; beyond them 400 naming the field. Runs that may simulate more than 200000 requests go one at a time: another meanwhile gets 429 with Retry-After. Strategies: the destination's policy first (destination=), then policy= and policy_json= in the order given; none of them: no jitter, full, equal and decorrelated jitter and the presets.",
        "parameters": [
          {"name": "events", "in": "query", "schema": {"type": "integer", "default": 500, "minimum": 1, "maximum": 100000}},
          {"name": "fail_window", "in": "query", "schema": {"type": "string", "default": "60s"}, "description": "a duration; 1s: a burst"},
          {"name": "recover_at", "in": "query", "schema": {"type": "string", "default": "4m"}, "description": "a duration, not before fail_window"},
          {"name": "capacity", "in": "query", "schema": {"type": "string", "default": "50/s"}, "description": "a whole number of requests per second: 50/s, 3000/m"},
          {"name": "seed", "in": "query", "schema": {"type": "integer", "default": 1, "minimum": 0}},
          {"name": "destination", "in": "query", "schema": {"type": "string"}, "description": "compare this destination's configured policy"},
          {"name": "policy", "in": "query", "schema": {"type": "array", "items": {"type": "string", "enum": ["default", "free", "pro", "scale"]}},
           "style": "form", "explode": true, "description": "a preset to compare (repeatable)"},
          {"name": "policy_json", "in": "query", "schema": {"type": "array", "items": {"type": "string"}},
           "style": "form", "explode": true, "description": "a policy as JSON to compare (repeatable)"}
        ],
        "responses": {
          "200": {"description": "the scenario and, per strategy, the figures and the requests per second",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Herd"}}}},
          "400": {"$ref": "#/components/responses/InvalidArgument"},
          "401": {"$ref": "#/components/responses/Unauthenticated"},
          "404": {"$ref": "#/components/responses/NotFound"},
          "429": {"description": "another large simulation is running; retry after Retry-After seconds",
                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        }
      }
    },
    "/api/v1/openapi.json": {
      "get": {
        "operationId": "getOpenApi",
        "summary": "This document",
        "responses": {
          "200": {"description": "OpenAPI 3.1", "content": {"application/json": {"schema": {"type": "object"}}}},
          "401": {"$ref": "#/components/responses/Unauthenticated"}
        }
      }
    }
  },
  "components": {
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
    "responses": {
      "InvalidArgument": {"description": "a query parameter, path id or body field is invalid or unknown; field names it",
                          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
      "Unauthenticated": {"description": "no or wrong bearer token",
                          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
      "FailedPrecondition": {"description": "valid, but not possible now (e.g. past the replay window)",
                             "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
      "Conflict": {"description": "the name is taken, the object is defined in the config file, or it is still in use (routes, deliveries not final)",
                   "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
      "NotFound": {"description": "no such event, destination or source",
                   "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    },
    "schemas": {
      "StatsCounts": {"type": "object", "properties": {
        "received": {"type": "integer", "description": "events received"},
        "delivered": {"type": "integer", "description": "deliveries that became delivered"},
        "failed": {"type": "integer", "description": "deliveries that failed for good"},
        "attempts": {"type": "integer"},
        "attempt_failures": {"type": "integer", "description": "attempts that did not deliver"}}},
      "Stats": {"type": "object", "required": ["window", "step", "since", "until", "points", "totals", "destinations", "due"],
        "properties": {
          "window": {"type": "string"}, "step": {"type": "string"},
          "since": {"type": "string", "format": "date-time"}, "until": {"type": "string", "format": "date-time"},
          "points": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/StatsCounts"},
            {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}]}},
          "totals": {"$ref": "#/components/schemas/StatsCounts"},
          "destinations": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/StatsCounts"},
            {"type": "object", "properties": {"name": {"type": "string"}}}]}},
          "due": {"type": "object", "properties": {"count": {"type": "integer", "description": "scheduled deliveries due now"},
            "oldest_due_at": {"type": ["string", "null"], "format": "date-time", "description": "the oldest of them: a stalled engine shows here"}}}}},

      "Herd": {
        "type": "object", "required": ["scenario", "strategies"],
        "properties": {
          "scenario": {"type": "object", "required": ["events", "fail_window", "recover_at", "capacity", "capacity_per_second", "seed"],
            "properties": {"events": {"type": "integer"}, "fail_window": {"type": "string"}, "recover_at": {"type": "string"},
                           "capacity": {"type": "string"}, "capacity_per_second": {"type": "integer"}, "seed": {"type": "integer"}}},
          "strategies": {"type": "array", "items": {"type": "object",
            "required": ["strategy", "policy", "peak_per_second", "p99_per_second", "requests", "failed_requests", "delivered", "exhausted", "drain_seconds", "peak_failures_per_second", "arrivals_per_second"],
            "properties": {"strategy": {"type": "string"}, "policy": {"type": "object"},
              "peak_per_second": {"type": "integer", "description": "the most requests in one second from the recovery on"},
              "p99_per_second": {"type": "integer"}, "requests": {"type": "integer"}, "failed_requests": {"type": "integer"},
              "delivered": {"type": "integer"}, "exhausted": {"type": "integer"},
              "drain_seconds": {"type": "number", "description": "from the recovery until every event is delivered or given up"},
              "peak_failures_per_second": {"type": "integer"},
              "arrivals_per_second": {"type": "array", "description": "[second, requests] for each second with a request, in order",
                "items": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}}}}}
        }
      },
      "Error": {
        "type": "object", "required": ["error"],
        "properties": {"error": {"type": "object", "required": ["code", "message"],
          "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "field": {"type": "string"}}}}
      },
      "DeliveryStatus": {"type": "string", "enum": ["scheduled", "delivering", "delivered", "failed", "paused"]},
      "Time": {"type": "string", "format": "date-time"},
      "NullableTime": {"type": ["string", "null"], "format": "date-time"},
      "List": {
        "type": "object", "required": ["items", "next_cursor"],
        "properties": {"items": {"type": "array", "items": {"type": "object"}},
                       "next_cursor": {"type": ["string", "null"]}}
      },
      "EventSummary": {
        "type": "object", "required": ["id", "source", "received_at", "size", "deliveries"],
        "properties": {"id": {"type": "string"}, "source": {"type": "string"},
                       "received_at": {"$ref": "#/components/schemas/Time"}, "size": {"type": "integer"},
                       "deliveries": {"type": "array", "description": "each destination's current delivery (its latest chain)",
                         "items": {"type": "object", "required": ["destination", "status", "chain", "paused_by", "breaker_open_until"],
                           "properties": {"destination": {"type": "string"},
                                          "status": {"$ref": "#/components/schemas/DeliveryStatus"},
                                          "chain": {"type": "integer"},
                                          "paused_by": {"$ref": "#/components/schemas/PausedBy"},
                                          "breaker_open_until": {"$ref": "#/components/schemas/NullableTime", "description": "paused_by breaker while the breaker is open: when it half-opens (one probe goes); null otherwise"}}}}}
      },
      "PausedBy": {
        "type": ["string", "null"], "enum": ["breaker", "operator", "gone", "config", null],
        "description": "while status is paused, what holds the delivery back: breaker (the destination's circuit breaker is open or half-open; the destination itself is not paused), operator (paused through the API or CLI: resume it), gone (paused by the engine after the endpoint answered 410 Gone: fix it, then resume), config (paused = true in the destination's definition); null when not paused"
      },
      "EventPage": {
        "type": "object", "required": ["items", "next_cursor"],
        "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/EventSummary"}},
                       "next_cursor": {"type": ["string", "null"]}}
      },
      "Attempt": {
        "type": "object",
        "required": ["n", "started_at", "duration_ms", "status_code", "error", "retry_after", "probe", "counted"],
        "properties": {"n": {"type": "integer", "description": "the attempt's number among all of the delivery's attempts, probes not counted included"},
                       "started_at": {"$ref": "#/components/schemas/Time"},
                       "probe": {"type": "boolean", "description": "sent as the circuit breaker's half-open probe"},
                       "counted": {"type": "boolean", "description": "counts toward max_attempts (and the delivery's attempt); false for a probe that failed: the breaker's question, not the event's"},
                       "duration_ms": {"type": "integer"}, "status_code": {"type": ["integer", "null"]},
                       "error": {"type": ["string", "null"]}, "retry_after": {"type": ["string", "null"]},
                       "response_snippet": {"type": ["string", "null"],
                                            "description": "the first 4 KiB of the response body: text when UTF-8, else base64 (see response_snippet_encoding); null when empty or no response"},
                       "response_snippet_encoding": {"type": "string", "enum": ["utf-8", "base64"],
                                                     "description": "present when response_snippet is not null"}}
      },
      "Delivery": {
        "type": "object",
        "required": ["destination", "status", "attempt", "max_attempts", "next_attempt_at", "deadline",
                     "reason", "chain", "attempts", "paused_by", "breaker_open_until"],
        "properties": {
          "destination": {"type": "string"},
          "status": {"$ref": "#/components/schemas/DeliveryStatus"},
          "attempt": {"type": "integer", "description": "attempts made so far that count toward max_attempts (attempt k of max_attempts); failed breaker probes are not counted"},
          "max_attempts": {"type": "integer"},
          "next_attempt_at": {"$ref": "#/components/schemas/NullableTime", "description": "null unless scheduled"},
          "deadline": {"$ref": "#/components/schemas/NullableTime"},
          "reason": {"type": ["string", "null"]},
          "chain": {"type": "integer", "description": "0 for the original delivery, 1, 2, … for replays"},
          "order_key": {"type": ["string", "null"], "description": "ordered delivery: the key of the queue it is in (\"\" when the destination is ordered as a whole); null when unordered"},
          "held_behind": {"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/OrderHead"}],
                          "description": "an ordered delivery waiting for its queue's head (the delivery it waits for); null otherwise"},
          "attempts": {"type": "array", "items": {"$ref": "#/components/schemas/Attempt"}},
          "paused_by": {"$ref": "#/components/schemas/PausedBy"},
          "breaker_open_until": {"$ref": "#/components/schemas/NullableTime", "description": "paused_by breaker while the breaker is open: when it half-opens; null otherwise"}
        }
      },
      "OrderHead": {
        "type": "object", "description": "the head of an ordered queue: the oldest delivery of its key not final, which the others wait for",
        "required": ["event", "chain", "status", "attempt", "max_attempts", "next_attempt_at", "reason"],
        "properties": {"event": {"type": "string"}, "chain": {"type": "integer"},
                       "status": {"$ref": "#/components/schemas/DeliveryStatus"},
                       "attempt": {"type": "integer"}, "max_attempts": {"type": "integer"},
                       "next_attempt_at": {"$ref": "#/components/schemas/NullableTime"},
                       "reason": {"type": ["string", "null"], "description": "why its last attempt failed, or why it is paused"}}
      },
      "EventDetail": {
        "type": "object",
        "required": ["id", "source", "received_at", "size", "headers", "deliveries"],
        "properties": {
          "id": {"type": "string"}, "source": {"type": "string"},
          "received_at": {"$ref": "#/components/schemas/Time"}, "size": {"type": "integer"},
          "headers": {"type": "array", "items": {"type": "array", "items": {"type": "string"},
                                                 "minItems": 2, "maxItems": 2},
                      "description": "as received; values of credential-like names (Authorization, Cookie, *token*, *signature*, …) are \"(redacted)\"; bytes that are not UTF-8 are shown as Latin-1 (0xFF as U+00FF)"},
          "body_base64": {"type": "string", "description": "absent with ?body=false"},
          "deliveries": {"type": "array", "items": {"$ref": "#/components/schemas/Delivery"}}
        }
      },
      "Destination": {
        "type": "object",
        "description": "the destination JSON of the config (signing_secret shown as signing_secret_set; credential-like header values and URL query values shown as (redacted)) plus live state",
        "required": ["name", "url", "signing_secret_set", "breaker", "paused", "allowed_concurrency"],
        "properties": {
          "name": {"type": "string"}, "url": {"type": "string"},
          "signing_secret_set": {"type": "boolean"},
          "breaker": {"type": "object", "required": ["state", "consecutive_failures", "open_until", "trips"],
                      "properties": {"state": {"type": "string", "enum": ["closed", "open", "half_open"]},
                                     "consecutive_failures": {"type": "integer"},
                                     "open_until": {"$ref": "#/components/schemas/NullableTime", "description": "when the open period ends; null unless open"},
                                     "probe_sent_at": {"type": "string", "format": "date-time", "description": "half_open only, while its one probe is out: when it went; a probe with no result 10 minutes after it (its node stopped) is replaced by a new one"},
                                     "trips": {"type": "integer"}}},
          "breaker_settings": {"type": "object", "description": "the breaker as configured",
                               "properties": {"threshold": {"type": "integer", "description": "consecutive failed attempts that open it"},
                                              "open": {"type": "array", "items": {"type": "string"}, "description": "open periods; the last repeats"},
                                              "escalation_reset": {"type": "string", "description": "after this long closed, the next trip starts from the first period"}}},
          "paused": {"type": "boolean"}, "paused_reason": {"type": ["string", "null"]},
          "allowed_concurrency": {"type": "integer"}, "in_flight": {"type": "integer"},
          "latency": {"type": "object", "description": "attempt latency of the destination's last 1000 attempts made by this process (since it started; reset when the destination is deleted): nearest-rank percentiles of those samples, null until one attempt was timed",
                      "required": ["p50_ms", "p99_ms", "samples"],
                      "properties": {"p50_ms": {"type": ["integer", "null"]},
                                     "p99_ms": {"type": ["integer", "null"]},
                                     "samples": {"type": "integer", "description": "attempts the percentiles are of (at most 1000)"}}},
          "note": {"type": "string", "description": "only when pause or resume changed nothing: \"already paused\", \"not paused\""},
          "held": {"type": "object", "description": "one destination's view only (not in the list): its ordered queues whose head holds deliveries back, the longest waiting first (at most 20; total counts all)",
                   "required": ["total", "queues"],
                   "properties": {"total": {"type": "integer"},
                                  "queues": {"type": "array", "items": {"type": "object",
                                             "required": ["order_key", "head", "waiting", "waiting_since"],
                                             "properties": {"order_key": {"type": "string", "description": "\"\" when the destination is ordered as a whole"},
                                                            "head": {"$ref": "#/components/schemas/OrderHead"},
                                                            "waiting": {"type": "integer", "description": "deliveries behind the head"},
                                                            "waiting_since": {"type": "string", "format": "date-time", "description": "when the oldest of them was queued (received, or made by a replay)"}}}}}},
          "forward_headers": {"oneOf": [{"type": "string", "enum": ["all", "none"]},
                                        {"type": "array", "items": {"type": "string"}}]},
          "secret_headers": {"type": "array", "items": {"type": "string"}},
          "tls": {"type": ["object", "null"], "description": "the client certificate (a summary), whether a key is set (never the key), the CA bundle's certificates; null when no tls is set",
                  "properties": {"client_cert": {"type": ["object", "null"],
                                                 "properties": {"subject": {"type": "string"}, "issuer": {"type": "string"},
                                                                "not_after": {"type": "string", "format": "date-time"},
                                                                "sha256": {"type": "string", "description": "of the certificate's DER, hex"}}},
                                 "client_key_set": {"type": "boolean"},
                                 "ca_file": {"type": ["object", "null"],
                                             "properties": {"certificates": {"type": "integer"},
                                                            "subjects": {"type": "array", "items": {"type": "string"}}}}}},
          "auth": {"type": ["object", "null"], "description": "the credential's kind (and a basic credential's username), never the token or password; null when none",
                   "properties": {"type": {"type": "string", "enum": ["bearer", "basic"]}, "username": {"type": "string"}}}
        }
      },
      "DestinationList": {
        "type": "object", "required": ["items", "next_cursor"],
        "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/Destination"}},
                       "next_cursor": {"type": "null"}}
      },
      "ReplayResult": {
        "type": "object", "required": ["event", "replays"],
        "properties": {"event": {"type": "string"},
                       "replays": {"type": "array", "items": {"type": "object",
                         "required": ["destination", "chain", "delivery_id"],
                         "properties": {"destination": {"type": "string"}, "chain": {"type": "integer"},
                                        "delivery_id": {"type": "integer"}}}}}
      },
      "ReplayJob": {
        "type": "object",
        "required": ["id", "state", "total", "done", "failed", "skipped", "rate", "filter", "created_at", "updated_at", "error", "waiting"],
        "properties": {"id": {"type": "string"},
                       "state": {"type": "string", "enum": ["queued", "running", "done", "cancelled", "failed"]},
                       "total": {"type": "integer", "description": "counted once when the job is created; never changes"},
                       "done": {"type": "integer"}, "failed": {"type": "integer"},
                       "skipped": {"type": "integer", "description": "of a done job: counted in total, but no longer matching when reached"},
                       "waiting": {"type": ["object", "null"], "description": "why the job cannot make progress now",
                         "required": ["reason", "destination", "until", "message"],
                         "properties": {"reason": {"type": "string", "enum": ["breaker_open", "destination_paused"]},
                                        "destination": {"type": "string"},
                                        "until": {"$ref": "#/components/schemas/NullableTime"},
                                        "message": {"type": "string"}}},
                       "rate": {"type": "number", "description": "chains per second"},
                       "filter": {"type": "object"},
                       "created_at": {"type": "string", "format": "date-time"},
                       "updated_at": {"type": "string", "format": "date-time"},
                       "error": {"type": ["string", "null"]}}
      },
      "ReplayJobPage": {
        "type": "object", "required": ["items", "next_cursor"],
        "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/ReplayJob"}},
                       "next_cursor": {"type": ["string", "null"]}}
      },
      "AuditEntry": {
        "type": "object", "required": ["id", "at", "actor", "action", "target", "count", "detail"],
        "properties": {"id": {"type": "integer"}, "at": {"$ref": "#/components/schemas/Time"},
                       "actor": {"type": "string", "description": "token: and 8 hex digits of the token's SHA-256"},
                       "action": {"type": "string", "description": "replay, pause, resume, reset_breaker, …"},
                       "target": {"type": "string"}, "count": {"type": "integer"},
                       "detail": {"type": ["object", "null"]}}
      },
      "AuditPage": {
        "type": "object", "required": ["items", "next_cursor"],
        "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/AuditEntry"}},
                       "next_cursor": {"type": ["string", "null"]}}
      },
      "Source": {
        "type": "object", "description": "the source JSON of the config; verify.secrets shown as secrets_set (a count)",
        "required": ["name"], "properties": {"name": {"type": "string"},
                                             "origin": {"type": "string", "enum": ["config", "api"]},
                                             "rejections": {"$ref": "#/components/schemas/RejectionCounts"}}
      },
      "RejectionReason": {"type": "string",
                          "enum": ["missing_signature", "malformed_signature", "timestamp_outside_tolerance", "signature_mismatch"]},
      "RejectionCounts": {
        "type": "object", "description": "since this process started (each node counts its own); exact, whether or not a row was kept",
        "required": ["since_start", "not_recorded", "last_at", "by_reason"],
        "properties": {"since_start": {"type": "integer"},
                       "not_recorded": {"type": "integer", "description": "counted but not kept (over the per-source rate, queue full, store error)"},
                       "last_at": {"oneOf": [{"$ref": "#/components/schemas/Time"}, {"type": "null"}]},
                       "by_reason": {"type": "object", "additionalProperties": {"type": "integer"}}}
      },
      "Rejection": {
        "type": "object", "required": ["id", "received_at", "reason", "message", "headers", "size", "sha256", "remote_addr"],
        "properties": {"id": {"type": "string"}, "received_at": {"$ref": "#/components/schemas/Time"},
                       "reason": {"$ref": "#/components/schemas/RejectionReason"},
                       "message": {"type": "string", "description": "the verifier's words, e.g. timestamp is 10m old, outside the tolerance of 5m"},
                       "headers": {"type": "array", "description": "[name, value] pairs as received; credentials and signatures shown as (redacted)",
                                   "items": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2}},
                       "size": {"type": "integer", "description": "body bytes"},
                       "sha256": {"type": "string", "description": "the body's SHA-256, hex"},
                       "remote_addr": {"type": ["string", "null"]}}
      },
      "RejectionPage": {
        "type": "object", "required": ["items", "next_cursor", "counts"],
        "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/Rejection"}},
                       "next_cursor": {"type": ["string", "null"]},
                       "counts": {"$ref": "#/components/schemas/RejectionCounts"}}
      },
      "Route": {
        "type": "object", "required": ["id", "source", "destination"],
        "properties": {"id": {"type": "string"}, "source": {"type": "string"}, "destination": {"type": "string"},
                       "origin": {"type": "string", "enum": ["config", "api"]}}
      },
      "Duration": {"type": "string", "description": "250ms, 5s, 5m, 3h, 1d", "pattern": "^[0-9]+(ms|s|m|h|d)$"},
      "SourceInput": {
        "type": "object", "required": ["name"], "additionalProperties": false,
        "properties": {
          "name": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"},
          "verify": {"type": "object", "additionalProperties": false, "required": ["scheme", "secrets"],
                     "properties": {"scheme": {"type": "string", "enum": ["github", "stripe", "shopify", "standard", "hmac"]},
                                    "secrets": {"type": "array", "items": {"type": "string"}, "description": "write-only"},
                                    "tolerance": {"$ref": "#/components/schemas/Duration"},
                                    "header": {"type": "string"}, "algorithm": {"type": "string", "enum": ["sha1", "sha256", "sha512"]},
                                    "encoding": {"type": "string", "enum": ["hex", "base64"]}, "prefix": {"type": "string"}}},
          "dedup": {"type": "object", "description": "{\"header\": \"X-GitHub-Delivery\"} or {\"json\": \"id\"}"},
          "max_body": {"type": "string", "description": "e.g. 5MiB"}
        }
      },
      "DestinationInput": {
        "type": "object", "required": ["name", "url"], "additionalProperties": false,
        "properties": {
          "name": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"},
          "url": {"type": "string", "format": "uri", "description": "http(s), no user-info"},
          "headers": {"type": "object", "additionalProperties": {"type": "string"},
                      "description": "sent with every request; Host, Content-Length, Transfer-Encoding, Connection, Keep-Alive, TE, Trailer, Upgrade, Expect, Proxy-* and webhook-id/-timestamp/-signature are refused"},
          "policy": {"type": ["string", "object"], "description": "a preset name or a policy object"},
          "signing_secret": {"type": "string", "description": "whsec_ + base64; write-only"},
          "max_concurrency": {"type": "integer", "minimum": 1},
          "rate_limit": {"type": "string", "description": "e.g. 100/s"},
          "breaker": {"type": "object"},
          "ordered": {"type": "boolean", "description": "keep the received order for the whole destination (or per order_key)"},
          "order_key": {"oneOf": [{"type": "null"},
                                  {"type": "object", "required": ["header"], "additionalProperties": false,
                                   "properties": {"header": {"type": "string", "minLength": 1}}},
                                  {"type": "object", "required": ["json"], "additionalProperties": false,
                                   "properties": {"json": {"type": "string", "minLength": 1, "description": "dotted path, e.g. data.object.customer"}}}],
                        "description": "keep the order per key value (keys proceed independently); events without the key are delivered unordered"},
          "replay_window": {"$ref": "#/components/schemas/Duration"},
          "paused": {"type": "boolean"}, "allow_private": {"type": "boolean"}, "pause_on_gone": {"type": "boolean"},
          "forward_headers": {"oneOf": [{"type": "string", "enum": ["all", "none"]},
                                        {"type": "array", "items": {"type": "string"}}],
                              "description": "received headers sent on to the destination (default all); hop-by-hop ones, Host, Content-Length, Expect, Authorization, Cookie are never sent"},
          "secret_headers": {"type": "array", "items": {"type": "string"},
                             "description": "header names whose values are shown as (redacted)"},
          "tls": {"type": ["object", "null"], "additionalProperties": false,
                  "description": "client certificate and private CA; each value is PEM text, or \"@/absolute/path\" of a PEM file on the hookrelay host, read when the request is made and stored as text (ca_file also takes the path without @); in a PATCH, members not given are kept",
                  "properties": {"client_cert": {"type": ["string", "null"], "description": "PEM: the certificate, then any intermediates; requires client_key"},
                                 "client_key": {"type": ["string", "null"], "description": "PEM, unencrypted; must match client_cert; write-only"},
                                 "ca_file": {"type": ["string", "null"], "description": "PEM bundle trusted for the destination's server instead of the system's CAs"}}},
          "auth": {"type": ["object", "null"], "additionalProperties": false,
                   "description": "sent as the Authorization header; write-only; excludes headers.Authorization. {\"bearer\": \"…\"} or {\"basic\": {\"username\": \"…\", \"password\": \"…\"}}",
                   "properties": {"bearer": {"type": ["string", "null"], "description": "the token alone (sent as Bearer <token>)"},
                                  "basic": {"type": ["object", "null"], "properties": {"username": {"type": "string"}, "password": {"type": "string"}}}}}
        }
      },
      "RouteInput": {
        "type": "object", "required": ["source", "destination"], "additionalProperties": false,
        "properties": {"source": {"type": "string"}, "destination": {"type": "string"},
                       "id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$",
                              "description": "default source:destination; letters, digits, _ - . : (else 400, field id)"}}
      }
    }
  }
}
)json";

}  // namespace

std::string_view OpenApiDocument() { return kDocument; }

}  // namespace hookrelay::api
