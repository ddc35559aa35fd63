// The flags the sampling optimisers (GradientEs, TrustRegionEs) share, added
// to each one's schema: the merged --optimizer schema then offers one flag
// that reaches whichever of them runs.
#pragma once

#include "mlgo/es/BlackboxOptimizer.h"
#include "mlgo/es/FitnessShaping.h"
#include "mlgo/es/GradientEstimators.h"
#include "mlgo/support/OptionSchema.h"

#include <string>

namespace mlgo::es::detail {

// Sampling, shaping and the estimator, and their one rule across groups.
template <class Options> void describeSampling(OptionSchema<Options>& s) {
  s.include(
      SamplingOptions::schema(), [](auto& o) -> auto& { return o.sampling; });
  s.include(
      ShapingOptions::schema(), [](auto& o) -> auto& { return o.shaping; });
  s.include(
      EstimatorOptions::schema(), [](auto& o) -> auto& { return o.estimator; });
  s.rule([](const Options& o) -> Status {
    const int directions = o.sampling.directions;
    if (o.shaping.topDirections && *o.shaping.topDirections > directions)
      return makeError("--top-directions " + std::to_string(*o.shaping.topDirections) +
                       " keeps more directions than a step has (--directions " +
                       std::to_string(directions) + ")");
    return Status::ok();
  });
}

template <class Options> void describeConvention(OptionSchema<Options>& s) {
  s.choice(
      "convention",
      "native, or ml-compiler-opt's normalisation and Adam (to carry its hyperparameters "
      "over)",
      [](auto& o) -> auto& { return o.convention; },
      {Convention::Native, Convention::MlCompilerOpt}, conventionName);
}

} // namespace mlgo::es::detail
