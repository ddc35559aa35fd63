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
