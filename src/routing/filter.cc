#include "routing/filter.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serializer.hpp>
#include <boost/json/string.hpp>
#include <cmath>
#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/ascii.h"
#include "routing/render.h"

namespace hookrelay::routing {
namespace {

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

std::string_view Sv(const json::string& s) { return {s.data(), s.size()}; }

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

}  // namespace

struct Filter::Compiled {
  json::value doc;
  Node root;
};

namespace {

using Compiled = Filter::Compiled;

// ---------------------------------------------------------------------------------------------
// Values

// Numbers of any JSON form (int64, uint64, double) compared by value, exactly: 2^63 as a uint64
// and 9223372036854775807 as an int64 are not equal, though both round to the same double.
std::partial_ordering CompareIntDouble(int64_t i, double d) {
  if (std::isnan(d)) return std::partial_ordering::unordered;
  if (d >= 9223372036854775808.0) return std::partial_ordering::less;
  if (d < -9223372036854775808.0) return std::partial_ordering::greater;
  const double t = std::trunc(d);
  const auto ti = static_cast<int64_t>(t);
  if (i != ti) return i < ti ? std::partial_ordering::less : std::partial_ordering::greater;
  return 0.0 <=> (d - t);
}

std::partial_ordering CompareUintDouble(uint64_t u, double d) {
  if (std::isnan(d)) return std::partial_ordering::unordered;
  if (d < 0) return std::partial_ordering::greater;
  if (d >= 18446744073709551616.0) return std::partial_ordering::less;
  const double t = std::trunc(d);
  const auto tu = static_cast<uint64_t>(t);
  if (u != tu) return u < tu ? std::partial_ordering::less : std::partial_ordering::greater;
  return 0.0 <=> (d - t);
}

std::partial_ordering CompareIntUint(int64_t i, uint64_t u) {
  if (i < 0) return std::partial_ordering::less;
  return static_cast<uint64_t>(i) <=> u;
}

std::partial_ordering Reverse(std::partial_ordering o) { return 0 <=> o; }

// REQUIRES: both are numbers.
std::partial_ordering CompareNumbers(const json::value& a, const json::value& b) {
  switch (a.kind()) {
    case json::kind::int64:
      switch (b.kind()) {
        case json::kind::int64: return a.get_int64() <=> b.get_int64();
        case json::kind::uint64: return CompareIntUint(a.get_int64(), b.get_uint64());
        default: return CompareIntDouble(a.get_int64(), b.get_double());
      }
    case json::kind::uint64:
      switch (b.kind()) {
        case json::kind::int64: return Reverse(CompareIntUint(b.get_int64(), a.get_uint64()));
        case json::kind::uint64: return a.get_uint64() <=> b.get_uint64();
        default: return CompareUintDouble(a.get_uint64(), b.get_double());
      }
    default:
      switch (b.kind()) {
        case json::kind::int64: return Reverse(CompareIntDouble(b.get_int64(), a.get_double()));
        case json::kind::uint64: return Reverse(CompareUintDouble(b.get_uint64(), a.get_double()));
        default: return a.get_double() <=> b.get_double();
      }
  }
}

// Numbers with numbers, strings with strings (by UTF-8 bytes); anything else is unordered.
std::partial_ordering Compare(const json::value& v, const json::value& x) {
  if (v.is_number() && x.is_number()) return CompareNumbers(v, x);
  if (v.is_string() && x.is_string()) {
    return Sv(v.get_string()) <=> Sv(x.get_string());
  }
  return std::partial_ordering::unordered;
}

// Deep equality with numbers compared by value. The recursion ends with the shallower of the
// two, and one of them is always a filter's operand (at most kMaxFilterDepth deep).
bool DeepEqual(const json::value& a, const json::value& b) {
  if (a.is_number() && b.is_number()) return CompareNumbers(a, b) == 0;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case json::kind::null: return true;
    case json::kind::bool_: return a.get_bool() == b.get_bool();
    case json::kind::string: return a.get_string() == b.get_string();
    case json::kind::array: {
      const json::array& x = a.get_array();
      const json::array& y = b.get_array();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!DeepEqual(x[i], y[i])) return false;
      }
      return true;
    }
    case json::kind::object: {
      const json::object& x = a.get_object();
      const json::object& y = b.get_object();
      if (x.size() != y.size()) return false;
      for (const auto& [key, value] : x) {
        const json::value* other = y.if_contains(key);
        if (!other || !DeepEqual(value, *other)) return false;
      }
      return true;
    }
    default: return false;  // numbers were handled above
  }
}

