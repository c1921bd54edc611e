#include "model/json_fields.h"

#include <boost/json.hpp>
#include <cctype>

#include "common/units.h"

namespace hookrelay::model {

namespace json = boost::json;

namespace {
std::string KindOf(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "a value";
}
}  // namespace

Status CheckKnownFields(const json::object& obj, std::initializer_list<std::string_view> allowed) {
  for (const auto& kv : obj) {
    bool known = false;
    for (std::string_view a : allowed) known = known || kv.key() == a;
    if (!known) {
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return Status::InvalidArgument(
          "unknown field \"" + std::string(kv.key()) + "\" (known fields: " + list + ")",
          std::string(kv.key()));
    }
  }
  return Status::Ok();
}

Result<std::string> GetString(const json::value& v, std::string_view field) {
  if (!v.is_string()) {
    return Status::InvalidArgument("must be a string, not " + KindOf(v), std::string(field));
  }
  return std::string(v.as_string());
}

Result<bool> GetBool(const json::value& v, std::string_view field) {
  if (!v.is_bool()) {
    return Status::InvalidArgument("must be true or false, not " + KindOf(v), std::string(field));
  }
  return v.as_bool();
}

Result<int64_t> GetInt(const json::value& v, std::string_view field, int64_t min, int64_t max) {
  int64_t n;
  if (v.is_int64()) {
    n = v.as_int64();
  } else if (v.is_uint64() && v.as_uint64() <= static_cast<uint64_t>(INT64_MAX)) {
    n = static_cast<int64_t>(v.as_uint64());
  } else if (v.is_uint64()) {
    n = INT64_MAX;
  } else {
    return Status::InvalidArgument("must be a whole number, not " + KindOf(v), std::string(field));
  }
  if (n < min || n > max) {
    return Status::InvalidArgument("must be between " + std::to_string(min) + " and " +
                                       std::to_string(max) + ", not " + std::to_string(n),
                                   std::string(field));
  }
  return n;
}

Result<Duration> GetDuration(const json::value& v, std::string_view field) {
  if (!v.is_string()) {
    return Status::InvalidArgument(
        "must be a duration string such as \"30s\" or \"5m\", not " + KindOf(v),
        std::string(field));
  }
  auto d = ParseDuration(v.as_string());
  if (!d.ok()) return Status::InvalidArgument(d.status().message(), std::string(field));
  return *d;
}

Result<uint64_t> GetByteSize(const json::value& v, std::string_view field) {
  if (v.is_int64() && v.as_int64() >= 0) return static_cast<uint64_t>(v.as_int64());
  if (!v.is_string()) {
    return Status::InvalidArgument("must be a size such as \"5MiB\", not " + KindOf(v),
                                   std::string(field));
  }
  auto n = ParseByteSize(v.as_string());
  if (!n.ok()) return Status::InvalidArgument(n.status().message(), std::string(field));
  return *n;
}

Status ValidateName(std::string_view name, std::string_view field) {
  if (name.empty() || name.size() > 64) {
    return Status::InvalidArgument("must be 1 to 64 characters", std::string(field));
  }
  if (!std::isalnum(static_cast<unsigned char>(name[0]))) {
    return Status::InvalidArgument("must start with a letter or digit", std::string(field));
  }
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return Status::InvalidArgument(
          "may contain only letters, digits, '_', '-' and '.' (found '" + std::string(1, c) + "')",
          std::string(field));
    }
  }
  return Status::Ok();
}

}  // namespace hookrelay::model
