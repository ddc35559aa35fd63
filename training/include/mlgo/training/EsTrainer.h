// es-train's engine: evolution strategies on an inlining-for-size policy,
// with real compilations as the reward. Each step asks the optimiser for a
// population of weight vectors, compiles the step's sampled modules under
// every candidate (all candidates see the same modules, so both members of
// an antithetic pair are compared on equal terms), tells the rewards, and
// records the step; the TrainingLoop does validation, the best policy,
// snapshots, checkpoints and the run file.
//
// Reproducible: for a seed and options the run file's numbers (timings
// aside) are identical at any number of workers, and a run killed at any
// point and resumed from its file reaches the same final policy bit for bit.
#pragma once

#include "mlgo/es/Optimizers.h"
#include "mlgo/evaluators/Scorer.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/support/Expected.h"
#include "mlgo/training/Options.h"
#include "mlgo/training/StepColumns.h"
#include "mlgo/training/Trainer.h"
#include "mlgo/training/TrainingLoop.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace mlgo::training {

struct EsTrainerOptions {
  CorpusOptions data;
  // Without an initial policy: exactly the compiler's decisions.
  PolicyStartOptions policy = residualStartOptions(policies::MlpOptions{}, 1.0);
  // Perturb each weight in proportion to its size (|w| + 0.01), which suits a
  // pretrained start; otherwise all weights alike.
  bool scaleByWeights = false;
  // A candidate's reward over the step's modules: the mean of the modules'
  // relative rewards (every module counts alike, ml-compiler-opt's choice),
  // or the relative reward of the modules' total (each module weighted by
  // its baseline: the objective is then the total size or score).
  enum class CandidateReward { Mean, Total };
  CandidateReward candidateReward = CandidateReward::Mean;

  // The optimiser and its options; its seed is run.seed. By default
  // gradient ES with the σ, step size and directions measured for the
  // residual start on the inlining split's training code (defaultOptimizer).
  es::OptimizerOptions optimizer = defaultOptimizer();
  static es::OptimizerOptions defaultOptimizer();

  RunOptions run = runOptions("results/es-run.h5", "results/es-policy.json");

  Status validate() const; // names the bad field, e.g. "data.corpus: …"
  // es-train's flags: Data, Policy (and --scale-by-weights), Optimiser
  // (--candidate-reward, --optimizer and every optimiser's own), Run.
  static const OptionSchema<EsTrainerOptions>& schema();
};

// One ES step, as the run file's /steps records it (esStepColumns()).
struct EsStep {
  // Over the candidates that compiled on every module (a candidate's reward
  // is its mean over the step's modules, or its total's reward; see
  // EsTrainerOptions::candidateReward); NaN when none did.
  double rewardMean = kNoValue;
  double rewardMax = kNoValue;
  double rewardMin = kNoValue;
  double rewardP10 = kNoValue, rewardP25 = kNoValue, rewardP50 = kNoValue;
  double rewardP75 = kNoValue, rewardP90 = kNoValue;
  double currentValue = 0; // f(x) as the optimiser used it
  std::optional<double> centerReward;
  CompileStats compile;
  bool skipped = false; // no update (too few candidates compiled)
  size_t usedRewards = 0;
  size_t droppedPairs = 0;
  double gradientNorm = 0;
  double stepNorm = 0;
  // The optimiser's own diagnostics, one per es::optimizerStepColumns()
  // (unset where this optimiser reports none).
  std::vector<std::optional<double>> optimizerColumns;
  double secondsEvaluate = 0;
  double secondsUpdate = 0;
};
const ColumnTable<EsStep>& esStepColumns();

// What a caller sees after every step (for the terminal progress line).
struct EsProgress : StepProgress {
  EsStep record;
  double evaluationsPerSecond = 0;
};

struct EsTrainerSummary : LoopSummary {
  std::vector<EsStep> steps; // of this invocation
  CompileStats compiles;     // summed over them
  int64_t skippedSteps = 0;
  double finalMeanReward = 0;
};

class EsTrainer : public Trainer<EsTrainer, EsTrainerOptions> {
public:
  using ProgressCallback = std::function<CallbackAction(const EsProgress&)>;

  // Runs until the run's steps are done, `stopAfter` steps are done in this
  // call, or `progress` asks to stop.
  Expected<EsTrainerSummary> run(const ProgressCallback& progress = {},
                                 std::optional<int64_t> stopAfter = std::nullopt);

private:
  friend class Trainer<EsTrainer, EsTrainerOptions>;
  EsTrainer() = default;
  static std::unique_ptr<TrainingAlgorithm> makeAlgorithm(const EsTrainerOptions& options,
                                                          evaluators::Scorer* scorer);
};

} // namespace mlgo::training