// Equality where a non-array operand also matches an element of an array value.
bool EqualsOrHas(const json::value& v, const json::value& x) {
  if (DeepEqual(v, x)) return true;
  if (x.is_array()) return false;  // equality with an array is array-wide
  if (const json::array* a = v.if_array()) {
    for (const json::value& e : *a) {
      if (DeepEqual(e, x)) return true;
    }
  }
  return false;
}

bool IsComparison(Op op) {
  return op == Op::kGt || op == Op::kGte || op == Op::kLt || op == Op::kLte;
}

bool OrderHolds(Op op, std::partial_ordering o) {
  switch (op) {
    case Op::kGt: return o > 0;
    case Op::kGte: return o >= 0;
    case Op::kLt: return o < 0;
    case Op::kLte: return o <= 0;
    default: return false;
  }
}

// A comparison, $prefix or $suffix on one value (not an array).
bool ScalarHolds(const Node& n, const json::value& v) {
  switch (n.op) {
    case Op::kPrefix:
      return v.is_string() && Sv(v.get_string()).starts_with(Sv(n.operand.get_string()));
    case Op::kSuffix:
      return v.is_string() && Sv(v.get_string()).ends_with(Sv(n.operand.get_string()));
    default: return OrderHolds(n.op, Compare(v, n.operand));
  }
}

// The leaf's condition (not negated) on one value of its field.
bool ValueHolds(const Node& n, const json::value& v) {
  switch (n.op) {
    case Op::kExists: return true;
    case Op::kEq: return EqualsOrHas(v, n.operand);
    case Op::kIn:
      for (const json::value& x : n.operand.get_array()) {
        if (EqualsOrHas(v, x)) return true;
      }
      return false;
    case Op::kContains:
      if (const json::string* s = v.if_string()) {
        return n.operand.is_string() &&
               Sv(*s).find(Sv(n.operand.get_string())) != std::string_view::npos;
      }
      if (const json::array* a = v.if_array()) {
        for (const json::value& e : *a) {
          if (DeepEqual(e, n.operand)) return true;
        }
      }
      return false;
    default:
      if (const json::array* a = v.if_array()) {
        for (const json::value& e : *a) {
          if (ScalarHolds(n, e)) return true;
        }
        return false;
      }
      return ScalarHolds(n, v);
  }
}

// The leaf's condition (not negated) on one header value. REQUIRES: the operand is a string or
// an array of strings (Parse checks it under "headers").
bool HeaderHolds(const Node& n, std::string_view v) {
  switch (n.op) {
    case Op::kExists: return true;
    case Op::kEq: return v == Sv(n.operand.get_string());
    case Op::kIn:
      for (const json::value& x : n.operand.get_array()) {
        if (v == Sv(x.get_string())) return true;
      }
      return false;
    case Op::kPrefix: return v.starts_with(Sv(n.operand.get_string()));
    case Op::kSuffix: return v.ends_with(Sv(n.operand.get_string()));
    case Op::kContains: return v.find(Sv(n.operand.get_string())) != std::string_view::npos;
    default: return OrderHolds(n.op, v <=> Sv(n.operand.get_string()));
  }
}

// Calls `f` on each value found at `path` below `v` until it returns true; returns whether it
// did. An array on the way is gone through: each of its elements that is an object is looked
// into (MongoDB's rule for dotted paths). The recursion is bounded by the path's length.
template <typename F>
bool AnyAt(const json::value& v, std::span<const std::string> path, F& f) {
  if (path.empty()) return f(v);
  if (const json::object* o = v.if_object()) {
    const json::value* child = o->if_contains(path.front());
    return child && AnyAt(*child, path.subspan(1), f);
  }
  if (const json::array* a = v.if_array()) {
    for (const json::value& e : *a) {
      if (e.is_object() && AnyAt(e, path, f)) return true;
    }
  }
  return false;
}

