// Matching a compiled filter against an event, and the reason for the first condition that fails.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <cmath>
#include <compare>
#include <cstdint>
#include <span>
#include <string>

#include "common/ascii.h"
#include "routing/filter.h"
#include "routing/filter_tree.h"
#include "routing/render.h"

namespace hookrelay::routing {
namespace {

namespace json = boost::json;
using internal::Node;
using internal::Op;
using internal::Side;

std::string_view Sv(const json::string& s) { return {s.data(), s.size()}; }

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

}  // namespace

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
