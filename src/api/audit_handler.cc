#include <algorithm>
#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/audit_json.h"
#include "api/handler_util.h"
#include "api/request_params.h"

namespace hookrelay::api {

namespace json = boost::json;

Status ApiHandler::Audit(const http::Request& request, std::string action, std::string target,
                         int64_t count, std::string detail) const {
  store::AuditEntry e;
  e.at = clock_.Now();
  e.actor = Actor(request);
  e.action = std::move(action);
  e.target = std::move(target);
  e.count = count;
  e.detail = std::move(detail);
  return store_.AppendAudit(e);
}

http::Response ApiHandler::ListAudit(const http::Request& request,
                                     const access::Scope* scope) const {
  auto q = ParsePageQuery(request);
  if (!q.ok()) return FromStatus(q.status());
  auto page = store_.ListAudit(q->cursor, q->limit);
  if (!page.ok()) return FromStatus(page.status());
  if (scope) {
    // A scoped token sees what was done to its own sources, destinations and routes; a page may
    // then hold fewer entries than asked, and next_cursor still goes on.
    std::shared_ptr<const model::Catalog> catalog = registry_.Get();
    std::erase_if(page->items, [&](const store::AuditEntry& e) {
      if (scope->ReachesSource(e.target) || scope->ReachesDestination(e.target)) return false;
      const size_t colon = e.target.find(':');
      if (colon != std::string::npos && scope->ReachesSource(e.target.substr(0, colon)) &&
          scope->ReachesDestination(e.target.substr(colon + 1))) {
        return false;
      }
      return !std::any_of(
          catalog->routes.begin(), catalog->routes.end(),
          [&](const model::Route& r) { return r.id == e.target && scope->ReachesRoute(r); });
    });
  }
  return Json(AuditPageToJson(*page));
}

}  // namespace hookrelay::api
