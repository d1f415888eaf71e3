// Result<T>: a value or an error message. Errors are values in tapecheck, never exceptions that
// escape or aborts; the messages are docs/spec.md's exact strings (see errors.h).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace tapecheck {

struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}            // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}        // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const Error& error() const { return std::get<1>(state_); }
  const std::string& message() const { return error().message; }

 private:
  std::variant<T, Error> state_;
};

// Result<void> carries only success or an error.
struct Unit {};
using Status = Result<Unit>;
inline Status okStatus() { return Unit{}; }

}  // namespace tapecheck

// Early returns of an error, in a function that returns a Result or a Status:
//   TAPECHECK_TRY(node, lookup(x, s));     // node: the value, or the error is returned
//   TAPECHECK_TRY_STATUS(validate(table));  // a Status: its error is returned
#define TAPECHECK_TRY(var, expr)                    \
  auto var##_result_ = (expr);                      \
  if (!var##_result_) return var##_result_.error(); \
  auto var = std::move(var##_result_).value()

#define TAPECHECK_TRY_STATUS(expr)                              \
  do {                                                          \
    auto tapecheck_status_ = (expr);                            \
    if (!tapecheck_status_) return tapecheck_status_.error();   \
  } while (0)
