// The modules a trainer works on, and their -Oz baselines, as every trainer
// that compiles (es-train, ppo-train) sets them up: baselines of every module
// (in parallel, cached), the module tables and baseline failures recorded in
// the run, and the modules that can be scored.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <vector>

namespace mlgo::training {

struct TrainingModules {
  // Training modules with a working baseline: the only ones sampled (a
  // module whose -Oz compile fails cannot be rewarded).
  std::vector<const corpus::ModuleSpec*> eligible;
  // Their index in RunRecord::moduleNames, and their bitcode sizes (for the
  // size-bucketed sampler).
  std::vector<int64_t> eligibleIndex;
  std::vector<uint64_t> eligibleBitcodeBytes;
  // Every validation module (failures there are recorded per validation).
  std::vector<const corpus::ModuleSpec*> validation;
};

// Fills record.moduleNames/baselineSizes (and the validation tables), and
// records a failure (step -1) per module without a baseline. An error if no
// training module can be scored.
Expected<TrainingModules> prepareTrainingModules(evaluators::Evaluator& evaluator,
                                                 const corpus::Corpus& training,
                                                 const corpus::Corpus* validation,
                                                 results::RunRecord& record);

} // namespace mlgo::training
