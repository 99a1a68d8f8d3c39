// Status and Result<T>: how every hetsched API reports failure.
//
// Errors cross API boundaries as values, never as exceptions. A Status carries
// a code and one line of text in the house grammar
// "failed to <verb> <object>: <reason>" (or a plain reason), which the CLI
// prints as-is after "error: ".
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace hetsched {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // the caller passed something malformed
  kNotFound,          // a named thing (file, tensor, context) does not exist
  kAlreadyExists,     // a key is taken (e.g. create_only on a registered context)
  kUnsupported,       // well-formed, but this engine/op/version cannot do it
  kDataLoss,          // a file is truncated or corrupt
  kFailedPrecondition,// called in the wrong state or order
  kUnavailable,       // a resource (GPU, device) cannot be had
  kInternal,          // a broken invariant or a failing driver call
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes the message with context, e.g. "node 'conv1' (Conv): " + message.
  Status with_context(std::string_view prefix) const {
    if (is_ok()) return *this;
    return Status(code_, std::string(prefix) + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status data_loss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status failed_precondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status already_exists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                     // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {               // NOLINT: implicit by design
    assert(!std::get<Status>(v_).is_ok() && "Result from an ok Status has no value");
  }

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T value_or(T fallback) const& { return is_ok() ? value() : std::move(fallback); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace hetsched

#define HS_CONCAT_INNER(a, b) a##b
#define HS_CONCAT(a, b) HS_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function when `expr` is not ok.
#define HS_RETURN_IF_ERROR(expr)                      \
  do {                                                \
    ::hetsched::Status hs_status_ = (expr);           \
    if (!hs_status_.is_ok()) return hs_status_;       \
  } while (0)

// `HS_ASSIGN_OR_RETURN(auto x, make_x());` binds the value or returns the error.
#define HS_ASSIGN_OR_RETURN(decl, expr) HS_ASSIGN_OR_RETURN_IMPL(HS_CONCAT(hs_result_, __LINE__), decl, expr)
#define HS_ASSIGN_OR_RETURN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                              \
  if (!tmp.is_ok()) return tmp.status();          \
  decl = std::move(tmp).value()
