// Errors at boundaries (files, processes, LLVM, HDF5) are values: an Error
// carries a message that names the file, module or field at fault. Programmer
// errors are assertions, not Errors.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace mlgo {

struct Error {
  std::string message;
};

inline Error makeError(std::string message) {
  return Error{std::move(message)};
}

template <class T> class [[nodiscard]] Expected {
public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

  explicit operator bool() const { return state_.index() == 0; }
  bool hasValue() const { return state_.index() == 0; }

  T& operator*() & {
    assert(hasValue());
    return std::get<0>(state_);
  }
  const T& operator*() const& {
    assert(hasValue());
    return std::get<0>(state_);
  }
  T* operator->() { return &**this; }
  const T* operator->() const { return &**this; }
  // Moves the value out; the Expected must hold one.
  T take() {
    assert(hasValue());
    return std::move(std::get<0>(state_));
  }

  const Error& error() const {
    assert(!hasValue());
    return std::get<1>(state_);
  }

private:
  std::variant<T, Error> state_;
};

// The result of an operation that produces nothing but can fail.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}
  static Status ok() { return Status(); }

  explicit operator bool() const { return !error_.has_value(); }
  const Error& error() const {
    assert(error_.has_value());
    return *error_;
  }

private:
  std::optional<Error> error_;
};

} // namespace mlgo

// Early returns on the error path, in a function returning Status or
// Expected<U> (the error converts to either):
//   MLGO_TRY(writeHeader(file));                          // a Status
//   MLGO_ASSIGN_OR_RETURN(const auto* inputs, array(root, "inputs"));
//   use(inputs);                                          // the value itself
// The second declares (or assigns) its left side from the Expected's value;
// it is two statements, so it needs braces under an if.
#define MLGO_TRY(...)                                                                              \
  do {                                                                                             \
    if (::mlgo::Status mlgoTried_ = (__VA_ARGS__); !mlgoTried_)                                    \
      return mlgoTried_.error();                                                                   \
  } while (false)
#define MLGO_CONCAT_INNER_(a, b) a##b
#define MLGO_CONCAT_(a, b) MLGO_CONCAT_INNER_(a, b)
#define MLGO_ASSIGN_OR_RETURN_(temporary, declaration, ...)                                        \
  auto temporary = (__VA_ARGS__);                                                                  \
  if (!temporary)                                                                                  \
    return temporary.error();                                                                      \
  declaration = temporary.take()
#define MLGO_ASSIGN_OR_RETURN(declaration, ...)                                                    \
  MLGO_ASSIGN_OR_RETURN_(MLGO_CONCAT_(mlgoExpected_, __LINE__), declaration, __VA_ARGS__)
