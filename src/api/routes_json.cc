#include "api/routes_json.h"

#include <boost/json.hpp>

#include "api/json_util.h"
#include "common/time_format.h"

namespace hookrelay::api {

namespace json = boost::json;

json::object RouteListToJson(const model::Catalog& catalog) {
  json::array items;
  for (const model::Route& r : catalog.routes) items.push_back(RouteToJson(r));
  return List(std::move(items));
}

json::object RouteTestToJson(const std::string& source, const routing::RouteRule& rule,
                             const std::vector<store::Event>& events) {
  json::array out;
  int64_t matched = 0;
  for (const store::Event& e : events) {
    std::vector<routing::HeaderField> headers;
    headers.reserve(e.headers.size());
    for (const store::Header& h : e.headers) headers.emplace_back(h.name, h.value);
    boost::system::error_code ec;
    const json::value body = json::parse(e.body, ec);
    const routing::MatchInput input{headers, ec || body.is_null() ? nullptr : &body};
    routing::Verdict v = rule.Match(e.type, input);
    if (v.matched) ++matched;
    out.push_back(json::object{
        {"id", e.id},
        {"received_at", FormatRfc3339(e.received_at)},
        {"type", StringOrNull(e.type)},
        {"matched", v.matched},
        {"reason", v.matched ? json::value(nullptr) : json::value(std::move(v.reason))}});
  }
  return {{"source", source},
          {"total", static_cast<int64_t>(events.size())},
          {"matched", matched},
          {"events", std::move(out)}};
}

}  // namespace hookrelay::api
