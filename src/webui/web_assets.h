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
};

// Every embedded file, sorted by path.
std::span<const Asset> Assets();

// The file at `path` (relative to web/, "" meaning "index.html"), or null.
const Asset* FindAsset(std::string_view path);

// The headers every /ui/ response carries: a Content-Security-Policy that allows only the
// dashboard's own files (no inline script or style, no framing), nosniff, no referrer.
const http::HeaderList& SecurityHeaders();

// The answer for GET /ui/<rest> (`rest` decoded, "" for /ui/): the file with its content type and
// the security headers, or a 404 (also with them) for a path that is no file. The dashboard routes
// with the URL's fragment (/ui/#/events/01J…), so every page is index.html.
http::Response Serve(std::string_view rest);
// The 404 Serve answers for a path that is no file.
http::Response NotFound();

}  // namespace hookrelay::webui