struct Context {
  HeaderSpan headers;
  const json::value* body;
  // Where body leaves start looking: the value reached by the first `offset` keys of their paths
  // (nullptr when nothing is there), as the scopes above them found it.
  const json::value* base;
  size_t offset;
};

// The context below a kScope: its path looked up once. A path through a single object at each
// step gives the value at its end (or nullptr, missing); one that meets an array stops there, so
// that each field below goes through the array on its own, as AnyAt does for a whole path.
Context Enter(const Node& scope, Context c) {
  for (; c.offset < scope.path.size(); ++c.offset) {
    if (!c.base) break;
    if (const json::object* o = c.base->if_object()) {
      c.base = o->if_contains(scope.path[c.offset]);
    } else if (c.base->is_array()) {
      return c;
    } else {
      c.base = nullptr;  // a scalar has no fields
    }
  }
  c.offset = scope.path.size();
  return c;
}

// Whether some value of the leaf's field satisfies its condition, ignoring `negate`.
bool LeafHolds(const Node& n, const Context& c) {
  if (n.side == Side::kHeaders) {
    for (const HeaderField& h : c.headers) {
      if (AsciiEqualsIgnoreCase(h.first, n.path.front()) && HeaderHolds(n, h.second)) return true;
    }
    return false;
  }
  if (!c.base) return false;
  auto holds = [&n](const json::value& v) { return ValueHolds(n, v); };
  return AnyAt(*c.base, std::span<const std::string>(n.path).subspan(c.offset), holds);
}

bool Eval(const Node& n, const Context& c) {
  switch (n.op) {
    case Op::kTrue: return true;
    case Op::kAnd:
      for (const Node& child : n.children) {
        if (!Eval(child, c)) return false;
      }
      return true;
    case Op::kOr:
      for (const Node& child : n.children) {
        if (Eval(child, c)) return true;
      }
      return false;
    case Op::kNot: return !Eval(n.children.front(), c);
    case Op::kScope: return Eval(n.children.front(), Enter(n, c));
    default: return LeafHolds(n, c) != n.negate;
  }
}

// ---------------------------------------------------------------------------------------------
// Reasons

// A value of a field, as found in the event: a JSON value or a header's text.
struct Found {
  const json::value* value = nullptr;
  std::string_view text;
  size_t count = 0;  // how many values the field has (several through arrays or repeated headers)

  bool IsString() const { return value ? value->is_string() : true; }
  bool IsArray() const { return value && value->is_array(); }
  bool IsNumber() const { return value && value->is_number(); }
  std::string Shown() const { return value ? RenderValue(*value) : RenderString(text); }
};

// The first value of the leaf's field, and how many it has; with `only_holding`, the first value
// that satisfies the leaf's condition (ignoring `negate`), and a count of 1.
Found FindValue(const Node& n, const Context& c, bool only_holding) {
  Found found;
  if (n.side == Side::kHeaders) {
    for (const HeaderField& h : c.headers) {
      if (!AsciiEqualsIgnoreCase(h.first, n.path.front())) continue;
      if (only_holding && !HeaderHolds(n, h.second)) continue;
      if (found.count++ == 0) found.text = h.second;
      if (only_holding) break;
    }
    return found;
  }
  if (!c.base) return found;
  auto visit = [&](const json::value& v) {
    if (only_holding && !ValueHolds(n, v)) return false;
    if (found.count++ == 0) found.value = &v;
    return only_holding;
  };
  AnyAt(*c.base, std::span<const std::string>(n.path).subspan(c.offset), visit);
  return found;
}

std::string_view ComparisonSign(Op op) {
  switch (op) {
    case Op::kGt: return ">";
    case Op::kGte: return ">=";
    case Op::kLt: return "<";
    default: return "<=";
  }
}

