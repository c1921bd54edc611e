#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/handler_util.h"
#include "api/request_params.h"
#include "api/sources_json.h"

namespace hookrelay::api {

namespace json = boost::json;

http::Response ApiHandler::ListSources(const model::Catalog& catalog) const {
  return Json(SourceListToJson(catalog));
}

http::Response ApiHandler::GetSource(const std::string& name, const model::Catalog& catalog) const {
  const model::Source* s = catalog.FindSource(name);
  if (!s) return NotFound("source", name);
  return SourceView(*s);
}

ingest::RejectionCounts ApiHandler::RejectionCountsOf(const std::string& source) const {
  return controls_.rejection_counts ? controls_.rejection_counts(source)
                                    : ingest::RejectionCounts{};
}

http::Response ApiHandler::SourceView(const model::Source& s) const {
  json::object o = SourceToJson(s);
  o["rejections"] = RejectionCountsToJson(RejectionCountsOf(s.name));
  return Json(std::move(o));
}

http::Response ApiHandler::ListRejections(const http::Request& request,
                                          const std::string& source) const {
  auto q = ParsePageQuery(request);
  if (!q.ok()) return FromStatus(q.status());
  if (!registry_.Get()->FindSource(source)) return NotFound("source", source);
  auto page = store_.ListRejections(source, q->cursor, q->limit);
  if (!page.ok()) return FromStatus(page.status());
  return Json(RejectionPageToJson(*page, RejectionCountsOf(source)));
}

}  // namespace hookrelay::api
