#include <boost/json.hpp>
#include <string>
#include <vector>

#include "cli/render.h"
#include "cli/render/render_internal.h"

namespace hookrelay::cli {

namespace json = boost::json;

std::string RenderKeyList(const json::array& items, TimePoint now) {
  if (items.empty()) return "No master keys (the store has no data key yet).\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& k = v.get_object();
    rows.push_back({Escaped(Text(k, "id")), FormatApiTime(Field(k, "created_at"), now),
                    Text(k, "this_node") == "yes" ? "this node runs with it" : ""});
  }
  return Table({"ID", "ADDED (" + LocalZoneName(now) + ")", ""}, rows);
}

}  // namespace hookrelay::cli