// What a leaf (not negated) wanted, said against the value it got.
std::string Expected(const Node& n, const Found& got) {
  switch (n.op) {
    case Op::kEq: return n.shown;
    case Op::kIn: return "one of " + n.shown;
    case Op::kPrefix: return "a string starting with " + n.shown;
    case Op::kSuffix: return "a string ending with " + n.shown;
    case Op::kContains:
      if (got.IsArray()) return "an array containing " + n.shown;
      if (got.IsString()) return "a string containing " + n.shown;
      if (n.operand.is_string()) return "a string or an array containing " + n.shown;
      return "an array containing " + n.shown;
    default: return "a value " + std::string(ComparisonSign(n.op)) + " " + n.shown;
  }
}

std::string Joined(const std::string& where, std::string_view what) {
  return where.empty() ? std::string(what) : where + "." + std::string(what);
}

std::string ExplainLeaf(const Node& n, const Context& c) {
  if (n.negate) {
    // Some value satisfies the condition the leaf negates.
    const Found got = FindValue(n, c, true);
    std::string wanted;
    switch (n.op) {
      case Op::kExists:
        wanted = n.side == Side::kHeaders ? "no such header" : "no such field";
        break;
      case Op::kIn: wanted = "none of " + n.shown; break;
      default: wanted = "anything but " + n.shown; break;
    }
    return n.where + ": expected " + wanted + ", got " + got.Shown();
  }
  const Found got = FindValue(n, c, false);
  if (got.count == 0) {
    if (n.side == Side::kBody && !c.body) return "body: the body is not JSON";
    return n.where + ": missing";
  }
  std::string reason = n.where + ": expected " + Expected(n, got) + ", got " + got.Shown();
  if (IsComparison(n.op) && !got.IsArray()) {
    if (n.operand.is_number() && got.IsString()) reason += " (a string, not a number)";
    if (n.operand.is_string() && got.IsNumber()) reason += " (a number, not a string)";
  }
  if (got.count > 1) reason += " (and " + std::to_string(got.count - 1) + " more)";
  return reason;
}

// Why `n` does not hold. REQUIRES: !Eval(n, c).
std::string Explain(const Node& n, const Context& c) {
  switch (n.op) {
    case Op::kTrue: return {};
    case Op::kAnd:
      for (const Node& child : n.children) {
        if (!Eval(child, c)) return Explain(child, c);
      }
      return {};
    case Op::kOr:
      return Joined(n.where, "$or") +
             ": no alternative matched (first: " + Explain(n.children.front(), c) + ")";
    case Op::kNot: return Joined(n.where, "$not") + ": matched " + n.shown;
    case Op::kScope: return Explain(n.children.front(), Enter(n, c));
    default: return ExplainLeaf(n, c);
  }
}

// ---------------------------------------------------------------------------------------------
// Parsing

constexpr std::string_view kKnownOperators =
    "$eq, $neq, $in, $nin, $exists, $gt, $gte, $lt, $lte, $prefix, $suffix, $contains, $and, "
    "$or, $not";

struct OperatorSpec {
  std::string_view name;
  Op op;
  bool negate;
};

constexpr OperatorSpec kOperators[] = {
    {"$eq", Op::kEq, false},         {"$neq", Op::kEq, true},
    {"$in", Op::kIn, false},         {"$nin", Op::kIn, true},
    {"$exists", Op::kExists, false}, {"$gt", Op::kGt, false},
    {"$gte", Op::kGte, false},       {"$lt", Op::kLt, false},
    {"$lte", Op::kLte, false},       {"$prefix", Op::kPrefix, false},
    {"$suffix", Op::kSuffix, false}, {"$contains", Op::kContains, false},
    {"$and", Op::kAnd, false},       {"$or", Op::kOr, false},
    {"$not", Op::kNot, false},
};

const OperatorSpec* FindOperator(std::string_view name) {
  for (const OperatorSpec& spec : kOperators) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

bool IsLogical(Op op) { return op == Op::kAnd || op == Op::kOr || op == Op::kNot; }
bool IsLeaf(Op op) { return op >= Op::kExists; }

bool IsOperatorKey(std::string_view key) { return !key.empty() && key.front() == '$'; }

// RFC 9110 token characters.
bool IsHeaderName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z')) continue;
    if (std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) return false;
  }
  return true;
}

