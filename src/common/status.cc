#include "common/status.h"

namespace hookrelay {

Status Status::WithFieldPrefix(std::string_view prefix) const {
  if (ok() || prefix.empty()) return *this;
  Status copy = *this;
  if (field_.empty()) {
    copy.field_ = std::string(prefix);
  } else if (field_.front() == '[') {
    copy.field_ = std::string(prefix) + field_;
  } else {
    copy.field_ = std::string(prefix) + "." + field_;
  }
  return copy;
}

std::string_view Status::CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid_argument";
    case Code::kNotFound: return "not_found";
    case Code::kAlreadyExists: return "already_exists";
    case Code::kFailedPrecondition: return "failed_precondition";
    case Code::kUnauthenticated: return "unauthenticated";
    case Code::kResourceExhausted: return "resource_exhausted";
    case Code::kUnavailable: return "unavailable";
    case Code::kInternal: return "internal";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out(CodeName(code_));
  out += ": ";
  if (!field_.empty()) {
    out += field_;
    out += ": ";
  }
  out += message_;
  return out;
}

}  // namespace hookrelay
