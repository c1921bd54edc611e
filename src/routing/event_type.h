#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "routing/verdict.h"

namespace hookrelay::routing {

inline constexpr size_t kMaxEventTypeBytes = 256;

// A source's own rule for where its events' type is: `{"header": "X-Event"}` (that header's
// value) or `{"json": "meta.kind"}` (the string at that path of the JSON body, split at dots and
// read through objects only). When a source has one, it replaces its scheme's default.
struct TypeRule {
  enum class Kind { kHeader, kJson };
  Kind kind = Kind::kHeader;
  std::string name;               // the header's name, or the path as written ("meta.kind")
  std::vector<std::string> path;  // kJson: `name` split at dots

  friend bool operator==(const TypeRule&, const TypeRule&) = default;
};

// Parses a type rule. InvalidArgument otherwise, whose field is `field` ("sources[0].type") or,
// for a problem with one key, `field` + ".header" / ".json":
//   field "type", message "must be {\"header\": \"X-Event\"} or {\"json\": \"meta.kind\"}"
//   field "type.json", message "\"meta..kind\": expects field names separated by dots"
// A header name must be an HTTP token; a path has 1 to 16 non-empty names and at most 256 bytes.
// REQUIRES: `v` is not null (a null rule is no rule: the caller skips it).
Result<TypeRule> ParseTypeRule(const boost::json::value& v, std::string_view field);
// {"header": name} or {"json": path}: what ParseTypeRule reads back.
boost::json::object TypeRuleToJson(const TypeRule& rule);

// True for a type hookrelay keeps: 1 to 256 bytes of valid UTF-8 without control characters.
bool IsValidEventType(std::string_view type);

// The type of an event at ingest (pure: reads only its arguments).
//   - With `rule`: the header or JSON string it names, and nothing else (no fallback to the
//     scheme).
//   - Otherwise by `scheme`, the source's verification scheme name:
//     "stripe" and "standard" (Standard Webhooks): the body's top-level "type";
//     "github": the X-GitHub-Event header, followed by "." and the body's "action" when that is a
//     non-empty string ("pull_request.opened", "ping");
//     "shopify": the X-Shopify-Topic header ("orders/create");
//     any other scheme ("hmac", "" for none): no type.
// `body` is the parsed JSON body, nullptr when absent or not JSON. An event whose type cannot be
// read (missing, not a string, or not IsValidEventType) has none: nullopt, not an error.
std::optional<std::string> DeriveEventType(std::string_view scheme,
                                           const std::optional<TypeRule>& rule, HeaderSpan headers,
                                           const boost::json::value* body);

}  // namespace hookrelay::routing
