#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hookrelay::transform {

// The part of an outgoing request a transform sees and may change. Scheme, host and port are not
// here on purpose: the caller appends `path` and `query` to the destination's URL, so a script
// cannot send anywhere else (docs/transforms.md).
struct Request {
  std::string method;  // "POST"
  std::string path;    // "/hooks/stripe": starts with '/'
  std::string query;   // "a=1&b=2": without the '?', empty when there is none
  // In order; a name may repeat. The script sees one lower-cased name per header, repeated ones
  // joined with ", " (RFC 9110 5.3); what it returns comes back one entry per name.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // bytes; the script sees them decoded as UTF-8

  bool operator==(const Request&) const = default;
};

// Bounds of one call. Each is at most the server-wide maximum (Runner::Options::max_limits).
struct Limits {
  // CPU time of the worker thread running the call (compiling, running, converting).
  std::chrono::milliseconds cpu{50};
  // The engine's garbage-collected heap for the call, plus what it mallocs for it (long strings'
  // characters, arrays' elements, typed arrays), checked after each collection.
  size_t memory_bytes = size_t{16} << 20;
};

// What a successful call gives.
struct Outcome {
  std::optional<Request> request;    // nullopt: the script returned null (skip this delivery)
  std::chrono::microseconds cpu{0};  // CPU time the call used on its worker thread
  // What the call added to its realm's heap (objects, strings and their malloc'd parts), at its
  // end: always for a fresh realm; for a kept realm (a scope's) only when it was measured
  // (every 128th call, or after a long one), 0 otherwise.
  size_t memory_bytes = 0;
};

}  // namespace hookrelay::transform
