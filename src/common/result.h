#pragma once

#include <cassert>
#include <optional>
#include <utility>

#include "common/status.h"

namespace hookrelay {

// Either a value or a non-OK Status. Construct from a T for success or from a Status for
// failure. REQUIRES: a Status used to construct a Result is not OK.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "Result needs a value or an error");
    if (status_.ok()) status_ = Status::Internal("Result built from an OK status without value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace hookrelay

// Evaluates `expr` (a Status); returns it from the enclosing function when it is not OK.
#define HR_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::hookrelay::Status hr_status_ = (expr); \
    if (!hr_status_.ok()) return hr_status_; \
  } while (0)

// Evaluates `expr` (a Result<T>); returns its Status from the enclosing function (which returns
// a Status or a Result) when it is not OK, else moves its value into `lhs`, which may declare a
// variable: HR_ASSIGN_OR_RETURN(Config config, LoadConfig(path));
// Expands to more than one statement: not for the body of an unbraced `if`.
#define HR_ASSIGN_OR_RETURN(lhs, expr) \
  HR_ASSIGN_OR_RETURN_IMPL_(HR_RESULT_CONCAT_(hr_result_, __LINE__), lhs, expr)
#define HR_ASSIGN_OR_RETURN_IMPL_(result, lhs, expr) \
  auto result = (expr);                              \
  if (!result.ok()) return result.status();          \
  lhs = std::move(result).value()
#define HR_RESULT_CONCAT_(a, b) HR_RESULT_CONCAT_INNER_(a, b)
#define HR_RESULT_CONCAT_INNER_(a, b) a##b
