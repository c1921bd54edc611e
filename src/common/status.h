#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace hookrelay {

// The outcome of an operation on a data path. An OK status carries no message and costs a
// string's default construction; errors name a code, a human message and, where the error is
// about one field of a request or config, that field's path ("policy.cap").
class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,     // the caller's input is wrong; say which field
    kNotFound,            // the thing named does not exist
    kAlreadyExists,       // a create collided with an existing name
    kFailedPrecondition,  // valid input, but the state does not allow it now
    kUnauthenticated,     // no or bad credentials
    kResourceExhausted,   // too large, too many, disk full
    kUnavailable,         // transient: retrying may succeed (store busy, commit failed)
    kInternal,            // a bug or an unexpected failure
  };

  Status() = default;

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg, std::string field = {}) {
    return Status(Code::kInvalidArgument, std::move(msg), std::move(field));
  }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status AlreadyExists(std::string msg) {
    return Status(Code::kAlreadyExists, std::move(msg));
  }
  static Status FailedPrecondition(std::string msg) {
    return Status(Code::kFailedPrecondition, std::move(msg));
  }
  static Status Unauthenticated(std::string msg) {
    return Status(Code::kUnauthenticated, std::move(msg));
  }
  static Status ResourceExhausted(std::string msg) {
    return Status(Code::kResourceExhausted, std::move(msg));
  }
  static Status Unavailable(std::string msg) { return Status(Code::kUnavailable, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(Code::kInternal, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // Path of the offending field, empty when the error is not about one field.
  const std::string& field() const { return field_; }

  // Returns a copy whose field path is `prefix` + "." + field (or `prefix` when there was no
  // field), so nested parsers can report "destinations[0].policy.cap".
  Status WithFieldPrefix(std::string_view prefix) const;

  // Stable snake_case name of the code, as used in API errors: "invalid_argument".
  static std::string_view CodeName(Code code);
  // "invalid_argument: policy.cap: must be >= base"
  std::string ToString() const;

 private:
  Status(Code code, std::string msg, std::string field = {})
      : code_(code), message_(std::move(msg)), field_(std::move(field)) {}

  Code code_ = Code::kOk;
  std::string message_;
  std::string field_;
};

}  // namespace hookrelay
