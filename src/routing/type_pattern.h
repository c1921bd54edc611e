#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "routing/verdict.h"

namespace hookrelay::routing {

inline constexpr size_t kMaxTypePatterns = 100;
inline constexpr size_t kMaxTypePatternBytes = 256;

// A route's `types`: exact event type names ("customer.subscription.updated") and prefixes ending
// in a wildcard ("invoice.*"). A `*` stands for one or more characters, so "invoice.*" matches
// "invoice.paid" and "invoice.payment.failed" but not "invoice" nor "invoice."; a lone "*" matches
// every event that has a type. Matching is case-sensitive (providers' types are lowercase).
//
// An empty set (the default, and what `types` absent or [] gives) is no constraint: every event
// matches, with or without a type. A non-empty set never matches an event without a type.
//
// Immutable once parsed; Matches and Match are safe to call from many threads at once.
class TypeSet {
 public:
  TypeSet() = default;

  bool empty() const { return patterns_.empty(); }
  // The patterns as given, in their order (duplicates kept): what the API and config show back.
  const std::vector<std::string>& patterns() const { return patterns_; }

  // True when `type` (nullopt: the event has no type) satisfies the set. Does not allocate.
  bool Matches(std::optional<std::string_view> type) const;
  // Matches, with the reason when not matched: "type invoice.paid is not in [customer.*]", or
  // "the event has no type; the route wants [customer.*]". The list is cut after about 120
  // characters ("[a.*, b.*, … 40 more]"). Allocates only when not matched.
  Verdict Match(std::optional<std::string_view> type) const;

  friend bool operator==(const TypeSet& a, const TypeSet& b) { return a.patterns_ == b.patterns_; }

 private:
  friend Result<TypeSet> ParseTypes(const std::vector<std::string>& patterns,
                                    std::string_view field);

  std::vector<std::string> patterns_;
  std::vector<std::string> exact_;     // sorted, for binary search
  std::vector<std::string> prefixes_;  // "invoice." for "invoice.*"
  bool any_ = false;                   // a lone "*"
  std::string shown_;                  // "[customer.*, invoice.paid]", for reasons
};

// Validates a route's types. Each pattern: 1 to 256 characters, printable ASCII without spaces
// (0x21-0x7E), with `*` only as its last character; at most 100 patterns. Duplicates are allowed.
// InvalidArgument otherwise, whose field is `field` ("types", "routes[2].types") followed by the
// pattern's index, and whose message quotes the pattern:
//   field "types[1]", message "\"*.paid\": a wildcard may only end a pattern"
//   field "types", message "at most 100 patterns, got 101"
Result<TypeSet> ParseTypes(const std::vector<std::string>& patterns, std::string_view field);

// One pattern on its own (an event list's or a bulk replay's `type`), checked as ParseTypes
// checks each: otherwise InvalidArgument with `field` as it is ("type"), its message naming it
// (`type: " a": only printable ASCII without spaces is allowed`), as the API shows it alone.
Status ValidateTypePattern(std::string_view pattern, std::string_view field);

// The same from JSON: an array of strings (null is the empty set). An element that is not a
// string is refused with its index ("types[0]: expects a string").
Result<TypeSet> ParseTypesFromJson(const boost::json::value& v, std::string_view field);

}  // namespace hookrelay::routing
