// The part of a gradient-ES step shared by GradientEs and TrustRegionEs:
// from per-candidate rewards to the shaped, selected directions the
// estimators use (failures, skip rule, f(x), shaping, top-k).
#pragma once

#include "mlgo/es/BlackboxOptimizer.h"
#include "mlgo/es/FitnessShaping.h"

#include <Eigen/Core>

#include <optional>
#include <span>
#include <vector>

namespace mlgo::es::detail {

struct SelectedSamples {
  std::vector<size_t> directions; // kept directions, estimator order
  Eigen::VectorXd plus;           // shaped f(x + p_d)
  Eigen::VectorXd minus;          // shaped f(x − p_d), antithetic only
  double baseline = 0;            // shaped f(x)
  bool topKRemoved = false;       // top-k dropped some surviving directions
};

// `rewards` has one value per candidate of the population (centre last when
// sampling.evaluateCenter). Fills the record's counts, f(x), reward
// statistics and skip fields; returns nothing when the step is skipped.
std::optional<SelectedSamples> selectSamples(const SamplingOptions& sampling,
                                             const ShapingOptions& shaping, Convention convention,
                                             std::span<const std::optional<double>> rewards,
                                             StepRecord& record);

// Number of candidates a population of these options has.
size_t populationSize(const SamplingOptions& sampling);

} // namespace mlgo::es::detail
