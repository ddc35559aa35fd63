// Optimiser state as plain named values, so that a checkpoint layer (HDF5)
// can store any optimiser without knowing its type: named 64-bit integer
// scalars and named double vectors (a real scalar is a vector of one value).
// Values are stored exactly, so save → restore continues bit for bit.
//
// Every archive written by an optimiser holds two integers besides its own
// fields: "optimizer" (an OptimizerKind code, so that one optimiser's state is
// never restored into another) and "dimension" (the number of parameters).
#pragma once

#include "mlgo/support/Expected.h"

#include <Eigen/Core>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::es {

// Stable codes: they are written into checkpoints.
enum class OptimizerKind : int64_t { GradientEs = 1, TrustRegionEs = 2, SepCmaEs = 3 };

std::string_view optimizerKindName(OptimizerKind kind); // "gradient-es", …

class StateArchive {
public:
  using Integers = std::map<std::string, int64_t, std::less<>>;
  using Vectors = std::map<std::string, std::vector<double>, std::less<>>;

  // Setting a name again replaces its value.
  void setInteger(const std::string& name, int64_t value) { integers_[name] = value; }
  void setVector(const std::string& name, std::vector<double> values);
  void setVector(const std::string& name, const Eigen::VectorXd& values);
  void setReal(const std::string& name, double value) { setVector(name, {value}); }

  // Reading a field that is missing or has the wrong size is an Error that
  // names the field, e.g. `state field "radius": missing`.
  Expected<int64_t> integer(std::string_view name) const;
  Expected<std::vector<double>> vector(std::string_view name) const;
  Expected<Eigen::VectorXd> vector(std::string_view name, size_t expectedSize) const;
  Expected<double> real(std::string_view name) const;
  // An integer field restricted to 0 or 1.
  Expected<bool> flag(std::string_view name) const;

  const Integers& integers() const { return integers_; }
  const Vectors& vectors() const { return vectors_; }

  bool operator==(const StateArchive& other) const = default;

  // Writes "optimizer" and "dimension".
  void setHeader(OptimizerKind kind, size_t dimension);
  // Checks "optimizer" against `kind` and "dimension" against `dimension`.
  Status checkHeader(OptimizerKind kind, size_t dimension) const;

private:
  Integers integers_;
  Vectors vectors_;
};

} // namespace mlgo::es
