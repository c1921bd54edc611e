#pragma once

#include <boost/json/value.hpp>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"

namespace hookrelay::model {

// Small helpers for strict JSON object parsing: every error is InvalidArgument with the field
// name set, so callers can prefix it ("destinations[0].url") and config loading can map it to a
// line of the TOML file.

// Unknown keys are errors: names the first key of `obj` not in `allowed`.
Status CheckKnownFields(const boost::json::object& obj,
                        std::initializer_list<std::string_view> allowed);

Result<std::string> GetString(const boost::json::value& v, std::string_view field);
Result<bool> GetBool(const boost::json::value& v, std::string_view field);
Result<int64_t> GetInt(const boost::json::value& v, std::string_view field, int64_t min,
                       int64_t max);
Result<Duration> GetDuration(const boost::json::value& v, std::string_view field);
Result<uint64_t> GetByteSize(const boost::json::value& v, std::string_view field);

// Names safe for URLs and CLI: 1–64 of [A-Za-z0-9_.-], starting with a letter or digit.
Status ValidateName(std::string_view name, std::string_view field = "name");

}  // namespace hookrelay::model
