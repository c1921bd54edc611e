#include "delivery/outgoing_headers.h"

#include <algorithm>
#include <cctype>

#include "common/ascii.h"

namespace hookrelay::delivery {
namespace {

// Compared case-insensitively, without a lowered copy of either (this runs for every received
// header of every attempt).
bool Contains(const std::vector<std::string_view>& names, std::string_view name) {
  return std::any_of(names.begin(), names.end(),
                     [name](std::string_view n) { return AsciiEqualsIgnoreCase(n, name); });
}

}  // namespace

HeaderPairs OutgoingHeaders(const std::vector<store::Header>& received,
                            const std::string& content_type, const model::Destination& destination,
                            HeaderPairs standard) {
  // Views into `destination` and `standard`, used before `standard` is moved below.
  std::vector<std::string_view> own = {"content-type", "webhook-id", "webhook-timestamp",
                                       "webhook-signature"};
  own.reserve(own.size() + destination.headers.size() + standard.size());
  for (const auto& [name, value] : destination.headers) own.push_back(name);
  for (const auto& [name, value] : standard) own.push_back(name);
  const std::vector<std::string_view> listed(destination.forward_headers.names.begin(),
                                             destination.forward_headers.names.end());

  HeaderPairs out;
  out.reserve(received.size() + destination.headers.size() + standard.size() + 2);
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
                  [](const auto& h) { return AsciiEqualsIgnoreCase(h.first, "content-type"); });
  if (!configured_type) {
    out.emplace_back("Content-Type",
                     content_type.empty() ? "application/octet-stream" : content_type);
  }
  for (const auto& h : destination.headers) out.push_back(h);
  // Received Authorization headers are never forwarded, and "auth" excludes a configured one.
  if (destination.auth.kind != model::DestinationAuth::Kind::kNone) {
    out.emplace_back("Authorization", destination.auth.header_value);
  }
  for (auto& h : standard) out.push_back(std::move(h));
  return out;
}

}  // namespace hookrelay::delivery
