// Status and StatusOr<T>: Tephra's error values. Every operation that can fail returns one;
// exceptions never cross a component boundary.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tephra {

// Closed set of error codes. The Kubernetes-specific ones map 1:1 onto API-server answers so
// callers can decide on retry without parsing messages:
//   kConflict (409)        re-read and retry the write
//   kGone (410)            the resourceVersion expired: relist
//   kTooManyRequests (429) back off (honour Retry-After) and retry
//   kUnavailable (5xx, connection errors) back off and retry
//   kInvalid (422), kInvalidArgument, kNotFound, kAlreadyExists, kForbidden, kUnauthorized:
//                          terminal for the request as sent
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kConflict,
  kGone,
  kInvalid,
  kUnauthorized,
  kForbidden,
  kTooManyRequests,
  kUnavailable,
  kDeadlineExceeded,
  kCancelled,
  kFailedPrecondition,
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "NotFound: pods \"x\" not found"
  std::string ToString() const;

  // Returns a copy whose message is prefixed with context: "reading kubeconfig: <message>".
  Status WithContext(std::string_view context) const;

  bool operator==(const Status& other) const = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
inline Status AlreadyExists(std::string m) {
  return {StatusCode::kAlreadyExists, std::move(m)};
}
inline Status Conflict(std::string m) {
  return {StatusCode::kConflict, std::move(m)};
}
inline Status Unavailable(std::string m) {
  return {StatusCode::kUnavailable, std::move(m)};
}
inline Status Internal(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status DeadlineExceeded(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status Cancelled(std::string m) {
  return {StatusCode::kCancelled, std::move(m)};
}

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // An error until assigned (needed where a library default-constructs results).
  StatusOr() : data_(Status(StatusCode::kInternal, "uninitialized StatusOr")) {}
  StatusOr(const Status& status) : data_(status) { assert(!status.ok()); }  // NOLINT(implicit)
  StatusOr(Status&& status) : data_(std::move(status)) {                    // NOLINT(implicit)
    assert(!std::get<Status>(data_).ok());
  }
  StatusOr(const T& value) : data_(value) {}        // NOLINT(implicit)
  StatusOr(T&& value) : data_(std::move(value)) {}  // NOLINT(implicit)
  template <typename U>
  requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, Status> &&
           !std::is_same_v<std::decay_t<U>, StatusOr<T>> && !std::is_same_v<std::decay_t<U>, T>)
      StatusOr(U&& value)
      : data_(T(std::forward<U>(value))) {}  // NOLINT(implicit)

  bool ok() const { return std::holds_alternative<T>(data_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(data_); }

  const T& value() const& { return std::get<T>(data_); }
  T& value() & { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<Status, T> data_;
};

}  // namespace tephra

// Returns early with the Status of `expr` if it is not OK.
#define TEPHRA_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::tephra::Status tephra_status_ = (expr);        \
    if (!tephra_status_.ok()) return tephra_status_; \
  } while (false)

#define TEPHRA_STATUS_CONCAT_INNER(a, b) a##b
#define TEPHRA_STATUS_CONCAT(a, b) TEPHRA_STATUS_CONCAT_INNER(a, b)

// TEPHRA_ASSIGN_OR_RETURN(auto x, Compute()); declares x from the value or returns the error.
#define TEPHRA_ASSIGN_OR_RETURN(lhs, expr) \
  TEPHRA_ASSIGN_OR_RETURN_IMPL(TEPHRA_STATUS_CONCAT(tephra_statusor_, __LINE__), lhs, expr)
#define TEPHRA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
