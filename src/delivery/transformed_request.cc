#include "delivery/transformed_request.h"

#include <algorithm>
#include <boost/url/parse.hpp>
#include <map>
#include <set>

#include "common/ascii.h"

namespace hookrelay::delivery {

Result<OutgoingTarget> SplitTarget(const std::string& url) {
  auto u = boost::urls::parse_uri(url);
  if (!u) return Status::InvalidArgument("the destination URL cannot be parsed");
  OutgoingTarget t;
  t.origin = std::string(u->scheme()) + "://" + std::string(u->encoded_authority());
  t.path = u->encoded_path().empty() ? "/" : std::string(u->encoded_path());
  if (u->has_query()) t.query = std::string(u->encoded_query());
  return t;
}

transform::Limits LimitsOf(const model::TransformSpec& spec, const transform::Limits& defaults) {
  transform::Limits limits = defaults;
  if (spec.cpu) limits.cpu = *spec.cpu;
  if (spec.memory) limits.memory_bytes = *spec.memory;
  return limits;
}

HeaderPairs TransformedHeaders(HeaderPairs from_script, const model::Destination& destination,
                               HeaderPairs standard) {
  const bool has_auth = destination.auth.kind != model::DestinationAuth::Kind::kNone;
  std::erase_if(from_script, [&](const auto& h) {
    const std::string_view name = h.first;
    if (AsciiEqualsIgnoreCase(name, "authorization")) return has_auth;
    // Hop-by-hop and framing fields are the HTTP client's to set; webhook-* are hookrelay's.
    return model::IsHopByHopOrFraming(name) || model::IsSignatureHeader(name);
  });
  if (has_auth) from_script.emplace_back("Authorization", destination.auth.header_value);
  for (auto& h : standard) from_script.push_back(std::move(h));
  return from_script;
}

std::string HeadersChanged(const HeaderPairs& before, const HeaderPairs& after) {
  auto fold = [](const HeaderPairs& headers) {
    std::map<std::string, std::string> out;
    for (const auto& [name, value] : headers) {
      auto [it, added] = out.emplace(AsciiLower(name), value);
      if (!added) it->second += ", " + value;
    }
    return out;
  };
  const auto a = fold(before);
  const auto b = fold(after);
  std::set<std::string> changed;
  for (const auto& [name, value] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second != value) changed.insert(name);
  }
  for (const auto& [name, value] : b) {
    if (!a.count(name)) changed.insert(name);
  }
  std::string out;
  for (const std::string& name : changed) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace hookrelay::delivery