// `at` extended by an object key or an array index.
std::string Sub(const std::string& at, std::string_view key) {
  return at.empty() ? std::string(key) : at + "." + std::string(key);
}
std::string Index(const std::string& at, size_t i) { return at + "[" + std::to_string(i) + "]"; }

// Where the first value nested past kMaxFilterDepth is (appended to `at` while unwinding, so
// nothing is built unless the filter is refused); false when none is. `depth` is the level of
// `v`. The recursion stops at kMaxFilterDepth + 1 levels whatever the depth of `v`.
bool TooDeep(const json::value& v, int depth, std::vector<std::string>& at) {
  if (!v.is_structured()) return false;
  if (depth > kMaxFilterDepth) return true;
  if (const json::object* o = v.if_object()) {
    for (const auto& [key, e] : *o) {
      if (TooDeep(e, depth + 1, at)) {
        at.push_back("." + std::string(key));
        return true;
      }
    }
    return false;
  }
  const json::array& a = v.get_array();
  for (size_t i = 0; i < a.size(); ++i) {
    if (TooDeep(a[i], depth + 1, at)) {
      at.push_back("[" + std::to_string(i) + "]");
      return true;
    }
  }
  return false;
}

// Whether `v` serializes to more than `limit` bytes; stops reading once it does.
bool LongerThan(const json::value& v, size_t limit) {
  json::serializer sr;
  sr.reset(&v);
  char buf[4096];
  size_t n = 0;
  while (!sr.done()) {
    n += sr.read(buf, sizeof buf).size();
    if (n > limit) return true;
  }
  return false;
}

// The field a condition applies to.
struct Field {
  Side side;
  std::vector<std::string> path;
  std::string where;
};

// The levels of a filter, each with what it accepts.
enum class Level { kTop, kHeaders, kField };

class Compiler {
 public:
  // `at` is the error path of the value being compiled (the caller's field to start with).
  Status Top(const json::value& v, const std::string& at, Node& out) {
    const json::object* o = v.if_object();
    if (!o) return Error(at, "expects an object with \"headers\", \"body\", $and, $or or $not");
    if (o->empty()) {
      out.op = Op::kTrue;
      return Status::Ok();
    }
    HR_RETURN_IF_ERROR(CheckNotMixed(*o, at));
    std::vector<Node> parts;
    for (const auto& [key, value] : *o) {
      const std::string sub = Sub(at, key);
      Node& n = parts.emplace_back();
      if (key == "headers") {
        HR_RETURN_IF_ERROR(Headers(value, sub, n));
      } else if (key == "body") {
        HR_RETURN_IF_ERROR(Condition(value, Field{Side::kBody, {}, "body"}, sub, n));
      } else if (IsOperatorKey(key)) {
        const OperatorSpec* spec = FindOperator(key);
        if (!spec) return UnknownOperator(sub);
        if (!IsLogical(spec->op)) {
          return Error(sub,
                       "not allowed at the top level, which takes \"headers\", \"body\", "
                       "$and, $or and $not");
        }
        HR_RETURN_IF_ERROR(Logical(*spec, value, Level::kTop, nullptr, "", sub, n));
      } else {
        return Error(sub, "unknown key (expected \"headers\", \"body\", $and, $or or $not)");
      }
    }
    out = AllOf(std::move(parts), "");
    return Status::Ok();
  }

 private:
  static Status Error(const std::string& at, std::string message) {
    return Status::InvalidArgument(std::move(message), at);
  }
  static Status UnknownOperator(const std::string& at) {
    return Error(at, "unknown operator (known: " + std::string(kKnownOperators) + ")");
  }

  static Status CheckNotMixed(const json::object& o, const std::string& at) {
    std::string_view op, plain;
    for (const auto& [key, value] : o) {
      (IsOperatorKey(key) ? op : plain) = key;
    }
    if (op.empty() || plain.empty()) return Status::Ok();
    return Error(at, "mixes operators (" + std::string(op) + ") and fields (\"" +
                         std::string(plain) +
                         "\") in one object; put them in separate objects "
                         "under $and");
  }

