#include "routing/type_pattern.h"

#include <algorithm>
#include <boost/json/array.hpp>

#include "routing/render.h"

namespace hookrelay::routing {
namespace {

// How much of the pattern list a reason shows.
constexpr size_t kShownListBytes = 120;

std::string Indexed(std::string_view field, size_t i) {
  return std::string(field) + "[" + std::to_string(i) + "]";
}

// Why `p` is not a valid pattern, or empty when it is.
std::string PatternError(std::string_view p) {
  if (p.empty()) return "a pattern may not be empty";
  if (p.size() > kMaxTypePatternBytes) {
    return "longer than " + std::to_string(kMaxTypePatternBytes) + " characters";
  }
  for (size_t i = 0; i < p.size(); ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (c < 0x21 || c > 0x7E) return "only printable ASCII without spaces is allowed";
    if (c == '*' && i + 1 != p.size()) return "a wildcard may only end a pattern";
  }
  return {};
}

std::string ShowList(const std::vector<std::string>& patterns) {
  std::string out = "[";
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (i > 0) out += ", ";
    if (out.size() + patterns[i].size() > kShownListBytes && i > 0) {
      out += "… " + std::to_string(patterns.size() - i) + " more";
      break;
    }
    out += RenderText(patterns[i], kShownListBytes);
  }
  out += "]";
  return out;
}

}  // namespace

Status ValidateTypePattern(std::string_view pattern, std::string_view field) {
  if (std::string why = PatternError(pattern); !why.empty()) {
    return Status::InvalidArgument(std::string(field) + ": " + RenderString(pattern) + ": " + why,
                                   std::string(field));
  }
  return Status::Ok();
}

Result<TypeSet> ParseTypes(const std::vector<std::string>& patterns, std::string_view field) {
  if (patterns.size() > kMaxTypePatterns) {
    return Status::InvalidArgument("at most " + std::to_string(kMaxTypePatterns) +
                                       " patterns, got " + std::to_string(patterns.size()),
                                   std::string(field));
  }
  TypeSet set;
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::string& p = patterns[i];
    if (std::string why = PatternError(p); !why.empty()) {
      return Status::InvalidArgument(RenderString(p) + ": " + why, Indexed(field, i));
    }
    if (p == "*") {
      set.any_ = true;
    } else if (p.back() == '*') {
      set.prefixes_.emplace_back(p, 0, p.size() - 1);
    } else {
      set.exact_.push_back(p);
    }
  }
  set.patterns_ = patterns;
  std::sort(set.exact_.begin(), set.exact_.end());
  set.exact_.erase(std::unique(set.exact_.begin(), set.exact_.end()), set.exact_.end());
  set.shown_ = ShowList(patterns);
  return set;
}

Result<TypeSet> ParseTypesFromJson(const boost::json::value& v, std::string_view field) {
  if (v.is_null()) return TypeSet();
  const boost::json::array* a = v.if_array();
  if (!a) return Status::InvalidArgument("expects an array of strings", std::string(field));
  if (a->size() > kMaxTypePatterns) {
    return Status::InvalidArgument("at most " + std::to_string(kMaxTypePatterns) +
                                       " patterns, got " + std::to_string(a->size()),
                                   std::string(field));
  }
  std::vector<std::string> patterns;
  patterns.reserve(a->size());
  for (size_t i = 0; i < a->size(); ++i) {
    const boost::json::string* s = (*a)[i].if_string();
    if (!s) return Status::InvalidArgument("expects a string", Indexed(field, i));
    patterns.emplace_back(*s);
  }
  return ParseTypes(patterns, field);
}

bool TypeSet::Matches(std::optional<std::string_view> type) const {
  if (patterns_.empty()) return true;
  if (!type) return false;
  if (any_) return true;
  const std::string_view t = *type;
  auto it = std::lower_bound(exact_.begin(), exact_.end(), t,
                             [](const std::string& a, std::string_view b) { return a < b; });
  if (it != exact_.end() && *it == t) return true;
  for (const std::string& prefix : prefixes_) {
    if (t.size() > prefix.size() && t.starts_with(prefix)) return true;
  }
  return false;
}

Verdict TypeSet::Match(std::optional<std::string_view> type) const {
  if (Matches(type)) return Verdict::Pass();
  if (!type) return Verdict::Fail("the event has no type; the route wants " + shown_);
  return Verdict::Fail("type " + RenderText(*type) + " is not in " + shown_);
}

}  // namespace hookrelay::routing
