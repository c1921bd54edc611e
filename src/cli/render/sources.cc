#include <boost/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/render.h"
#include "cli/render/render_internal.h"
#include "cli/wrap.h"

namespace hookrelay::cli {

namespace json = boost::json;

namespace {

std::string VerifyText(const json::object& s) {
  const json::object* v = Object(s, "verify");
  if (!v) return "none";
  return Text(*v, "scheme");
}

std::string DedupText(const json::object& s) {
  const json::object* d = Object(s, "dedup");
  if (!d) return "none";
  if (Present(*d, "header")) return "header " + Text(*d, "header");
  if (Present(*d, "json")) return "json " + Text(*d, "json");
  return json::serialize(*d);
}

}  // namespace

std::string RenderSourceList(const json::array& items) {
  if (items.empty()) return "No sources.\n";
  std::vector<std::vector<std::string>> rows;
  for (const json::value& v : items) {
    if (!v.is_object()) continue;
    const json::object& s = v.get_object();
    rows.push_back(
        {Text(s, "name"), VerifyText(s), DedupText(s), Text(s, "max_body"), OriginText(s)});
  }
  return Table({"NAME", "VERIFY", "DEDUP", "MAX BODY", "DEFINED IN"}, rows);
}

std::string RenderSourceDetail(const json::object& s, TimePoint now) {
  std::ostringstream out;
  out << "Source " << Text(s, "name") << "\n";
  out << "  verify    " << VerifyText(s);
  if (const json::object* v = Object(s, "verify")) {
    out << " ("
        << Plural(Field(*v, "secrets_set") && Field(*v, "secrets_set")->is_number()
                      ? Field(*v, "secrets_set")->to_number<int64_t>()
                      : 0,
                  "secret");
    // Only the schemes that sign a timestamp check it against the tolerance.
    const std::string scheme = Text(*v, "scheme");
    if ((scheme == "stripe" || scheme == "standard") && Present(*v, "tolerance")) {
      out << ", tolerance " << Text(*v, "tolerance");
    }
    out << ")";
    if (const json::object* rotation = Object(*v, "secrets_rotation")) {
      const json::value* n = Field(*rotation, "old_secrets");
      const int64_t old = n && n->is_number() ? n->to_number<int64_t>() : 0;
      out << "\n  rotating  "
          << (old == 1 ? "the old secret also verifies"
                       : Plural(old, "old secret") + " also verify")
          << " until " << FormatApiTime(Field(*rotation, "old_expires_at"), now);
    }
  }
  out << "\n";
  out << "  dedup     " << DedupText(s) << "\n";
  out << "  max body  " << Text(s, "max_body") << "\n";
  out << "  defined   " << OriginText(s) << "\n";
  // Requests refused for a bad signature since the server started (GET .../rejections lists them).
  if (const json::object* r = Object(s, "rejections"); r && Object(s, "verify")) {
    out << "  rejected  " << Text(*r, "since_start") << " since the server started";
    if (Text(*r, "not_recorded") != "0") out << " (" << Text(*r, "not_recorded") << " not kept)";
    if (Present(*r, "last_at")) {
      out << ", the last " << FormatApiTime(Field(*r, "last_at"), now, /*with_zone=*/true);
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace hookrelay::cli
