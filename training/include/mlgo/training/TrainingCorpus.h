// The modules a compiling trainer (es-train, ppo-train) works on: the
// training corpus, its -Oz baselines and the seeded per-step sample, and the
// validation corpus. Loading fills the run record's module tables; every
// step's evaluation is recorded the same way (failures, module indices,
// sizes) by recordEvaluation.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/corpus/Sampler.h"
#include "mlgo/evaluators/Scorer.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/support/Expected.h"
#include "mlgo/training/Options.h"
#include "mlgo/training/StepColumns.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::training {

// The modules of one step and their rows in the run record's module table.
struct StepModules {
  std::vector<const corpus::ModuleSpec*> modules;
  std::vector<int64_t> indices; // into RunRecord::moduleNames
};

class TrainingCorpus {
public:
  // Loads both corpora and every module's baseline (in parallel, cached),
  // fills record.moduleNames/baselineSizes and the validation tables and the
  // "corpus"/"validation_corpus" attributes, and records a failure (step -1)
  // per training module without a baseline. An error if no training module
  // can be scored: a module whose -Oz compile fails cannot be rewarded.
  static Expected<TrainingCorpus> load(const CorpusOptions& options, uint64_t seed,
                                       evaluators::Scorer& scorer, results::RunRecord& record);

  // The step's modules: options.modulesPerStep of the scorable ones, a pure
  // function of (seed, step).
  StepModules sample(int64_t step) const;

  // Training modules with a working baseline: the only ones sampled.
  const std::vector<const corpus::ModuleSpec*>& eligible() const { return eligible_; }
  // Every validation module (failures there are recorded per validation).
  const std::vector<const corpus::ModuleSpec*>& validation() const { return validation_; }
  // The training corpus's directory, or the programs' names.
  const std::string& source() const { return source_; }
  // Trains on benchmark programs (CorpusOptions::programs), not modules.
  bool programs() const { return programs_ != nullptr; }

private:
  TrainingCorpus() = default;

  std::unique_ptr<corpus::Corpus> training_; // on the heap: specs are pointed at
  std::unique_ptr<corpus::Corpus> validationCorpus_;
  // Benchmark programs as modules (names only), training then validation.
  std::unique_ptr<std::vector<corpus::ModuleSpec>> programs_, validationPrograms_;
  std::string source_;
  size_t modulesPerStep_ = 0;
  std::vector<const corpus::ModuleSpec*> eligible_;
  std::vector<int64_t> eligibleIndex_; // their index in RunRecord::moduleNames
  std::vector<const corpus::ModuleSpec*> validation_;
  std::optional<corpus::ModuleSampler> sampler_;
};

// A failed job in the run's failure table; candidate -1 for validation and
// baseline compiles.
void recordFailure(results::RunRecord& record, int64_t step, int64_t candidate,
                   const std::string& module, const evaluators::JobResult& job);

// One step's evaluation as the run file keeps it: every failed job recorded,
// the step's module indices, and its sizes row (candidate-major, 0 for a
// failed job). Returns the step's counts of its jobs.
CompileStats recordEvaluation(const evaluators::EvaluationResult& result,
                              const StepModules& modules, int64_t step, results::RunRecord& record);

} // namespace mlgo::training
