#include <boost/json.hpp>
#include <string>
#include <vector>

#include "cli/render.h"
#include "cli/render/render_internal.h"

namespace hookrelay::cli {

namespace json = boost::json;

std::string RenderTokenList(const json::array& items, TimePoint now, size_t width) {
  if (items.empty()) return "No tokens.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& t = v.get_object();
    std::string expires =
        Present(t, "expires_at") ? FormatApiTime(Field(t, "expires_at"), now) : "never";
    if (Text(t, "expired") == "yes") expires += " (expired)";
    if (Text(t, "revoked") == "yes") expires = "revoked";
    std::string used = "never";
    if (Present(t, "last_used_at")) {
      used = FormatApiTime(Field(t, "last_used_at"), now);
      if (Present(t, "last_used_addr")) used += " from " + Text(t, "last_used_addr");
    }
    std::string role = Text(t, "role");
    if (Present(t, "scope")) role += " (scoped)";
    rows.push_back({Escaped(Text(t, "name")), role, FormatApiTime(Field(t, "created_at"), now),
                    expires, used});
  }
  const std::vector<std::string> header = {"NAME", "ROLE", "CREATED (" + LocalZoneName(now) + ")",
                                           "EXPIRES", "LAST USED"};
  // The last use (its address first) gives way first, then the expiry, then a long name.
  FitColumns(header, rows, width, {4, 3, 0}, {4, 3});
  return Table(header, rows);
}

std::string RenderTokenDetail(const json::object& t, TimePoint now) {
  std::string out = "Token " + Escaped(Text(t, "name")) + "\n";
  out += "  role      " + Text(t, "role") + "\n";
  if (const json::value* scope = t.if_contains("scope"); scope && scope->is_object()) {
    auto names = [](const json::value* list) {
      std::string joined;
      if (list && list->is_array()) {
        for (const json::value& n : list->get_array()) {
          if (!n.is_string()) continue;
          joined += (joined.empty() ? "" : ", ") + Escaped(std::string(n.get_string()));
        }
      }
      return joined.empty() ? std::string("none") : joined;
    };
    out += "  scope     sources: " + names(scope->get_object().if_contains("sources")) +
           "; destinations: " + names(scope->get_object().if_contains("destinations")) + "\n";
  }
  out += "  created   " + FormatApiTime(Field(t, "created_at"), now, /*with_zone=*/true);
  if (Present(t, "created_by")) out += " by " + Text(t, "created_by");
  out += "\n  expires   " +
         (Present(t, "expires_at") ? FormatApiTime(Field(t, "expires_at"), now, true) : "never") +
         "\n";
  return out;
}

}  // namespace hookrelay::cli
