// Fitness shaping: what the gradient estimators see instead of raw rewards.
// Rewards are maximised throughout.
#pragma once

#include "mlgo/es/Perturbations.h"
#include "mlgo/support/Expected.h"
#include "mlgo/support/OptionSchemaFwd.h"

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace mlgo::es {

enum class FitnessShaping {
  // Raw rewards.
  None,
  // (f − mean) / max(std, minimumStd), population std. Scale-free, keeps the
  // size of differences.
  ZScore,
  // rank / (K − 1) − 1/2 ∈ [−1/2, 1/2], ties share their mean rank. Robust to
  // outliers (one module that explodes in size), loses magnitudes.
  CentredRank,
};

std::string_view fitnessShapingName(FitnessShaping shaping); // "none", "z-score", "centred-rank"

struct ShapingOptions {
  FitnessShaping method = FitnessShaping::ZScore;
  // Floor of the z-score's standard deviation, so that equal rewards give
  // zeros instead of a division by zero. 1e-5 is ml-compiler-opt's.
  double minimumStd = 1e-5;
  // Keep only the k best directions (unset: all): forward differences keep
  // the k best rewards, antithetic sampling the k pairs with the best
  // max(f+, f−). Top-k trades variance for bias towards promising directions
  // (ARS's "top directions").
  std::optional<int> topDirections;

  Status validate() const; // errors name the field, e.g. "shaping.minimumStd: …"
  static const OptionSchema<ShapingOptions>& schema(); // --shaping, --top-directions
};

// Population z-scores of `values` (floor on the std as above).
std::vector<double> zScores(std::span<const double> values, double minimumStd);
// Centred ranks of `values`; a single value gets 0.
std::vector<double> centredRanks(std::span<const double> values);

// The indices of the `k` best directions, best first (ties: lower index
// first). Forward: `rewards[d]` is direction d's reward. Antithetic:
// `rewards` interleaves (f+, f−) per direction and pairs rank by their max.
// k ≥ the number of directions keeps them all, in rank order.
std::vector<size_t> topDirections(Sampling sampling, std::span<const double> rewards, size_t k);

} // namespace mlgo::es
