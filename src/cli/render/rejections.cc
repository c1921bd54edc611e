#include <boost/json.hpp>
#include <string>
#include <vector>

#include "cli/render.h"
#include "cli/render/render_internal.h"
#include "cli/wrap.h"

namespace hookrelay::cli {

namespace json = boost::json;

std::string RenderRejectionList(const json::object& page, TimePoint now, size_t width) {
  std::string out;
  if (const json::object* c = Object(page, "counts")) {
    std::string summary = Text(*c, "since_start") + " refused since the server started";
    if (Text(*c, "not_recorded") != "0" && Present(*c, "not_recorded")) {
      summary += ", " + Text(*c, "not_recorded") + " not kept";
    }
    if (Present(*c, "last_at")) {
      summary += "; the last " + FormatApiTime(Field(*c, "last_at"), now, /*with_zone=*/true);
    }
    if (const json::object* by = Object(*c, "by_reason")) {
      std::string reasons;
      for (const auto& [reason, n] : *by) {
        if (Text(&n) == "0") continue;
        reasons += (reasons.empty() ? "" : ", ") + std::string(reason) + " " + Text(&n);
      }
      if (!reasons.empty()) summary += "; by reason: " + reasons;
    }
    out += Wrap(summary, "", 0, width) + "\n";
  }
  const json::value* items = Field(page, "items");
  if (!items || !items->is_array() || items->get_array().empty()) {
    return out + "No rejected requests kept.\n";
  }
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items->get_array()) {
    if (!v.is_object()) continue;
    const json::object& r = v.get_object();
    rows.push_back({FormatApiTime(Field(r, "received_at"), now), Text(r, "remote_addr"),
                    Text(r, "reason"), Bytes(Field(r, "size"))});
  }
  const std::vector<std::string> header = {"RECEIVED (" + LocalZoneName(now) + ")", "FROM",
                                           "REASON", "SIZE"};
  FitColumns(header, rows, width, {1});
  return out + Table(header, rows);
}

}  // namespace hookrelay::cli
