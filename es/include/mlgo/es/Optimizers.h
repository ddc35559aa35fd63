// Every optimiser es/ offers, as one variant of their Options: the factory,
// validation, names, `--optimizer`'s choices and the run file's step columns
// come from it. A new optimiser is its own files (a BlackboxOptimizer whose
// Options name it as `Optimizer`, with a static kKind, create() and
// stepColumns()) plus one alternative here.
#pragma once

#include "mlgo/es/GradientEs.h"
#include "mlgo/es/SepCmaEs.h"
#include "mlgo/es/TrustRegion.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mlgo::es {

using OptimizerOptions =
    std::variant<GradientEs::Options, TrustRegionEs::Options, SepCmaEs::Options>;

OptimizerKind kindOf(const OptimizerOptions& options);
// The optimiser's own validation; errors name its fields ("sampling.sigma: …").
Status validateOptimizer(const OptimizerOptions& options);
// Every optimiser's kind, in the variant's order, and one's default options.
std::vector<OptimizerKind> optimizerKinds();
OptimizerOptions defaultOptimizerOptions(OptimizerKind kind);
// --optimizer (first), then every optimiser's own flags merged by name: a
// flag several optimisers share (--directions) reaches whichever runs; one
// the chosen optimiser lacks is noted as unused when set.
const OptionSchema<OptimizerOptions>& optimizerSchema();

// The optimiser `options` describe, at `parameters`, its random stream seeded
// by `seed`; `scale`: each parameter's perturbation scale (ones if unset).
Expected<std::unique_ptr<BlackboxOptimizer>>
createOptimizer(OptimizerOptions options, const Eigen::VectorXd& parameters,
                const std::optional<Eigen::VectorXd>& scale, uint64_t seed);

// The diagnostics (StepRecord::diagnostics) that run files record as step
// columns: every optimiser's stepColumns(), in the variant's order. Every ES
// run has them all, unset (NaN) where its optimiser reports none.
const std::vector<std::string_view>& optimizerStepColumns();

} // namespace mlgo::es
