#include "model/expiring_secret.h"

#include <boost/json.hpp>
#include <optional>

#include "common/time_format.h"
#include "model/json_fields.h"

namespace hookrelay::model {

namespace json = boost::json;

Result<ExpiringSecret> ParseExpiringSecret(const json::value& v, const std::string& field) {
  if (!v.is_object()) {
    return Status::InvalidArgument(
        "must be an object {\"secret\": \"…\", \"expires_at\": \"<RFC 3339 time>\"}", field);
  }
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(CheckKnownFields(o, {"secret", "expires_at"}).WithFieldPrefix(field));
  ExpiringSecret e;
  const json::value* secret = o.if_contains("secret");
  if (!secret) return Status::InvalidArgument("is required", field + ".secret");
  HR_ASSIGN_OR_RETURN(e.secret, GetString(*secret, field + ".secret"));
  if (e.secret.empty()) return Status::InvalidArgument("must not be empty", field + ".secret");
  const json::value* expires = o.if_contains("expires_at");
  if (!expires) return Status::InvalidArgument("is required", field + ".expires_at");
  HR_ASSIGN_OR_RETURN(std::string text, GetString(*expires, field + ".expires_at"));
  std::optional<TimePoint> at = ParseRfc3339(text);
  if (!at) {
    return Status::InvalidArgument("must be an RFC 3339 time such as \"2026-12-06T10:00:00Z\"",
                                   field + ".expires_at");
  }
  e.expires_at = *at;
  return e;
}

}  // namespace hookrelay::model
