#include <boost/json.hpp>
#include <string>
#include <vector>

#include "cli/render.h"
#include "cli/render/render_internal.h"
#include "cli/wrap.h"

namespace hookrelay::cli {

namespace json = boost::json;

std::string RenderRouteList(const json::array& items, size_t width) {
  if (items.empty()) return "No routes.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& r = v.get_object();
    rows.push_back({Text(r, "id"), Text(r, "source"), Text(r, "destination"), OriginText(r)});
  }
  const std::vector<std::string> header = {"ID", "SOURCE", "DESTINATION", "DEFINED IN"};
  // The id (by default "source:destination", the longest cell) gives way first, then the names;
  // `routes show` and --json have them whole.
  FitColumns(header, rows, width, {0, 1, 2});
  return Table(header, rows);
}

std::string RenderRouteDetail(const json::object& r) {
  return "Route " + Text(r, "id") + "\n  from     " + Text(r, "source") + "\n  to       " +
         Text(r, "destination") + "\n  defined  " + OriginText(r) + "\n";
}

}  // namespace hookrelay::cli
