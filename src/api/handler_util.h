#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "common/result.h"
#include "http/request.h"

// The answers the API's handlers share (internal to src/api/).

namespace hookrelay::api {

// 200 with `o` as its body (plain numbers: "rate": 50, not 5E1).
http::Response Json(const boost::json::object& o);

// The error answer for `s`: 400 (the message names the field), 404, 409, 503 "unavailable" for a
// store that cannot answer, else 500.
http::Response FromStatus(const Status& s);

// 404 "no <what> \"<name>\"".
http::Response NotFound(std::string_view what, const std::string& name);

// 503 for an operator control this process was not given (ApiHandler::Controls).
http::Response NoControl(std::string_view what);

}  // namespace hookrelay::api
