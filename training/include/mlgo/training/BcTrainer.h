// bc-train's engine: behavioural cloning of LLVM's inlining heuristic, the
// warm start of ml-compiler-opt's pipeline (corpus → default trace +
// vocabulary → BC → PPO or ES).
//
// The data are trace files (mlgo-eval run heuristic CORPUS --trace t.h5), or
// a corpus whose heuristic decisions are recorded first. The label of every
// decision is `inlining_default`, the heuristic's own answer. The MLP does
// not read that feature (it is excluded from its inputs), so it has to learn
// the heuristic from the other features.
//
// Modules, not decisions, are split into training and held-out sets
// (seeded): decisions of one module are correlated, and a policy is judged on
// code it has not seen. Each epoch (a step of the TrainingLoop) makes one
// pass over the training decisions in a seeded order (rl::bcEpoch), then
// measures loss and agreement with the heuristic (accuracy) on both sets;
// the best policy is the one with the best held-out agreement. The final
// policy is saved as a policy file that es-train and ppo-train start from
// (--initial-policy).
#pragma once

#include "mlgo/evaluators/Scorer.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/rl/Losses.h"
#include "mlgo/rl/Network.h"
#include "mlgo/rl/Updates.h"
#include "mlgo/support/Expected.h"
#include "mlgo/training/Options.h"
#include "mlgo/training/StepColumns.h"
#include "mlgo/training/Trainer.h"
#include "mlgo/training/TrainingLoop.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace mlgo::training {

struct BcTrainerOptions {
  // --- data -----------------------------------------------------------------
  // Trace files whose decisions are cloned (only modules with status "ok").
  std::vector<std::filesystem::path> traces;
  // A corpus whose heuristic decisions are recorded first (every module,
  // in parallel) and used like one more trace.
  std::optional<std::filesystem::path> corpus;
  // Where that recording is written; unset: beside the run file, as
  // <output stem>.trace.h5. A resumed run reuses it instead of recompiling.
  std::optional<std::filesystem::path> recordedTrace;
  // Share of the modules (by name, over all traces) held out to measure
  // agreement on code the policy never trained on; 0: none. With at least two
  // modules, at least one is held out and one trained on.
  double heldoutFraction = 0.2;
  // What the policy imitates: the heuristic's decision at each point
  // (inlining_default), or the action the trace's policy took there — with
  // a trace of a flip-set policy from `mlgo-eval search`, the searched
  // decisions (imitation of search, as ml-compiler-opt's later inliner
  // models were trained). A recorded corpus (above) has the heuristic's
  // actions either way.
  bool imitateActions = false;
  // With imitateActions: how much a decision whose label differs from the
  // heuristic's counts in the loss, against 1 for the others. Searched
  // labels differ at ~0.3 % of decisions; without weight the loss is spent
  // on copying -Oz.
  double deviationWeight = 1;
  // Cost-sensitive labels: each decision weighs as many bytes as its
  // module row's size differs from its baseline (at least outcomeWeightFloor).
  // Meant for traces of tried decisions (`mlgo-eval search --tried`), whose
  // rows are one flip each: a label that saved or cost 500 bytes then counts
  // 500 times one that changed 1 byte, so the loss is the bytes a wrong
  // decision would cost, not the share of decisions it gets wrong. Rows
  // without a baseline are skipped.
  bool outcomeWeights = false;
  double outcomeWeightFloor = 1;
  // Distillation: each recorded decision is labelled with what this policy
  // (the teacher, e.g. a wide ensemble) decides on its features, so that a
  // small network learns to decide as the teacher does on the traces'
  // states. The teacher reads its features from the traces by name.
  // Excludes imitateActions and outcomeWeights (the label is the teacher's).
  std::optional<std::filesystem::path> teacher;

  // PPO's network by default (ppo_nn_agent.gin: 40, 40, 20, ReLU), so the
  // cloned policy warm-starts ppo-train as it is. (ml-compiler-opt's own BC
  // config uses (40, 20) with dropout, which the MLP does not have.) The
  // vocabulary, when not given, is built from the training decisions only.
  // BC starts from random weights: initialPolicy must be unset.
  PolicyStartOptions policy = policyStartOptions(rl::ppoNetworkDefaults());
  // Adam, mini-batches, L2 (behavioral_cloning_nn_agent.gin).
  rl::BcUpdateOptions update;
  // Steps are epochs: passes over the training decisions.
  RunOptions run = runOptions("results/bc-run.h5", "results/bc-policy.json");

  Status validate() const; // names the bad field
  // bc-train's flags: Data (traces, a corpus to record, weights), Policy,
  // Optimiser, Run.
  static const OptionSchema<BcTrainerOptions>& schema();
};

// One epoch, as the run file's /steps records it (bcStepColumns()).
struct BcEpoch {
  rl::BcEpochStats update;
  rl::ClassificationStats train;
  rl::ClassificationStats heldout; // no rows without held-out modules
  double secondsTrain = 0;
  double secondsEvaluate = 0;
};
const ColumnTable<BcEpoch>& bcStepColumns();

struct BcProgress : StepProgress {
  BcEpoch record;
};

struct BcTrainerSummary : LoopSummary {
  std::vector<BcEpoch> epochs; // of this invocation
  size_t trainingModules = 0;
  size_t heldoutModules = 0;
  size_t trainingDecisions = 0;
  size_t heldoutDecisions = 0;
  double finalTrainAccuracy = 0;
  std::optional<double> finalHeldoutAccuracy;
  // The held-out agreement of always answering the held-out majority label:
  // what the accuracy has to beat.
  std::optional<double> heldoutMajorityAccuracy;
  std::optional<double> bestHeldoutAccuracy;
  int64_t bestEpoch = -1; // epochs completed at the best held-out accuracy
};

class BcTrainer : public Trainer<BcTrainer, BcTrainerOptions> {
public:
  using ProgressCallback = std::function<CallbackAction(const BcProgress&)>;

  // With a scorer, which records options.corpus's heuristic decisions when no
  // earlier recording can be reused.
  using Trainer::create;
  using Trainer::resume;
  // From trace files only: nothing is compiled.
  static Expected<BcTrainer> create(BcTrainerOptions options) {
    return open(std::move(options), nullptr, false);
  }
  static Expected<BcTrainer> resume(BcTrainerOptions options) {
    return open(std::move(options), nullptr, true);
  }

  // Runs until the run's epochs are done (then writes the policy file),
  // `stopAfter` epochs are done in this call, or `progress` asks to stop.
  Expected<BcTrainerSummary> run(const ProgressCallback& progress = {},
                                 std::optional<int64_t> stopAfter = std::nullopt);

private:
  friend class Trainer<BcTrainer, BcTrainerOptions>;
  BcTrainer() = default;
  static std::unique_ptr<TrainingAlgorithm> makeAlgorithm(const BcTrainerOptions& options,
                                                          evaluators::Scorer* scorer);
};

} // namespace mlgo::training
