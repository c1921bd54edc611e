#include "webui/web_assets.h"

#include <algorithm>
#include <string>

namespace hookrelay::webui {

const Asset* FindAsset(std::string_view path) {
  if (path.empty()) path = "index.html";
  for (const Asset& a : Assets()) {
    if (a.path == path) return &a;
  }
  return nullptr;
}

const http::HeaderList& SecurityHeaders() {
  static const http::HeaderList kHeaders = {
      {"Content-Security-Policy",
       "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
      {"X-Frame-Options", "DENY"},
      {"Cross-Origin-Opener-Policy", "same-origin"},
  };
  return kHeaders;
}

http::Response NotFound() {
  http::Response r;
  r.headers = SecurityHeaders();
  r.status = 404;
  r.content_type = "text/plain; charset=utf-8";
  // The path is not echoed: nothing a link can make this page say.
  r.body =
      "not found: no such file of the dashboard\n"
      "the dashboard is at /ui/ (its pages are /ui/#/events, /ui/#/destinations, ...)\n";
  return r;
}

bool EtagMatches(std::string_view if_none_match, std::string_view etag) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  if (trim(if_none_match) == "*") return true;
  while (!if_none_match.empty()) {
    const size_t comma = if_none_match.find(',');
    std::string_view tag = trim(if_none_match.substr(0, comma));
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (!tag.empty() && tag == etag) return true;
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

http::Response Serve(std::string_view rest, std::string_view if_none_match) {
  const Asset* a = FindAsset(rest);
  if (a == nullptr) return NotFound();
  http::Response r;
  r.headers = SecurityHeaders();
  r.content_type = std::string(a->content_type);
  // Revalidated on every use (index.html must be seen anew after an upgrade, and the modules keep
  // their names), but a file that did not change costs a 304, not its bytes.
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.headers.emplace_back("ETag", std::string(a->etag));
  if (!if_none_match.empty() && EtagMatches(if_none_match, a->etag)) {
    r.status = 304;
    return r;
  }
  r.body = std::string(a->body);
  return r;
}

}  // namespace hookrelay::webui
