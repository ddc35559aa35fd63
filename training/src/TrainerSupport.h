// Pieces the trainers share: timing, the heuristic's recorded decisions
// (features and vocabulary for a fresh MLP), and policy JSON plumbing.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/policies/Vocabulary.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/results/TraceFile.h"
#include "mlgo/support/Expected.h"

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace mlgo::training::detail {

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline double secondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The policy as JSON; parameters are finite by construction, so a failure is
// a programmer error and gives "{}".
std::string policyJson(const policies::MlpPolicy& policy);

// Reads an MLP out of a checkpoint's (or snapshot's) JSON; `origin` names it.
Expected<policies::MlpPolicy> mlpFromJson(const std::string& json, const std::string& origin);

// Compiles modules under the heuristic (which reproduces -Oz) and records
// every decision: the data BC imitates and vocabularies are built from.
evaluators::EvaluationResult recordHeuristic(evaluators::Evaluator& evaluator,
                                             const std::vector<const corpus::ModuleSpec*>& modules,
                                             bool showProgress);

// The features clang sends (its header), from the first module whose
// compile opened the interactive channel.
Expected<std::vector<policies::TensorSpec>>
probeFeatureSpecs(evaluators::Evaluator& evaluator,
                  const std::vector<const corpus::ModuleSpec*>& modules, const std::string& corpus);

// Quantile vocabulary of the scalar features over the recorded decisions of
// every ok job.
Expected<policies::Vocabulary> vocabularyFromJobs(const std::vector<evaluators::JobResult>& jobs,
                                                  int quantiles);

void recordFailure(results::RunRecord& record, int64_t step, int64_t candidate,
                   const std::string& module, const evaluators::JobResult& job);

} // namespace mlgo::training::detail
