#include "delivery/outgoing_headers.h"

#include <algorithm>
#include <cctype>

#include "common/ascii.h"

namespace hookrelay::delivery {
namespace {

bool Contains(const std::vector<std::string>& lower_names, std::string_view name) {
  return std::find(lower_names.begin(), lower_names.end(), AsciiLower(name)) != lower_names.end();
}

}  // namespace

HeaderPairs OutgoingHeaders(const std::vector<store::Header>& received,
                            const std::string& content_type, const model::Destination& destination,
                            HeaderPairs standard) {
  std::vector<std::string> own = {"content-type", "webhook-id", "webhook-timestamp",
                                  "webhook-signature"};
  for (const auto& [name, value] : destination.headers) own.push_back(AsciiLower(name));
  for (const auto& [name, value] : standard) own.push_back(AsciiLower(name));
  std::vector<std::string> listed;
  for (const std::string& n : destination.forward_headers.names) listed.push_back(AsciiLower(n));

  HeaderPairs out;
  out.reserve(received.size() + destination.headers.size() + standard.size() + 1);
  using Mode = model::ForwardHeaders::Mode;
  const Mode mode = destination.forward_headers.mode;
  if (mode != Mode::kNone) {
    for (const store::Header& h : received) {
      if (model::IsNeverForwarded(h.name) || Contains(own, h.name)) continue;
      if (mode == Mode::kList && !Contains(listed, h.name)) continue;
      out.emplace_back(h.name, h.value);
    }
  }
  // The destination's own Content-Type, when it sets one, replaces the event's (one field).
  const bool configured_type =
      std::any_of(destination.headers.begin(), destination.headers.end(),
                  [](const auto& h) { return AsciiLower(h.first) == "content-type"; });
  if (!configured_type) {
    out.emplace_back("Content-Type",
                     content_type.empty() ? "application/octet-stream" : content_type);
  }
  for (const auto& h : destination.headers) out.push_back(h);
  for (auto& h : standard) out.push_back(std::move(h));
  return out;
}

}  // namespace hookrelay::delivery
