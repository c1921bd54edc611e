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

http::Response ApiHandler::ListAudit(const http::Request& request) const {
  auto q = ParsePageQuery(request);
  if (!q.ok()) return FromStatus(q.status());
  auto page = store_.ListAudit(q->cursor, q->limit);
  if (!page.ok()) return FromStatus(page.status());
  return Json(AuditPageToJson(*page));
}

}  // namespace hookrelay::api
