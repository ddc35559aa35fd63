// The one container for optimiser and trainer state: named 64-bit integer
// scalars and named double vectors (a real scalar is a vector of one value).
// ES optimisers, Adam and the trainers save into it; a run file's checkpoint
// stores it as it is (results/README.md, "/checkpoint"), so any optimiser is
// checkpointed without the checkpoint layer knowing its type. Values are kept
// exactly: save → restore continues bit for bit.
#pragma once

#include "mlgo/support/Expected.h"

#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo {

// Anything that holds doubles contiguously: std::vector<double>,
// Eigen::VectorXd, a span (support stays free of Eigen).
template <class V>
concept ContiguousDoubles = requires(const V& v) {
  { v.data() } -> std::convertible_to<const double*>;
  { v.size() } -> std::convertible_to<std::ptrdiff_t>;
};

class StateArchive {
public:
  using Integers = std::map<std::string, int64_t, std::less<>>;
  using Vectors = std::map<std::string, std::vector<double>, std::less<>>;

  // Setting a name again replaces its value.
  void setInteger(const std::string& name, int64_t value) { integers_[name] = value; }
  void setVector(const std::string& name, std::vector<double> values) {
    vectors_[name] = std::move(values);
  }
  template <ContiguousDoubles V> void setVector(const std::string& name, const V& values) {
    const double* first = values.data();
    vectors_[name] = std::vector<double>(first, first + static_cast<std::ptrdiff_t>(values.size()));
  }
  void setReal(const std::string& name, double value) { vectors_[name] = {value}; }
  // Removes the field of that name, integer or vector, if there is one.
  void erase(std::string_view name) {
    if (auto it = integers_.find(name); it != integers_.end())
      integers_.erase(it);
    if (auto it = vectors_.find(name); it != vectors_.end())
      vectors_.erase(it);
  }

  // Reading a field that is missing or has the wrong size is an Error that
  // names the field, e.g. `state field "radius": missing vector`.
  Expected<int64_t> integer(std::string_view name) const;
  Expected<std::vector<double>> vector(std::string_view name) const;
  Expected<std::vector<double>> vector(std::string_view name, size_t expectedSize) const;
  Expected<double> real(std::string_view name) const;
  // An integer field restricted to 0 or 1.
  Expected<bool> flag(std::string_view name) const;
  // A real stored as a one-element vector, or `fallback` when it is missing
  // (state written before the field existed).
  double realOr(std::string_view name, double fallback) const;

  const Integers& integers() const { return integers_; }
  const Vectors& vectors() const { return vectors_; }
  bool empty() const { return integers_.empty() && vectors_.empty(); }

  bool operator==(const StateArchive& other) const = default;

private:
  Integers integers_;
  Vectors vectors_;
};

// An error about one field of a state archive, in the archive's own words.
Error stateFieldError(std::string_view name, const std::string& what);

} // namespace mlgo
