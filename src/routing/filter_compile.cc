// Validating a filter document and compiling it into the tree filter_match.cc evaluates.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serializer.hpp>
#include <boost/json/string.hpp>
#include <memory>
#include <string>
#include <vector>

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

using Compiled = Filter::Compiled;

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
      if (!IsHttpToken(key)) return Error(sub, "not a valid header name");
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

}  // namespace hookrelay::routing
