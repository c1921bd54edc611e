#include "api/handler_util.h"

#include <boost/json.hpp>

#include "http/json_text.h"

namespace hookrelay::api {

namespace json = boost::json;

http::Response Json(const json::object& o) {
  http::Response r;
  r.body = http::SerializeJson(o);  // plain numbers: "rate": 50, not 5E1
  return r;
}

http::Response FromStatus(const Status& s) {
  switch (s.code()) {
    case Status::Code::kInvalidArgument:
      // The message names the field, also where it reads well only next to a form
      // ("must be an integer from 1 to 1000" → "limit: must be …").
      if (!s.field().empty() && s.message().find(s.field()) == std::string::npos) {
        return http::JsonError(400, Status::CodeName(s.code()), s.field() + ": " + s.message(),
                               s.field());
      }
      return http::JsonError(400, Status::CodeName(s.code()), s.message(), s.field());
    case Status::Code::kNotFound:
      return http::JsonError(404, Status::CodeName(s.code()), s.message());
    case Status::Code::kFailedPrecondition:
    case Status::Code::kAlreadyExists:
      return http::JsonError(409, Status::CodeName(s.code()), s.message(), s.field());
    case Status::Code::kUnavailable:
    case Status::Code::kResourceExhausted:
      return http::JsonError(503, "unavailable", "store: " + s.message());
    default: return http::JsonError(500, "internal", s.message());
  }
}

http::Response NotFound(std::string_view what, const std::string& name) {
  return http::JsonError(404, "not_found", "no " + std::string(what) + " \"" + name + "\"");
}

http::Response NoControl(std::string_view what) {
  return http::JsonError(503, "unavailable", std::string(what) + " is not available here");
}

}  // namespace hookrelay::api
