#include "routing/verdict.h"

#include "common/ascii.h"

namespace hookrelay::routing {

std::optional<std::string_view> FindHeader(HeaderSpan headers, std::string_view name) {
  for (const HeaderField& h : headers) {
    if (AsciiEqualsIgnoreCase(h.first, name)) return std::string_view(h.second);
  }
  return std::nullopt;
}

}  // namespace hookrelay::routing
