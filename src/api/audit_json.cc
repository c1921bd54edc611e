#include "api/audit_json.h"

#include <boost/json.hpp>

#include "api/json_util.h"
#include "common/time_format.h"

namespace hookrelay::api {

namespace json = boost::json;

json::object AuditEntryToJson(const store::AuditEntry& e) {
  json::value detail = nullptr;
  if (!e.detail.empty()) {
    boost::system::error_code ec;
    json::value v = json::parse(e.detail, ec);
    if (!ec) detail = std::move(v);
  }
  return {{"id", e.id},
          {"at", FormatRfc3339(e.at)},
          {"actor", e.actor},
          {"action", e.action},
          {"target", e.target},
          {"count", e.count},
          {"detail", std::move(detail)}};
}

json::object AuditPageToJson(const store::AuditPage& page) {
  json::array items;
  items.reserve(page.items.size());
  for (const store::AuditEntry& e : page.items) items.push_back(AuditEntryToJson(e));
  json::value next = nullptr;
  if (!page.next_cursor.empty()) next = json::string(page.next_cursor);
  return List(std::move(items), std::move(next));
}

}  // namespace hookrelay::api
