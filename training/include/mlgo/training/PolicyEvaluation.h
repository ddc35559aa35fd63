// Exact code sizes for a run's policy where the run file has none: the final
// or best policy compiled on every module of a corpus with the evaluator
// (deterministic decisions, the same compiles as `mlgo-eval run`). A run
// without a validation corpus only holds sizes of the perturbed candidates
// around its policies; this is how `mlgo-results --evaluate CORPUS` measures
// the policies themselves.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/results/Analysis.h"

#include <string_view>

namespace mlgo::training {

// `origin` (the run file) prefixes errors: no such policy, a policy JSON that
// does not load. Failed compiles are not errors: their sizes are NaN.
Expected<results::PolicySizes> evaluatePolicySizes(const results::RunRecord& run,
                                                   results::PolicyChoice choice,
                                                   const corpus::Corpus& corpus,
                                                   evaluators::Evaluator& evaluator,
                                                   std::string_view origin, bool showProgress);

} // namespace mlgo::training