  static Node AllOf(std::vector<Node> parts, std::string where) {
    if (parts.size() == 1) return std::move(parts.front());
    Node n;
    n.op = Op::kAnd;
    n.where = std::move(where);
    n.children = std::move(parts);
    return n;
  }

  Status Headers(const json::value& v, const std::string& at, Node& out) {
    const json::object* o = v.if_object();
    if (!o) return Error(at, "expects an object of header names");
    if (o->empty()) return Error(at, "an empty object; name a header");
    HR_RETURN_IF_ERROR(CheckNotMixed(*o, at));
    std::vector<Node> parts;
    for (const auto& [key, value] : *o) {
      const std::string sub = Sub(at, key);
      Node& n = parts.emplace_back();
      if (IsOperatorKey(key)) {
        const OperatorSpec* spec = FindOperator(key);
        if (!spec) return UnknownOperator(sub);
        if (!IsLogical(spec->op)) {
          return Error(sub, "applies to one header: name it first (\"x-event\": {\"" +
                                std::string(key) + "\": …})");
        }
        HR_RETURN_IF_ERROR(Logical(*spec, value, Level::kHeaders, nullptr, "headers", sub, n));
        continue;
      }
      if (!IsHeaderName(key)) return Error(sub, "not a valid header name");
      const std::string name = AsciiLower(key);
      HR_RETURN_IF_ERROR(
          Condition(value, Field{Side::kHeaders, {name}, "headers." + name}, sub, n));
    }
    out = AllOf(std::move(parts), "headers");
    return Status::Ok();
  }

  // A condition on the field `f`: a plain value, nested fields, or operators.
  Status Condition(const json::value& v, const Field& f, const std::string& at, Node& out) {
    const bool header = f.side == Side::kHeaders;
    const json::object* o = v.if_object();
    if (!o) {
      if (header && !v.is_string()) return Error(at, kHeaderString);
      Leaf(Op::kEq, false, v, f, out);
      return Status::Ok();
    }
    if (o->empty()) {
      return Error(at,
                   "an empty object matches nothing specific; use {\"$exists\": true}, or "
                   "{\"$eq\": {}} for an empty object");
    }
    HR_RETURN_IF_ERROR(CheckNotMixed(*o, at));
    std::vector<Node> parts;
    if (!IsOperatorKey(o->begin()->key())) {
      if (header) {
        return Error(at,
                     "a header's value is a string, without fields; use an operator such as "
                     "{\"$eq\": \"…\"}");
      }
      for (const auto& [key, value] : *o) {
        Field sub{f.side, f.path, f.where + "." + std::string(key)};
        sub.path.emplace_back(key);
        HR_RETURN_IF_ERROR(Condition(value, sub, Sub(at, key), parts.emplace_back()));
      }
    } else {
      for (const auto& [key, value] : *o) {
        HR_RETURN_IF_ERROR(Operator(key, value, f, Sub(at, key), parts.emplace_back()));
      }
    }
    out = AllOf(std::move(parts), f.where);
    if (f.side == Side::kBody && !f.path.empty() && !IsLeaf(out.op)) {
      // Several conditions below one field: look the field up once for all of them.
      Node scope;
      scope.op = Op::kScope;
      scope.path = f.path;
      scope.children.push_back(std::move(out));
      out = std::move(scope);
    }
    return Status::Ok();
  }

