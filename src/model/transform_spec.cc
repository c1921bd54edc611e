#include "model/transform_spec.h"

#include <boost/json.hpp>

#include "common/units.h"
#include "model/json_fields.h"

namespace hookrelay::model {

namespace json = boost::json;

Result<TransformSpec> ParseTransformSpec(const json::value& v, std::string_view field) {
  const std::string f(field);
  auto at = [&f](const char* member) { return f.empty() ? std::string(member) : f + "." + member; };
  TransformSpec spec;
  const json::value* script = &v;
  const json::object* o = v.if_object();
  if (o) {
    HR_RETURN_IF_ERROR(CheckKnownFields(*o, {"script", "cpu", "memory"}).WithFieldPrefix(f));
    script = o->if_contains("script");
    if (!script) return Status::InvalidArgument("is required", at("script"));
  }
  const std::string script_field = o ? at("script") : f;
  if (!script->is_string()) {
    return Status::InvalidArgument(
        o ? "expects a string (the JavaScript)"
          : "expects the script (a string) or {\"script\": …, \"cpu\": \"50ms\", \"memory\": "
            "\"16MiB\"}",
        script_field);
  }
  spec.script = std::string(script->get_string());
  if (spec.script.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Status::InvalidArgument("is empty", script_field);
  }
  if (spec.script.size() > kMaxTransformScriptBytes) {
    return Status::InvalidArgument("longer than 64 KiB", script_field);
  }
  if (!o) return spec;
  if (const json::value* cpu = o->if_contains("cpu"); cpu && !cpu->is_null()) {
    HR_ASSIGN_OR_RETURN(Duration d, GetDuration(*cpu, at("cpu")));
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d);
    if (ms.count() < 1 || ms > std::chrono::seconds(10)) {
      return Status::InvalidArgument("must be from 1ms to 10s", at("cpu"));
    }
    spec.cpu = ms;
  }
  if (const json::value* memory = o->if_contains("memory"); memory && !memory->is_null()) {
    HR_ASSIGN_OR_RETURN(uint64_t bytes, GetByteSize(*memory, at("memory")));
    if (bytes < (1u << 20) || bytes > (1ull << 30)) {
      return Status::InvalidArgument("must be from 1MiB to 1GiB", at("memory"));
    }
    spec.memory = bytes;
  }
  return spec;
}

json::object TransformSpecToJson(const TransformSpec& spec) {
  return {
      {"script", spec.script},
      {"cpu", spec.cpu ? json::value(FormatDuration(*spec.cpu)) : json::value(nullptr)},
      {"memory", spec.memory ? json::value(FormatByteSize(*spec.memory)) : json::value(nullptr)}};
}

}  // namespace hookrelay::model
