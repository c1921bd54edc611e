#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Plain data exchanged between the HTTP server and its Handler. No Boost here, so handlers
// (ingest, api) compile without Beast.

namespace hookrelay::http {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// True when `a` and `b` are equal ignoring ASCII case (header names, tokens).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Everything known about a request once its request line and header fields have been read,
// before any of the body.
struct RequestHead {
  std::string method;  // as sent, e.g. "POST"
  int version = 11;    // 10 for HTTP/1.0, 11 for HTTP/1.1
  std::string target;  // the request-target as sent: "/in/stripe?x=1"
  // The target's path, still percent-encoded ("/in/my%20source"). For an absolute-form target
  // ("http://host/p") the scheme and authority are stripped; "*" stays "*".
  std::string path;
  // Percent-decoded path segments: "/in/a%2Fb/" → {"in", "a/b", ""}; "/" → {}. A decoded
  // segment may contain '/' or NUL, so route on segments, not on a re-joined string.
  std::vector<std::string> segments;
  std::string query;  // after '?', raw, without the '?'; empty when absent
  // Header fields in arrival order, names as sent (repeated fields stay separate entries).
  // Trailer fields of a chunked body are not here: the server drops them.
  HeaderList headers;
  std::string remote_address;  // peer IP: "127.0.0.1", "::1"
  uint16_t remote_port = 0;
  std::optional<uint64_t> content_length;  // nullopt when absent (chunked or no body)
  bool chunked = false;                    // Transfer-Encoding: chunked

  // The value of the first header field named `name` (ASCII case-insensitive), or nullopt.
  // The view points into `headers`.
  std::optional<std::string_view> Header(std::string_view name) const;
  // The first query parameter named `name`, decoded ('+' is a space, %XX escapes); nullopt
  // when absent. "?a" and "?a=" both give "".
  std::optional<std::string> QueryParam(std::string_view name) const;
};

struct Request : RequestHead {
  std::string body;  // the body bytes exactly as received (chunked framing removed)
};

struct Response {
  int status = 200;  // REQUIRES: 200..599; anything else is sent as 500
  // Extra header fields. Content-Length, Transfer-Encoding and Connection are managed by the
  // server and dropped here; fields with CR, LF or NUL in them are dropped (no response
  // splitting). A Content-Type here wins over `content_type`.
  HeaderList headers;
  std::string content_type = "application/json";  // empty: no Content-Type field
  std::string body;
};

// A JSON error response: {"error": {"code": ..., "message": ..., "field": ...}}, "field" omitted
// when empty. Codes are stable snake_case names ("invalid_argument", "not_found", ...).
Response JsonError(int status, std::string_view code, std::string_view message,
                   std::string_view field = {});

// Splits an encoded path ("/a/b%20c") into decoded segments as RequestHead::segments describes.
// False when a percent escape is malformed ("%zz", "%4").
bool DecodePathSegments(std::string_view path, std::vector<std::string>& segments);

// Decodes %XX escapes (and '+' as a space when `plus_is_space`). False when malformed.
bool PercentDecode(std::string_view in, bool plus_is_space, std::string& out);
// Encodes everything but RFC 3986 unreserved characters, for a path segment or a query value.
std::string PercentEncode(std::string_view text);

}  // namespace hookrelay::http
