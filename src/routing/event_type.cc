#include "routing/event_type.h"

#include <boost/json/string.hpp>
#include <span>

#include "common/ascii.h"
#include "routing/render.h"

namespace hookrelay::routing {
namespace {

namespace json = boost::json;

constexpr size_t kMaxPathNames = 16;

std::string_view Sv(const json::string& s) { return {s.data(), s.size()}; }

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> names;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    names.emplace_back(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return names;
}

// The string at `path` (names: std::string or std::string_view) below `body`, through objects
// only.
template <typename Path>
std::optional<std::string_view> StringAt(const json::value* body, const Path& path) {
  const json::value* v = body;
  for (const auto& name : path) {
    const json::object* o = v ? v->if_object() : nullptr;
    v = o ? o->if_contains(name) : nullptr;
  }
  const json::string* s = v ? v->if_string() : nullptr;
  if (!s) return std::nullopt;
  return Sv(*s);
}

constexpr std::string_view kTypeKey[] = {"type"};
constexpr std::string_view kActionKey[] = {"action"};

std::optional<std::string> Valid(std::optional<std::string_view> type) {
  if (!type || !IsValidEventType(*type)) return std::nullopt;
  return std::string(*type);
}

}  // namespace

Result<TypeRule> ParseTypeRule(const boost::json::value& v, std::string_view field) {
  const json::object* o = v.if_object();
  if (!o || o->size() != 1) {
    return Status::InvalidArgument("must be {\"header\": \"X-Event\"} or {\"json\": \"meta.kind\"}",
                                   std::string(field));
  }
  const auto& [key, value] = *o->begin();
  const std::string at = std::string(field) + (field.empty() ? "" : ".") + std::string(key);
  TypeRule rule;
  if (key == "header") {
    rule.kind = TypeRule::Kind::kHeader;
  } else if (key == "json") {
    rule.kind = TypeRule::Kind::kJson;
  } else {
    return Status::InvalidArgument("unknown rule (use \"header\" or \"json\")", at);
  }
  const json::string* s = value.if_string();
  if (!s) return Status::InvalidArgument("expects a string", at);
  rule.name = std::string(Sv(*s));
  if (rule.kind == TypeRule::Kind::kHeader) {
    if (!IsHttpToken(rule.name)) {
      return Status::InvalidArgument(RenderString(rule.name) + ": not a valid header name", at);
    }
    return rule;
  }
  if (rule.name.size() > kMaxEventTypeBytes) {
    return Status::InvalidArgument(
        "longer than " + std::to_string(kMaxEventTypeBytes) + " characters", at);
  }
  rule.path = SplitPath(rule.name);
  for (const std::string& name : rule.path) {
    if (name.empty()) {
      return Status::InvalidArgument(
          RenderString(rule.name) + ": expects field names separated by dots", at);
    }
  }
  if (rule.path.size() > kMaxPathNames) {
    return Status::InvalidArgument(
        RenderString(rule.name) + ": at most " + std::to_string(kMaxPathNames) + " names", at);
  }
  return rule;
}

boost::json::object TypeRuleToJson(const TypeRule& rule) {
  return json::object{{rule.kind == TypeRule::Kind::kHeader ? "header" : "json", rule.name}};
}

bool IsValidEventType(std::string_view type) {
  if (type.empty() || type.size() > kMaxEventTypeBytes) return false;
  for (char c : type) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) return false;
  }
  return IsValidUtf8(type);
}

std::optional<std::string> DeriveEventType(std::string_view scheme,
                                           const std::optional<TypeRule>& rule, HeaderSpan headers,
                                           const boost::json::value* body) {
  if (rule) {
    if (rule->kind == TypeRule::Kind::kHeader) return Valid(FindHeader(headers, rule->name));
    return Valid(StringAt(body, rule->path));
  }
  if (scheme == "stripe" || scheme == "standard") return Valid(StringAt(body, kTypeKey));
  if (scheme == "shopify") return Valid(FindHeader(headers, "X-Shopify-Topic"));
  if (scheme == "github") {
    const std::optional<std::string_view> event = FindHeader(headers, "X-GitHub-Event");
    if (!event || event->empty()) return std::nullopt;
    const std::optional<std::string_view> action = StringAt(body, kActionKey);
    if (!action || action->empty()) return Valid(event);
    std::string type;
    type.reserve(event->size() + 1 + action->size());
    type.append(*event).append(".").append(*action);
    return Valid(type);
  }
  return std::nullopt;
}

}  // namespace hookrelay::routing
