#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace hookrelay::model {

inline constexpr size_t kMaxTransformScriptBytes = 64 * 1024;

// A destination's or route's `transform` (docs/transforms.md): JavaScript defining
// transform(request), run at delivery time, and the limits of each call (nullopt: the server's
// defaults, 50 ms of CPU and 16 MiB; at most the server's maximum, checked when it runs).
struct TransformSpec {
  std::string script;
  std::optional<std::chrono::milliseconds> cpu;
  std::optional<uint64_t> memory;  // bytes of the engine's heap
  bool operator==(const TransformSpec&) const = default;
};

// "function transform(r) {…}" (the script alone) or {"script": "…", "cpu": "50ms",
// "memory": "16MiB"}. InvalidArgument naming `field` ("transform", "transform.cpu"): an empty
// script or one past 64 KiB, a cpu of 0 or past 10 s, a memory under 1 MiB or past 1 GiB.
// The script is not compiled here (the model is pure): the catalog's transform check does that.
Result<TransformSpec> ParseTransformSpec(const boost::json::value& v, std::string_view field);
// {"script", "cpu" (null: the default), "memory" (null: the default)}.
boost::json::object TransformSpecToJson(const TransformSpec& spec);

}  // namespace hookrelay::model
