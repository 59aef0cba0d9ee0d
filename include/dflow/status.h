// Status helpers on absl::Status / absl::StatusOr: the one error type of dflow.
//
// Every fallible function returns absl::Status or absl::StatusOr<T>. The macros below propagate
// errors without exceptions. Error messages name what was wrong (node, shape, file).
//
//   DFLOW_RETURN_IF_ERROR(session.Run(...));
//   DFLOW_ASSIGN_OR_RETURN(Tensor t, Tensor::FromValues<float>(values, TensorShape{2}));
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace dflow {

using absl::Status;
using absl::StatusOr;

namespace errors {
template <typename... Args>
Status InvalidArgument(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}
template <typename... Args>
Status NotFound(const Args&... args) {
  return absl::NotFoundError(absl::StrCat(args...));
}
template <typename... Args>
Status FailedPrecondition(const Args&... args) {
  return absl::FailedPreconditionError(absl::StrCat(args...));
}
template <typename... Args>
Status OutOfRange(const Args&... args) {
  return absl::OutOfRangeError(absl::StrCat(args...));
}
template <typename... Args>
Status Internal(const Args&... args) {
  return absl::InternalError(absl::StrCat(args...));
}
template <typename... Args>
Status Unimplemented(const Args&... args) {
  return absl::UnimplementedError(absl::StrCat(args...));
}
template <typename... Args>
Status AlreadyExists(const Args&... args) {
  return absl::AlreadyExistsError(absl::StrCat(args...));
}
template <typename... Args>
Status Unavailable(const Args&... args) {
  return absl::UnavailableError(absl::StrCat(args...));
}
template <typename... Args>
Status Aborted(const Args&... args) {
  return absl::AbortedError(absl::StrCat(args...));
}
template <typename... Args>
Status DataLoss(const Args&... args) {
  return absl::DataLossError(absl::StrCat(args...));
}
template <typename... Args>
Status DeadlineExceeded(const Args&... args) {
  return absl::DeadlineExceededError(absl::StrCat(args...));
}
template <typename... Args>
Status Cancelled(const Args&... args) {
  return absl::CancelledError(absl::StrCat(args...));
}
template <typename... Args>
Status PermissionDenied(const Args&... args) {
  return absl::PermissionDeniedError(absl::StrCat(args...));
}
template <typename... Args>
Status Unauthenticated(const Args&... args) {
  return absl::UnauthenticatedError(absl::StrCat(args...));
}
template <typename... Args>
Status ResourceExhausted(const Args&... args) {
  return absl::ResourceExhaustedError(absl::StrCat(args...));
}

// Returns `s` with `prefix` prepended to its message, keeping the code.
Status Annotate(const Status& s, absl::string_view prefix);
}  // namespace errors

}  // namespace dflow

#define DFLOW_CONCAT_INNER(a, b) a##b
#define DFLOW_CONCAT(a, b) DFLOW_CONCAT_INNER(a, b)

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define DFLOW_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::absl::Status _dflow_status = (expr);         \
    if (!_dflow_status.ok()) return _dflow_status; \
  } while (0)

// Evaluates `rexpr` (a StatusOr); returns its Status when it is not OK, else moves its value
// into `lhs` (a declaration or an lvalue).
#define DFLOW_ASSIGN_OR_RETURN(lhs, rexpr) \
  DFLOW_ASSIGN_OR_RETURN_IMPL(DFLOW_CONCAT(_dflow_statusor_, __LINE__), lhs, rexpr)

#define DFLOW_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
