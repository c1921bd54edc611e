#include <boost/json.hpp>
#include <string>
#include <vector>

#include "cli/render.h"
#include "cli/render/render_internal.h"
#include "cli/wrap.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

// "all", or the patterns: "invoice.*, customer.subscription.updated".
std::string TypesText(const json::object& r) {
  const json::value* types = Field(r, "types");
  if (!types || !types->is_array() || types->get_array().empty()) return "all";
  std::string out;
  for (const json::value& t : types->get_array()) {
    out += (out.empty() ? "" : ", ") + Escaped(Text(&t));
  }
  return out;
}

}  // namespace

std::string RenderRouteList(const json::array& items, size_t width) {
  if (items.empty()) return "No routes.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& r = v.get_object();
    std::string takes = TypesText(r);
    if (const json::value* f = Field(r, "filter"); f && f->is_object()) takes += " + filter";
    rows.push_back(
        {Text(r, "id"), Text(r, "source"), Text(r, "destination"), takes, OriginText(r)});
  }
  const std::vector<std::string> header = {"ID", "SOURCE", "DESTINATION", "TAKES", "DEFINED IN"};
  // The rule's summary gives way first, then the id (by default "source:destination"), then the
  // names; `routes show` and --json have them whole.
  FitColumns(header, rows, width, {3, 0, 1, 2});
  return Table(header, rows);
}

std::string RenderRouteDetail(const json::object& r) {
  std::string out = "Route " + Text(r, "id") + "\n  from     " + Text(r, "source") +
                    "\n  to       " + Text(r, "destination") + "\n  types    " + TypesText(r) +
                    "\n";
  if (const json::value* f = Field(r, "filter"); f && f->is_object()) {
    out += "  filter   " + Escaped(json::serialize(*f)) + "\n";
  } else {
    out += "  filter   none\n";
  }
  return out + "  defined  " + OriginText(r) + "\n";
}

std::string RenderRouteTest(const json::object& result, size_t width) {
  std::string out = "On " +
                    Plural(Field(result, "total") && Field(result, "total")->is_int64()
                               ? Field(result, "total")->as_int64()
                               : 0,
                           "event") +
                    " of " + Text(result, "source") + ", the route takes " +
                    Text(result, "matched") + ".\n";
  const json::value* events = Field(result, "events");
  if (!events || !events->is_array()) return out;
  if (!events->get_array().empty()) out += "\n";
  for (const json::value& v : events->get_array()) {
    if (!v.is_object()) continue;
    const json::object& e = v.get_object();
    const json::value* matched = Field(e, "matched");
    const bool takes = matched && matched->is_bool() && matched->get_bool();
    const json::value* type = Field(e, "type");
    out += std::string(takes ? "  takes  " : "  skips  ") + Text(e, "id") + "  " +
           (type && type->is_string() ? Escaped(type->get_string()) : "(no type)") + "\n";
    if (!takes) out += Wrap(Escaped(Text(e, "reason")), std::string(9, ' '), 9, width);
  }
  return out;
}

}  // namespace hookrelay::cli
