#pragma once

#include <span>
#include <string_view>

#include "http/request.h"

namespace hookrelay::webui {

// One file of web/, embedded at build time (cmake/embed_web.cmake).
struct Asset {
  std::string_view path;          // relative to web/: "index.html", "js/app.js"
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view body;
  std::string_view etag;  // "\"<32 hex digits>\"": the start of the SHA-256 of `body`, quoted
};

// Every embedded file, sorted by path.
std::span<const Asset> Assets();

// The file at `path` (relative to web/, "" meaning "index.html"), or null.
const Asset* FindAsset(std::string_view path);

// The headers every /ui/ response carries: a Content-Security-Policy that allows only the
// dashboard's own files (no inline script or style, no framing), nosniff, no referrer.
const http::HeaderList& SecurityHeaders();

// True when an If-None-Match header value (a list of entity tags, weak ones ("W/\"…\"") included,
// or "*") names `etag` (RFC 9110 §13.1.2: weak comparison).
bool EtagMatches(std::string_view if_none_match, std::string_view etag);

// The answer for GET /ui/<rest> (`rest` decoded, "" for /ui/): the file with its content type,
// ETag, `Cache-Control: no-cache` and the security headers, or a 404 (also with them) for a path
// that is no file. When `if_none_match` names the file's ETag, a 304 without a body: a page load
// revalidates every file but downloads only those that changed (no-cache, so an upgrade is seen
// at once; the files keep their names). The dashboard routes with the URL's fragment
// (/ui/#/events/01J…), so every page is index.html.
http::Response Serve(std::string_view rest, std::string_view if_none_match = {});
// The 404 Serve answers for a path that is no file.
http::Response NotFound();

}  // namespace hookrelay::webui
