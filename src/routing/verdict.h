#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace hookrelay::routing {

// Whether an event satisfies a route's rule and, when it does not, why: the first condition that
// failed, said for people and kept short (values are cut at about 60 characters). The reason is
// shown in the event detail ("routes": [{"matched": false, "reason": …}]) and by the dry run.
struct [[nodiscard]] Verdict {
  bool matched = true;
  std::string reason;  // empty when matched

  static Verdict Pass() { return Verdict(); }
  static Verdict Fail(std::string reason) { return Verdict{false, std::move(reason)}; }
  explicit operator bool() const { return matched; }
};

// An event's header fields as received: names as sent (matched case-insensitively), one entry per
// field line, so a header sent twice is two entries (never comma-joined here). The same type as
// http::HeaderList, which converts to it without copying.
using HeaderField = std::pair<std::string, std::string>;
using HeaderSpan = std::span<const HeaderField>;

// The value of the first field named `name` (ASCII case-insensitive), or nullopt. The view points
// into `headers`.
std::optional<std::string_view> FindHeader(HeaderSpan headers, std::string_view name);

}  // namespace hookrelay::routing
