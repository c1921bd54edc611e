#include <boost/json.hpp>
#include <string>
#include <vector>

#include "cli/render.h"
#include "cli/render/render_internal.h"
#include "cli/wrap.h"
#include "http/json_text.h"

namespace hookrelay::cli {

namespace json = boost::json;

std::string RenderAuditList(const json::array& items, TimePoint now, size_t width) {
  if (items.empty()) return "No audit entries.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& a = v.get_object();
    const json::value* detail = Field(a, "detail");
    rows.push_back({FormatApiTime(Field(a, "at"), now), Text(a, "actor"), Text(a, "action"),
                    Escaped(Text(a, "target")), Text(a, "count"),
                    detail && !detail->is_null() ? Escaped(http::SerializeJson(*detail)) : "-"});
  }
  const std::vector<std::string> header = {
      "AT (" + LocalZoneName(now) + ")", "ACTOR", "ACTION", "TARGET", "COUNT", "DETAIL"};
  // The detail gives way first (`--json` has it whole), then the target.
  size_t used = 0;
  for (size_t i = 0; i + 1 < header.size(); ++i) {
    size_t w = DisplayWidth(header[i]);
    for (const auto& row : rows) w = std::max(w, DisplayWidth(row[i]));
    used += w + 2;
  }
  const size_t detail_width = used + 16 < width ? width - used : 16;
  for (auto& row : rows) row.back() = Cut(row.back(), detail_width);
  FitColumns(header, rows, width, {5, 3}, {5});
  return Table(header, rows);
}

}  // namespace hookrelay::cli
