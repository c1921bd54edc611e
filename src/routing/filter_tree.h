// The compiled form of a route filter, shared by filter_compile.cc and filter_match.cc (private).

#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "routing/filter.h"

namespace hookrelay::routing {
namespace internal {

namespace json = boost::json;

enum class Op : uint8_t {
  kTrue,  // `{}` at the top level
  kAnd,
  kOr,
  kNot,
  // Looks up `path` in the body once for its child, whose fields are all below it.
  kScope,
  // Leaves: a condition on one field.
  kExists,
  kEq,
  kIn,
  kGt,
  kGte,
  kLt,
  kLte,
  kPrefix,
  kSuffix,
  kContains,
};

enum class Side : uint8_t { kDocument, kHeaders, kBody };

// One condition of the compiled tree. Leaves hold their field's path already split, so matching
// walks the body without parsing anything.
struct Node {
  Op op = Op::kTrue;
  // Leaves: the condition is the negation of `op` ($neq, $nin, `$exists: false`): it holds when no
  // value of the field satisfies `op`, so it holds on a missing field.
  bool negate = false;
  Side side = Side::kDocument;
  // Leaves: the keys from the body down to the field ({} for the body itself), or for a header
  // its name in lowercase. kScope: the keys its child's fields all start with.
  std::vector<std::string> path;
  // Leaves: the field as reasons name it ("body.data.amount", "headers.x-event"). $or and $not:
  // the level they are written at ("" at the top level, "headers", "body.amount").
  std::string where;
  json::value operand;  // leaves
  std::string shown;    // leaves: the operand as reasons show it; $not: its condition
  std::vector<Node> children;
};

}  // namespace internal

struct Filter::Compiled {
  boost::json::value doc;
  internal::Node root;
};

}  // namespace hookrelay::routing
