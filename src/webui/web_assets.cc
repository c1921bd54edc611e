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

http::Response Serve(std::string_view rest) {
  const Asset* a = FindAsset(rest);
  if (a == nullptr) return NotFound();
  http::Response r;
  r.headers = SecurityHeaders();
  r.content_type = std::string(a->content_type);
  // index.html must be fetched anew after an upgrade; the other files are small.
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.body = std::string(a->body);
  return r;
}

}  // namespace hookrelay::webui