  Status Operator(std::string_view key, const json::value& operand, const Field& f,
                  const std::string& at, Node& out) {
    const OperatorSpec* spec = FindOperator(key);
    if (!spec) return UnknownOperator(at);
    if (IsLogical(spec->op)) return Logical(*spec, operand, Level::kField, &f, f.where, at, out);
    const bool header = f.side == Side::kHeaders;
    bool negate = spec->negate;
    switch (spec->op) {
      case Op::kExists:
        if (!operand.is_bool()) return Error(at, "expects true or false");
        negate = !operand.get_bool();
        break;
      case Op::kIn: {
        const json::array* a = operand.if_array();
        if (!a || a->empty()) return Error(at, "expects a non-empty array");
        if (header) {
          for (size_t i = 0; i < a->size(); ++i) {
            if (!(*a)[i].is_string()) return Error(Index(at, i), kHeaderString);
          }
        }
        break;
      }
      case Op::kGt:
      case Op::kGte:
      case Op::kLt:
      case Op::kLte:
        if (header && !operand.is_string()) return Error(at, kHeaderString);
        if (!operand.is_number() && !operand.is_string()) {
          return Error(at, "expects a number or a string");
        }
        break;
      case Op::kPrefix:
      case Op::kSuffix:
        if (!operand.is_string()) return Error(at, "expects a string");
        break;
      default:  // $eq, $neq, $contains: any value
        if (header && !operand.is_string()) return Error(at, kHeaderString);
        break;
    }
    Leaf(spec->op, negate, operand, f, out);
    return Status::Ok();
  }

  // $and, $or, $not at `level` (for kField, on the field `f`).
  Status Logical(const OperatorSpec& spec, const json::value& operand, Level level, const Field* f,
                 const std::string& where, const std::string& at, Node& out) {
    auto one = [&](const json::value& v, const std::string& sub, Node& n) -> Status {
      switch (level) {
        case Level::kTop: return Top(v, sub, n);
        case Level::kHeaders: return Headers(v, sub, n);
        case Level::kField: return Condition(v, *f, sub, n);
      }
      return Status::Ok();
    };
    out.op = spec.op;
    out.where = where;
    if (spec.op == Op::kNot) {
      out.shown = RenderValue(operand);
      return one(operand, at, out.children.emplace_back());
    }
    const json::array* a = operand.if_array();
    if (!a || a->empty()) return Error(at, "expects a non-empty array");
    for (size_t i = 0; i < a->size(); ++i) {
      HR_RETURN_IF_ERROR(one((*a)[i], Index(at, i), out.children.emplace_back()));
    }
    return Status::Ok();
  }

  static void Leaf(Op op, bool negate, const json::value& operand, const Field& f, Node& out) {
    out.op = op;
    out.negate = negate;
    out.side = f.side;
    out.path = f.path;
    out.where = f.where;
    if (op != Op::kExists) {
      out.operand = operand;
      out.shown = RenderValue(operand);
    }
  }

  static constexpr const char* kHeaderString = "expects a string (header values are strings)";
};

const std::shared_ptr<const Compiled>& MatchAll() {
  static const auto* const kAll = new std::shared_ptr<const Compiled>(
      std::make_shared<const Compiled>(Compiled{json::object(), Node{}}));
  return *kAll;
}

}  // namespace

Filter::Filter() : compiled_(MatchAll()) {}

Result<Filter> Filter::Parse(const boost::json::value& doc, std::string_view field) {
  const std::string at(field);
  std::vector<std::string> deep;
  if (TooDeep(doc, 1, deep)) {
    std::string path = at;
    for (auto it = deep.rbegin(); it != deep.rend(); ++it) path += *it;
    if (at.empty() && !path.empty() && path.front() == '.') path.erase(0, 1);
    return Status::InvalidArgument(
        "nested deeper than " + std::to_string(kMaxFilterDepth) + " levels", path);
  }
  if (LongerThan(doc, kMaxFilterBytes)) {
    return Status::InvalidArgument(
        "longer than " + std::to_string(kMaxFilterBytes) + " bytes (16 KiB) as JSON", at);
  }
  auto compiled = std::make_shared<Compiled>();
  HR_RETURN_IF_ERROR(Compiler().Top(doc, at, compiled->root));
  compiled->doc = doc;
  return Filter(std::move(compiled));
}

bool Filter::Matches(const MatchInput& input) const {
  return Eval(compiled_->root, Context{input.headers, input.body, input.body, 0});
}

Verdict Filter::Match(const MatchInput& input) const {
  const Context c{input.headers, input.body, input.body, 0};
  if (Eval(compiled_->root, c)) return Verdict::Pass();
  return Verdict::Fail(Explain(compiled_->root, c));
}

const boost::json::value& Filter::document() const { return compiled_->doc; }

}  // namespace hookrelay::routing
