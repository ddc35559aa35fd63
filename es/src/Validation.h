// Helpers for Options::validate(): every message names the field, states
// the requirement and shows the offending value ("sigma: must be positive,
// got -1").
#pragma once

#include "mlgo/support/Expected.h"

#include <cmath>
#include <sstream>
#include <string>
#include <string_view>

namespace mlgo::es::detail {

inline std::string formatValue(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

inline Error invalidField(std::string_view field, std::string_view requirement, double value) {
  return makeError(std::string(field) + ": " + std::string(requirement) + ", got " +
                   formatValue(value));
}

inline Status requirePositive(std::string_view field, double value) {
  if (!(value > 0) || !std::isfinite(value))
    return invalidField(field, "must be positive", value);
  return Status::ok();
}

inline Status requireNonNegative(std::string_view field, double value) {
  if (!(value >= 0) || !std::isfinite(value))
    return invalidField(field, "must be non-negative", value);
  return Status::ok();
}

// lower ≤ value < upper
inline Status requireHalfOpen(std::string_view field, double value, double lower, double upper) {
  if (!(value >= lower && value < upper))
    return invalidField(
        field, "must be in [" + formatValue(lower) + ", " + formatValue(upper) + ")", value);
  return Status::ok();
}

// lower ≤ value ≤ upper
inline Status requireClosed(std::string_view field, double value, double lower, double upper) {
  if (!(value >= lower && value <= upper))
    return invalidField(
        field, "must be in [" + formatValue(lower) + ", " + formatValue(upper) + "]", value);
  return Status::ok();
}

// Prefixes a nested struct's error with its field name: "shaping.minimumStd: …".
inline Status prefixed(std::string_view prefix, Status status) {
  if (status)
    return status;
  return makeError(std::string(prefix) + "." + status.error().message);
}

} // namespace mlgo::es::detail

// Returns from the enclosing function when a Status is an error.
#define MLGO_ES_RETURN_IF_ERROR(expr)                                                              \
  do {                                                                                             \
    ::mlgo::Status mlgoEsStatus_ = (expr);                                                         \
    if (!mlgoEsStatus_)                                                                            \
      return mlgoEsStatus_.error();                                                                \
  } while (false)

#include <Eigen/Core>

namespace mlgo::es::detail {

// State vectors: the right size and finite (positive for a scale).
inline Status checkStateVector(std::string_view field, const Eigen::VectorXd& values,
                               size_t dimension, bool positive = false) {
  if (static_cast<size_t>(values.size()) != dimension)
    return makeError(std::string(field) + ": expected " + std::to_string(dimension) +
                     " values, got " + std::to_string(values.size()));
  for (Eigen::Index i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]))
      return makeError(std::string(field) + ": value " + std::to_string(i) + " is not finite");
    if (positive && !(values[i] > 0))
      return makeError(std::string(field) + ": value " + std::to_string(i) +
                       " must be positive, got " + formatValue(values[i]));
  }
  return Status::ok();
}

inline Error rewardCountError(size_t expected, int64_t step, size_t got) {
  return makeError("rewards: expected " + std::to_string(expected) +
                   " values (one per candidate of step " + std::to_string(step) + "), got " +
                   std::to_string(got));
}

} // namespace mlgo::es::detail
