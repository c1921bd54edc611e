#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>

#include "common/result.h"
#include "routing/verdict.h"

namespace hookrelay::routing {

inline constexpr int kMaxFilterDepth = 16;            // levels of nested objects and arrays
inline constexpr size_t kMaxFilterBytes = 16 * 1024;  // serialized compactly

// What a filter is matched against: the event's header fields and its body parsed as JSON.
// Both are borrowed for the duration of the call.
struct MatchInput {
  HeaderSpan headers;
  // The parsed body; nullptr when the event has no body or its body is not JSON. Every body
  // condition then sees its field missing, and a failure is told as "body: the body is not JSON".
  const boost::json::value* body = nullptr;
};

// A route's content filter: a JSON document matched against {"headers": {…}, "body": …} of an
// event. docs/routing.md is the user's reference; in short:
//
//   - The top level takes "headers", "body", "$and", "$or", "$not" (anything else is refused, so a
//     typo cannot make a filter that silently never matches). `{}` matches every event.
//   - Under "body", a plain value (string, number, bool, null, array) is deep equality; an object
//     without `$` keys matches nested fields; an object of `$` keys is a set of operators that
//     must all hold: $eq $neq $in $nin $exists $gt $gte $lt $lte $prefix $suffix $contains, and
//     $and $or $not over conditions at the same level. `$` and plain keys never mix in one object.
//     Keys are field names, never dotted paths.
//   - Numbers compare as numbers whatever their JSON form (1 == 1.0 == 1e0); a number never equals
//     a string. $gt $gte $lt $lte take a number or a string: numbers compare with numbers, strings
//     with strings by their UTF-8 bytes (so ISO 8601 times in one format compare in time order);
//     across kinds the condition fails.
//   - When the event's field is an array (or a path goes through arrays of objects), a condition
//     holds when it holds for any element, as in MongoDB, except the array-wide ones: $exists,
//     $contains, and equality ($eq, $in, a plain value) with an array operand.
//   - A missing field fails every condition except `$exists: false`, `$neq`, `$nin` and a `$not`
//     whose inner condition fails: those are negations of "some value satisfies …".
//   - Under "headers", keys are header names, matched case-insensitively; values are strings and
//     operands must be strings. A header sent several times matches when any of its fields does
//     (and $neq, $nin, `$exists: false`, $not when none does).
//
// Immutable once parsed; copies share the compiled tree, and Matches and Match may be called from
// many threads at once.
class Filter {
 public:
  // The filter `{}`: matches every event.
  Filter();

  // Validates and compiles `doc`. InvalidArgument otherwise, with `field` ("routes[2].filter")
  // extended by the path inside the filter as the Status's field, and the problem as its message:
  //   field "routes[2].filter.body.amount.$gt", message "expects a number or a string"
  //   field "routes[0].filter.body.$regex",     message "unknown operator (known: $eq, …)"
  // Refused too: a document nested deeper than kMaxFilterDepth (the top-level object is level 1;
  // checked before anything recurses) or longer than kMaxFilterBytes when serialized.
  // The work done is bounded by the size of `doc`, whatever its depth.
  static Result<Filter> Parse(const boost::json::value& doc, std::string_view field);

  // True when the event satisfies the filter. Does not allocate. Its recursion is bounded by the
  // filter's depth, never by the event's.
  bool Matches(const MatchInput& input) const;
  // Matches, with the first condition that failed when not matched:
  //   "body.livemode: expected true, got false"
  //   "body.data.object.amount: expected a value >= 1000, got 250"
  //   "headers.x-shop-domain: missing"
  //   "body: the body is not JSON"
  // Allocates only when not matched.
  Verdict Match(const MatchInput& input) const;

  // The document as given to Parse (`{}` for a default-constructed filter).
  const boost::json::value& document() const;

  struct Compiled;  // the document and its compiled tree (filter_tree.h)

 private:
  explicit Filter(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace hookrelay::routing
