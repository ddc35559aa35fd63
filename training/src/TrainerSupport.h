// Pieces the trainers share: timing, policy JSON, the heuristic's recorded
// decisions (features and vocabulary for a fresh MLP), and the starting
// policy of a compiling trainer.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/policies/Vocabulary.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/support/Expected.h"
#include "mlgo/training/Options.h"
#include "mlgo/training/TrainingCorpus.h"

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

// A double as text that reads back (strtod) to the same value.
std::string exactDecimal(double value);

// A line's tab-separated fields (TSV files the tools write and read back).
std::vector<std::string> splitTabs(const std::string& line);

// The policy as JSON; parameters are finite by construction, so a failure is
// a programmer error and gives "{}".
std::string policyJson(const policies::MlpPolicy& policy);

// Reads an MLP out of a checkpoint's (or snapshot's) JSON; `origin` names it.
Expected<policies::MlpPolicy> mlpFromJson(const std::string& json, const std::string& origin);

// Compiles modules under the heuristic (which reproduces -Oz) and records
// every decision: the data BC imitates and vocabularies are built from.
// A policy that does not fit the compiler's features fails every job alike
// (a configuration error, e.g. an --initial-policy trained with other
// features): the run stops, quoting the first mismatch, instead of skipping
// every step.
Status checkPolicyFits(const evaluators::EvaluationResult& result);

// The compiler's own decisions on `modules`, recorded (the heuristic echoed
// through the channel); for a task that sends no default decision
// (eviction), its neutral advice at every decision instead, which records
// the features all the same.
evaluators::EvaluationResult recordHeuristic(evaluators::Scorer& scorer,
                                             const std::vector<const corpus::ModuleSpec*>& modules,
                                             bool showProgress);

// Adds one decision's row (laid out as `specs`) to `samples`: every scalar
// feature's value and, with a candidate mask, every per-candidate feature's
// value at the candidates the mask allows (the allocator leaves NaN at the
// others). Values that are not finite are left out.
void addDecisionSamples(const std::vector<policies::TensorSpec>& specs, const double* row,
                        const std::string& candidateMask, policies::FeatureSamples& samples);

// Quantile vocabulary of the scalar features over the recorded decisions of
// every ok job, and of every float vector (IR2Vec's embeddings: their
// elements pooled, since an embedding's sums grow with function size and a
// network wants them in [0, 1]); with a candidate mask (eviction), also of
// every feature with one value per candidate, each valid candidate's value a
// sample. Values that are not finite are left out.
Expected<policies::Vocabulary> vocabularyFromJobs(const std::vector<evaluators::JobResult>& jobs,
                                                  int quantiles,
                                                  const std::string& candidateMask = "");

// Where a compiling trainer's policy starts: the initial policy file, or a
// random MLP (seeded) over the features clang sends, its vocabulary read or
// built from the heuristic's decisions on the training modules. Describes
// the start in record.attributes ("initial_policy", "vocabulary").
Expected<policies::MlpPolicy> startingPolicy(const PolicyStartOptions& options, uint64_t seed,
                                             evaluators::Scorer& scorer,
                                             const TrainingCorpus& corpus,
                                             results::RunRecord& record);

} // namespace mlgo::training::detail
