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
// code it has not seen. Each epoch makes one pass over the training decisions
// in a seeded order, minimising the mean cross-entropy of mini-batches with
// Adam, then measures loss and agreement with the heuristic (accuracy) on
// both sets. Every epoch is a row of the run's HDF5 file, with a checkpoint;
// the final policy is saved as a policy file that es-train and ppo-train
// start from (--initial-policy).
#pragma once

#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/policies/Mlp.h"
#include "mlgo/results/RunFile.h"
#include "mlgo/rl/Adam.h"
#include "mlgo/rl/Network.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlgo::training {

struct BcTrainerOptions {
  // --- data -----------------------------------------------------------------
  // Trace files whose decisions are cloned (only modules with status "ok").
  std::vector<std::filesystem::path> traces;
  // A corpus whose heuristic decisions are recorded first (every module,
  // TBB-parallel) and used like one more trace.
  std::optional<std::filesystem::path> corpus;
  // Where that recording is written; unset: beside the run file, as
  // <output stem>.trace.h5. A resumed run reuses it instead of recompiling.
  std::optional<std::filesystem::path> recordedTrace;
  // Share of the modules (by name, over all traces) held out to measure
  // agreement on code the policy never trained on; 0: none. With at least two
  // modules, at least one is held out and one trained on.
  double heldoutFraction = 0.2;

  // --- policy ---------------------------------------------------------------
  // Vocabulary (.buckets directory); unset: built from the training
  // decisions' feature values with vocabularyQuantiles quantiles.
  std::optional<std::filesystem::path> vocabulary;
  int vocabularyQuantiles = 1000;
  // PPO's network by default (ppo_nn_agent.gin: 40, 40, 20, ReLU), so the
  // cloned policy warm-starts ppo-train as it is. (ml-compiler-opt's own BC
  // config uses (40, 20) with dropout, which the MLP does not have.)
  policies::MlpOptions mlp = rl::ppoNetworkDefaults();

  // --- optimiser (behavioral_cloning_nn_agent.gin) ---------------------------
  rl::AdamOptions adam = rl::mlCompilerOptAdam(1e-3);
  // Decisions per mini-batch (gin: batch_size = 64).
  size_t minibatchSize = 64;
  // L2 on the weight matrices: l2 · Σ w². Helps a small corpus generalise.
  double l2 = 0;

  // --- run ------------------------------------------------------------------
  int64_t epochs = 100;
  // Seeds the split, the initial weights and every epoch's order.
  uint64_t seed = 1;
  std::filesystem::path output = "results/bc-run.h5";
  // The final policy, for es-train / ppo-train --initial-policy and mlgo-eval.
  std::filesystem::path policyOutput = "results/bc-policy.json";
  // Policy snapshots in the run file every this many epochs (and at the end).
  int64_t snapshotInterval = 10;
  // For recording a corpus (workers also parallelise the loss evaluations).
  evaluators::EvaluatorOptions evaluator;
  std::string configToml;
  std::map<std::string, std::string, std::less<>> configValues;

  Status validate() const; // names the bad field
};

struct BcProgress {
  int64_t epoch = 0; // 0-based
  int64_t epochs = 0;
  double trainLoss = 0;
  double trainAccuracy = 0;
  std::optional<double> heldoutLoss;
  std::optional<double> heldoutAccuracy;
  double elapsedSeconds = 0;
  double etaSeconds = 0;
};

struct BcTrainerSummary {
  int64_t epochsRun = 0;   // in this invocation
  int64_t epochsTotal = 0; // including resumed ones
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
  double seconds = 0;
  std::filesystem::path output;
  std::optional<std::filesystem::path> policyOutput; // written when the run ended
};

class BcTrainer {
public:
  using ProgressCallback = std::function<void(const BcProgress&)>;

  static Expected<BcTrainer> create(BcTrainerOptions options);
  // Continues the run in options.output from its checkpoint; the options must
  // be the run's own (bc-train --resume reads them from the file).
  static Expected<BcTrainer> resume(BcTrainerOptions options);

  BcTrainer(BcTrainer&&) noexcept;
  BcTrainer& operator=(BcTrainer&&) noexcept;
  ~BcTrainer();

  // Runs until options.epochs are done, then writes options.policyOutput;
  // `stopAfter` limits this call to that many epochs.
  Expected<BcTrainerSummary> run(const ProgressCallback& progress = {},
                                 std::optional<int64_t> stopAfter = std::nullopt);

  const BcTrainerOptions& options() const;
  const results::RunRecord& record() const;
  const policies::MlpPolicy& policy() const;

private:
  struct Impl;
  explicit BcTrainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace mlgo::training
